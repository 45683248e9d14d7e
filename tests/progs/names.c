/*
 * names.c - e2e target whose symbols and USDT probes have the names that
 * are awkward to list and to paste back into a script (tests/e2e/list.test):
 *
 *   fn$            a `$` in a function name (gcc allows it)
 *   helper         two static functions of that name (here and in names2.c)
 *   twice          an IFUNC (its resolver picks twice_impl)
 *   heavy.part.0   the cold part gcc splits off heavy() at -O2 (partial
 *                  inlining); bpftrace leaves such parts out of listings
 *   test:"probe1"  a USDT probe whose name has quotes in it (bpftrace's own
 *                  test program usdt_quoted_probe has one)
 *   names:tick     an ordinary USDT probe
 *
 * `prog_names N` runs N rounds (0: until killed, one every 10 ms), printing
 * "ready" first and "done SUM" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

int names2_helper(int x);

static volatile int sink;

int __attribute__((noinline)) fn$(int x)
{
	return x + 1;
}

static int __attribute__((noinline)) helper(int x)
{
	sink += x;
	return x * 2;
}

static int twice_impl(int x)
{
	return x * 2;
}

static int (*resolve_twice(void))(int)
{
	return twice_impl;
}

int twice(int x) __attribute__((ifunc("resolve_twice")));

/* an early-return fast path and a large cold remainder: gcc -O2 inlines
 * the test into callers and calls heavy.part.0 for the rest */
static int heavy(int x)
{
	if (__builtin_expect(x == 0, 1))
		return 0;
	int s = 0;
	for (int i = 0; i < x; i++) {
		s += i * x;
		if (s % 7 == 3)
			fprintf(stderr, "x %d\n", s);
		sink = s;
	}
	for (int i = 0; i < x; i++) {
		s ^= i * 31;
		if (s % 11 == 3)
			fprintf(stderr, "y %d\n", s);
	}
	return s;
}

int __attribute__((noinline)) heavy_a(int x)
{
	return heavy(x) + 1;
}

int __attribute__((noinline)) heavy_b(int x)
{
	return heavy(x * 2) + 2;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3;
	long sum = 0;
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; n == 0 || i < n; i++) {
		int a = (int)i;
		DTRACE_PROBE1(test, "probe1", a);
		DTRACE_PROBE1(names, tick, a);
		sum += fn$(a) + helper(a) + names2_helper(a) + twice(a) + heavy_a(0) + heavy_b(0);
		if (n == 0) {
			struct timespec ts = {0, 10000000};
			nanosleep(&ts, NULL);
		}
	}
	printf("done %ld\n", sum);
	return 0;
}
