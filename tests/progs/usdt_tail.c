/*
 * usdt_tail.c - e2e target: a USDT probe as the last statement of a
 * function (tests/e2e/usdt_tail.test).  gcc -O2 puts its nop just before
 * the `ret`, so the 5 bytes of a jump reach past the function's end into
 * the alignment fill before the next function: code reached only by a
 * jump, which the patch may cover where it is nops nobody executes
 * (src/attach/arch/x86_64/mid.c).
 *
 * For i in 0..N-1 (N = argv[1], default 10) it fires tail:fin(i, 3i) and
 * prints `done <sum>`; N < 0: prints `ready` and fires until killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

static volatile long sink;

static __attribute__((noinline)) void fin(long i)
{
	sink += i;
	DTRACE_PROBE2(tail, fin, i, 3 * i);
}

static __attribute__((noinline)) long next(long i) { return sink * 2 + i; }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long sum = 0;

	if (n < 0) { /* until killed, for tests that attach to it running */
		printf("ready\n");
		fflush(stdout);
		for (long i = 0;; i++) {
			fin(i);
			usleep(100);
		}
	}
	for (long i = 0; i < n; i++) {
		fin(i);
		sum += next(i);
	}
	printf("done %ld\n", sum);
	return 0;
}
