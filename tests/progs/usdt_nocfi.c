/*
 * usdt_nocfi.c - e2e target: a USDT probe just before a function's ret,
 * followed directly (no alignment) by an assembly function with no symbol
 * in the stripped file and no CFI, whose first bytes are nops
 * (tests/e2e/usdt_nocfi.test).  The bytes after the ret look like
 * alignment fill, but the program calls into them: a jump over the probe's
 * nop and the ret that extends over them sends every call of nocfi() into
 * the middle of the jump.
 *
 * For i in 0..N-1 (N = argv[1], default 1000): tail(i) fires t:tail(i),
 * then y += nocfi(i) (i + 1); it prints y.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

volatile long sink;
long nocfi(long x);

__attribute__((noinline)) void tail(long x)
{
	sink = x;
	DTRACE_PROBE1(t, tail, x);
}

/* right after tail()'s ret (-fno-toplevel-reorder keeps the order) */
__asm__(".text\n"
	".p2align 0\n"
	".globl nocfi\n"
	".hidden nocfi\n"
	"nocfi:\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tlea 1(%rdi),%rax\n"
	"\tret\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, y = 0;

	for (long i = 0; i < n; i++) {
		tail(i);
		y += nocfi(i);
	}
	printf("y %ld\n", y);
	return 0;
}
