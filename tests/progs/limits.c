/*
 * limits.c - e2e/stress target for ubt's limits (tests/e2e/limits.test,
 * tests/stress/limits.py).
 *
 *   prog_limits_O2_pie many N      calls each of fn000 .. fn999 N times
 *                                  (1,000 probe sites), prints `many <sum>`
 *   prog_limits_O2_pie flood N [RATE]   calls f() N times as fast as it can
 *                                  (or RATE calls per second) and prints
 *                                  `flood N calls in T us ...` on stderr
 *   prog_limits_O2_pie flood-wait N [RATE]   prints `ready`, waits for SIGUSR1,
 *                                  floods as above, then waits for SIGTERM
 *                                  (so a tracer's memory can be measured)
 *   prog_limits_O2_pie bigstr N    builds a 1 MiB string and passes it to
 *                                  take_str(s, len) N times
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

/* 1,000 small functions that are never inlined: fn000 .. fn999 */
#define FN(n) __attribute__((noinline)) long fn##n(long x) { __asm__ volatile(""); return x + 1; }
#define F1(p) FN(p##0) FN(p##1) FN(p##2) FN(p##3) FN(p##4) FN(p##5) FN(p##6) FN(p##7) FN(p##8) FN(p##9)
#define F2(p) F1(p##0) F1(p##1) F1(p##2) F1(p##3) F1(p##4) F1(p##5) F1(p##6) F1(p##7) F1(p##8) F1(p##9)
F2(0) F2(1) F2(2) F2(3) F2(4) F2(5) F2(6) F2(7) F2(8) F2(9)

#define A1(p) fn##p##0, fn##p##1, fn##p##2, fn##p##3, fn##p##4, fn##p##5, fn##p##6, fn##p##7, fn##p##8, fn##p##9,
#define A2(p) A1(p##0) A1(p##1) A1(p##2) A1(p##3) A1(p##4) A1(p##5) A1(p##6) A1(p##7) A1(p##8) A1(p##9)
static long (*const fns[1000])(long) = {
	A2(0) A2(1) A2(2) A2(3) A2(4) A2(5) A2(6) A2(7) A2(8) A2(9)
};

volatile long sink;

__attribute__((noinline)) void take_str(const char *s, long len)
{
	sink = (long)s + len;
}

static volatile sig_atomic_t go, stop;

static void on_usr1(int sig)
{
	go = 1;
}

static void on_term(int sig)
{
	stop = 1;
}

static long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* n calls of f(), paced to `rate` calls per second (0: as fast as it can) */
static void flood(long n, long rate)
{
	unsigned long sum = 0;
	long t0 = now_us();
	for (long i = 0; i < n; i++) {
		if (rate && i % 100 == 0)
			while ((now_us() - t0) * rate < i * 1000000L)
				;
		sum += (unsigned int)f((int)i);
	}
	long t1 = now_us();
	/* on stderr: a tracer's output on stdout must not be cut by this line */
	fprintf(stderr, "flood %ld calls in %ld us checksum %lu\n", n, t1 - t0, sum);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "many";
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 1;

	if (!strcmp(mode, "many")) {
		long sum = 0;
		for (long r = 0; r < n; r++)
			for (int i = 0; i < 1000; i++)
				sum += fns[i](i);
		printf("many %ld\n", sum);
	} else if (!strcmp(mode, "flood")) {
		flood(n, argc > 3 ? strtol(argv[3], NULL, 0) : 0);
	} else if (!strcmp(mode, "flood-wait")) {
		signal(SIGUSR1, on_usr1);
		signal(SIGTERM, on_term);
		printf("ready\n");
		fflush(stdout);
		while (!go)
			pause();
		flood(n, argc > 3 ? strtol(argv[3], NULL, 0) : 0);
		while (!stop)
			pause();
	} else if (!strcmp(mode, "bigstr")) {
		long len = 1 << 20;
		char *s = malloc(len + 1);
		for (long i = 0; i < len; i++)
			s[i] = 'a' + i % 26;
		s[len] = 0;
		for (long i = 0; i < n; i++)
			take_str(s, len);
		printf("bigstr %ld\n", n);
		free(s);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
