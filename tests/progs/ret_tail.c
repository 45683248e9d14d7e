/*
 * ret_tail.c - e2e target for return probes on functions that end in a
 * tail call (gcc -O2 turns `return f(x + 1)` into `add $1,%rdi; jmp f`):
 * the callee returns straight to its caller's caller, through one return
 * slot for the whole chain.
 *
 *   ret_tail chain N    N times f1(i): f1 -> f2 -> ... -> f8, each a jmp
 *   ret_tail ljtail N   N times: lj_x longjmps out of the frame main
 *                       called it from, then lj_a (same frame, same return
 *                       slot) tail-calls lj_b
 *   ret_tail mixed N    N times f1(i) and lj_x, alternating with a call of
 *                       f5 alone: chains that start in the middle
 *   ret_tail nap N      prints `ready`, then N times f1(i) with f8 sleeping
 *                       100 ms: a tracer detaches while a whole chain is live
 *
 * Prints the sum of the results, so a run with probes shows whether any
 * return went astray.  RET_WAIT: print `ready` and wait for a line on
 * stdin first (tests/e2e/ret_same.py).
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile long sink;
static jmp_buf jb;
static int nap_us;

NOINLINE long f8(long x)
{
	sink += x;
	if (nap_us)
		usleep(nap_us);
	return x * 2;
}
NOINLINE long f7(long x) { return f8(x + 1); }
NOINLINE long f6(long x) { return f7(x + 1); }
NOINLINE long f5(long x) { return f6(x + 1); }
NOINLINE long f4(long x) { return f5(x + 1); }
NOINLINE long f3(long x) { return f4(x + 1); }
NOINLINE long f2(long x) { return f3(x + 1); }
NOINLINE long f1(long x) { return f2(x + 1); }

NOINLINE void lj_x(long x)
{
	sink += x;
	longjmp(jb, 1);
}

NOINLINE long lj_b(long x)
{
	sink += x;
	return x * 3;
}

NOINLINE long lj_a(long x) { return lj_b(x + 1); }

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "chain";
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	volatile long t = 0; /* kept across the longjmps */
	if (!strcmp(mode, "nap")) {
		printf("ready\n");
		fflush(stdout);
		nap_us = 100000;
	}
	if (getenv("RET_WAIT")) {
		printf("ready\n");
		fflush(stdout);
		getchar();
	}
	for (int i = 0; i < n; i++) {
		if (!strcmp(mode, "chain") || !strcmp(mode, "nap")) {
			t += f1(i);
		} else if (!strcmp(mode, "ljtail")) {
			if (!setjmp(jb))
				lj_x(i);
			t += lj_a(i);
		} else if (!strcmp(mode, "mixed")) {
			t += f1(i);
			if (!setjmp(jb))
				lj_x(i);
			t += f5(i) + lj_a(i);
		} else {
			fprintf(stderr, "unknown mode %s\n", mode);
			return 2;
		}
	}
	printf("%s %d: total %ld\n", mode, n, t);
	return 0;
}
