/*
 * usdt_switch.c - e2e target: USDT probes in functions that dispatch
 * through a switch's jump table (tests/e2e/usdt_switch.test).  gcc -O2
 * compiles op()'s dense switch to `cmp $7; ja; lea T(%rip); movslq;
 * add; jmp *%rax` (PIE) or `jmp *T(,%rax,8)` (non-PIE); the planner
 * recovers the table and its 8 targets (src/attach/arch/x86_64/jtab.c), so
 * the sites, one at the top and one in several cases, take jumps instead
 * of breakpoints.
 *
 * For i in 0..N-1 (N = argv[1], default 16) it calls op(i % 9, i) and
 * fires sw:top(k) once per call and sw:caseK(v) in cases 0, 2, 5, 7, then
 * prints `done <sum>`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

static volatile long sink;

static __attribute__((noinline)) long op(unsigned k, long v)
{
	DTRACE_PROBE1(sw, top, k);
	sink += k;
	switch (k) {
	case 0:
		DTRACE_PROBE1(sw, case0, v);
		sink += v * 7;
		return sink ^ 3;
	case 1:
		return v + sink * 5;
	case 2:
		DTRACE_PROBE1(sw, case2, v);
		sink -= v;
		return sink * 11;
	case 3:
		return v * 13 - sink;
	case 4:
		sink ^= v;
		return v << 3;
	case 5:
		DTRACE_PROBE1(sw, case5, v);
		sink += 17;
		return sink - v;
	case 6:
		return sink / (v + 1);
	case 7:
		DTRACE_PROBE1(sw, case7, v);
		sink |= v;
		return sink + 19;
	default:
		return -1;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 16;
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += op((unsigned)(i % 9), i);
	printf("done %ld\n", sum);
	return 0;
}
