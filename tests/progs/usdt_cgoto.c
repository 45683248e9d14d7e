/*
 * usdt_cgoto.c - e2e target: a USDT probe in a function dispatching
 * through a computed goto (tests/e2e/usdt_cgoto.test), built as a static
 * PIE.  The label table holds absolute addresses, which the program
 * relocates itself after its entry point, where `ubt -c` stops it; the
 * probe's nop falls through into label L2, a target of the table, so a
 * jump patched over the nop would send the table's L2 entry into the
 * middle of it.
 *
 * For i in 0..N-1 (N = argv[1], default 1000), y = one((7i) % 5, y);
 * one() fires cg:one(y) for op 1; it prints the final y.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

static __attribute__((noinline)) long one(unsigned char op, long y)
{
	static const void *tbl[256] = {
	    [0] = &&Ldef, [1] = &&L1, [2] = &&L2, [3] = &&L3, [4 ... 255] = &&Ldef,
	};

	goto *tbl[op];
L1:
	DTRACE_PROBE1(cg, one, y);
L2:
	y += 3;
	return y;
L3:
	return y * 5;
Ldef:
	return y ^ 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, y = 0;

	for (long i = 0; i < n; i++)
		y = one((unsigned char)((i * 7) % 5), y);
	printf("y %ld\n", y);
	return 0;
}
