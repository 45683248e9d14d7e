/*
 * count.c - benchmark target: the cost of a probe on a hot function.
 *
 *   count THREADS CALLS_PER_ROUND [ROUNDS [PAUSE_MS]]
 *
 * Each of THREADS threads loops in rounds (forever when ROUNDS is 0 or
 * absent): it calls f CALLS_PER_ROUND times, then its twin g as many times
 * (the order alternates from round to round), timing each loop with its own
 * CPU clock (CLOCK_THREAD_CPUTIME_ID, so time the thread spent preempted
 * does not count), and prints one line per round:
 *
 *   round <thread> <start> <end> <f ns/call> <g ns/call>
 *
 * <start> and <end> are CLOCK_MONOTONIC ns, so a driver (bench/run.py)
 * knows whether a tracer was attached during the whole round.  With a
 * probe on f only, f - g in the same round is the probe's cost per hit.
 * At start it prints `ready <pid>`; SIGTERM or SIGINT end it.  PAUSE_MS
 * makes each thread sleep that long between rounds, so a tracer that
 * streams events (printf) can drain its rings and the round measures what
 * recording an event costs rather than what dropping one costs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int f(int x);
int g(int x);
#ifdef BENCH_CALL
/* the stack and usym benchmarks reach f and g through their own code */
int bench_call(int (*fn)(int), int x);
#define CALL(fn, x) bench_call(fn, x)
#else
#define CALL(fn, x) fn(x)
#endif

static long calls;
static long rounds;
static long pause_ms;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU ns per call of fn over `calls` calls */
static double time_loop(int (*fn)(int))
{
	unsigned long s = 0;
	long long t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	for (long i = 0; i < calls; i++)
		s += (unsigned int)CALL(fn, (int)i);
	long long t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sink += s;
	return (double)(t1 - t0) / (double)calls;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;

	for (long r = 0; rounds == 0 || r < rounds; r++) {
		double tf, tg;
		long long start = clock_ns(CLOCK_MONOTONIC);

		if (r & 1) {
			tg = time_loop(g);
			tf = time_loop(f);
		} else {
			tf = time_loop(f);
			tg = time_loop(g);
		}
		long long end = clock_ns(CLOCK_MONOTONIC);
		pthread_mutex_lock(&out_lock);
		printf("round %d %lld %lld %.3f %.3f\n", id, start, end, tf, tg);
		fflush(stdout);
		pthread_mutex_unlock(&out_lock);
		if (pause_ms) {
			struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: count THREADS CALLS_PER_ROUND [ROUNDS [PAUSE_MS]]\n");
		return 1;
	}
	int nthreads = atoi(argv[1]);
	calls = atol(argv[2]);
	rounds = argc > 3 ? atol(argv[3]) : 0;
	pause_ms = argc > 4 ? atol(argv[4]) : 0;
	if (nthreads < 1 || nthreads > 64 || calls < 1) {
		fprintf(stderr, "count: bad arguments\n");
		return 1;
	}

	pthread_t th[64];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
			fprintf(stderr, "count: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
