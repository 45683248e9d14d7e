/*
 * symlib.c - libubtsym.so, the shared library of the symbol and stack e2e
 * tests (tests/e2e/lib*.test, sym*.test, stack*.test).  The program
 * prog_sym_* calls sym_lib_work(), which calls sym_lib_leaf(): probes on
 * a library function by path, by name (`uprobe:ubtsym:sym_lib_leaf`) and
 * by wildcard, and stacks that cross from the program into the library.
 */
#include "symlib.h"

volatile int sym_lib_sink;

__attribute__((noinline)) int sym_lib_leaf(int x)
{
	sym_lib_sink += x;
	return x + 1;
}

__attribute__((noinline)) int sym_lib_work(int x)
{
	int r = sym_lib_leaf(x) * 2;
	sym_lib_sink += r;
	return r;
}
