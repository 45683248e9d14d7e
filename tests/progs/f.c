/*
 * f.c - the probed function of the e2e target programs (loop, threads2).
 *
 * It lives in its own translation unit so that the compiler cannot inline
 * it into its callers, whatever the optimisation level: every call in the
 * source is a real call the tracer can count.  At -O2 it compiles to
 * `lea (%rdi,%rdi,2),%eax; add bias(%rip),%eax; ret`, so the first 5
 * bytes split a RIP-relative instruction and the relocator has real work.
 */
#include "progs.h"

int bias = 1;

__attribute__((noinline)) int f(int x)
{
	return x * 3 + bias;
}
