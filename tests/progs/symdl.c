/*
 * symdl.c - libubtdl.so: loaded by prog_sym_* with dlopen() only when asked
 * (`dlopen` argument), for the tests of probes on a library loaded after
 * ubt attached.
 */
#include "symlib.h"

volatile int sym_dl_sink;

__attribute__((noinline)) int sym_dl_func(int x)
{
	sym_dl_sink += x;
	return x * 5;
}
