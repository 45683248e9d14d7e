/*
 * usdt.c - e2e target with USDT probes (<sys/sdt.h>, provider "ubt").
 *
 * For i in 0..N-1 (N = argv[1], default 8; 0 runs until killed, one
 * iteration every 10 ms) it fires
 *   ubt:io_start(i, 512 * i, "read"/"write")   ints, a pointer
 *   ubt:widths(c, uc, s, us, i, ui, l, ul)     every width, signed and not
 *   ubt:consts(i, 42, -7)                      immediate operands
 *   ubt:global(g_counter, g_small)             rip-relative (-fPIE) or absolute
 *   ubt:stack(...)                             values spilled to the stack
 *   ubt:inlined(i)                             in a static inline function
 *                                              called from two places: two
 *                                              locations
 *   ubt:guarded(i)                             behind a semaphore (usdt_sem.c):
 *                                              fires only while a tracer holds it
 *   other:io_start(i)                          same name, another provider
 * and prints `sem <value>` of the semaphore whenever it changes when argv[2]
 * is "sem", then `done <sum>` at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>

#include "usdt_sem.h"

long g_counter;
short g_small = -3;
static volatile long sink;

static inline __attribute__((always_inline)) void inlined(long v)
{
	DTRACE_PROBE1(ubt, inlined, v);
	sink += v;
}

static __attribute__((noinline)) void spill(long a, long b, long c, long d, long e, long f,
					    long g, long h, long i, long j)
{
	/* enough live values that some operands end up on the stack */
	long x[10] = {a, b, c, d, e, f, g, h, i, j};
	for (int k = 0; k < 10; k++)
		x[k] = x[k] * (k + 1) + sink;
	DTRACE_PROBE10(ubt, stack, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 8;
	int show_sem = argc > 2 && !strcmp(argv[2], "sem");
	long sum = 0;
	int last_sem = -1;

	for (long i = 0; n == 0 || i < n; i++) {
		const char *name = i % 2 ? "write" : "read";
		DTRACE_PROBE3(ubt, io_start, (int)i, 512UL * i, name);
		signed char c = (signed char)-i;
		unsigned char uc = (unsigned char)(200 + i);
		short s = (short)(-1000 - i);
		unsigned short us = (unsigned short)(60000 + i);
		int si = (int)(-100000 - i);
		unsigned int ui = 4000000000u + (unsigned)i;
		long l = -5000000000L - i;
		unsigned long ul = 10000000000UL + i;
		DTRACE_PROBE8(ubt, widths, c, uc, s, us, si, ui, l, ul);
		DTRACE_PROBE3(ubt, consts, i, 42, -7);
		g_counter += 2;
		DTRACE_PROBE2(ubt, global, g_counter, g_small);
		spill(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9);
		inlined(i);
		if (i % 3 == 0)
			inlined(-i);
		guarded(i);
		DTRACE_PROBE1(other, io_start, i);
		if (show_sem && ubt_guarded_semaphore != last_sem) {
			last_sem = ubt_guarded_semaphore;
			printf("sem %u\n", (unsigned)last_sem);
			fflush(stdout);
		}
		sum += i;
		if (n == 0) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	printf("done %ld\n", sum + sink);
	return 0;
}
