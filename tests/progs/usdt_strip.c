/*
 * usdt_strip.c - e2e target: USDT probes in a program built -O2 and
 * stripped (-s: no .symtab, as Debian ships its programs), so that the
 * bounds of the functions around the probe sites come from .eh_frame only
 * (src/elf/bounds.c).  Every site has ordinary code after it and no other
 * site within the 5 bytes of a jump, so each one can take a jump once its
 * function's bounds are known (tests/e2e/usdt_strip.test).
 *
 * For i in 0..N-1 (N = argv[1], default 8) it fires
 *   strip:loop(i, N)        in main's loop
 *   strip:step(i)           at the start of a function called from the loop
 *   strip:third(i)          when i is a multiple of 3
 * and prints `done <sum>` at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

static volatile long sink;

static __attribute__((noinline)) long step(long i)
{
	DTRACE_PROBE1(strip, step, i);
	sink += i * 3;
	sink ^= i;
	return sink;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 8;
	long sum = 0;

	for (long i = 0; i < n; i++) {
		DTRACE_PROBE2(strip, loop, i, n);
		sum += step(i);
		if (i % 3 == 0) {
			DTRACE_PROBE1(strip, third, i);
			sink += sum;
		}
	}
	printf("done %ld\n", sum);
	return 0;
}
