/*
 * threads2.c - e2e target for `ubt -p PID`: two worker threads that call
 * f() (tests/progs/f.c) an exact number of times, on command.
 *
 *   prog_threads2_O2_pie N
 *
 * 1. Blocks SIGUSR1/SIGTERM/SIGINT in every thread, starts two workers that
 *    wait for "go", prints `ready <pid> f=<addr> bytes=<first 16 bytes of f>`.
 * 2. On SIGUSR1 ("go"): each worker calls f exactly N times; when both are
 *    done main prints `done <2N> sum=<sum of results>`.  Further SIGUSR1s
 *    run another round (the total grows by 2N each time).
 * 3. On SIGTERM or SIGINT: prints `bytes=<first 16 bytes of f>` and
 *    `exit`, and exits 0.  A test compares these bytes with the ones
 *    printed at start to check that detaching restored the code of f.
 *
 * The workers exist (blocked in a futex wait) before the tracer attaches,
 * so attaching has to stop and handle three threads; no call to f happens
 * before "go", so a probe attached before "go" must count exactly 2N.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

#define NWORKERS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long round_go;            /* rounds started by main */
static int ndone;                /* workers finished with the current round */
static long calls_per_round;
static unsigned long sums[NWORKERS];

static void print_bytes(const char *prefix)
{
	const unsigned char *p = (const unsigned char *)(void *)f;

	printf("%s", prefix);
	for (int i = 0; i < 16; i++)
		printf("%02x", p[i]);
	printf("\n");
	fflush(stdout);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	long seen = 0;

	for (;;) {
		pthread_mutex_lock(&lock);
		while (round_go == seen)
			pthread_cond_wait(&cond, &lock);
		seen = round_go;
		pthread_mutex_unlock(&lock);

		unsigned long sum = 0;
		for (long i = 0; i < calls_per_round; i++)
			sum += (unsigned int)f((int)i);

		pthread_mutex_lock(&lock);
		sums[id] += sum;
		ndone++;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NWORKERS];
	sigset_t set;
	long total = 0;
	int sig;

	calls_per_round = argc > 1 ? strtol(argv[1], NULL, 0) : 1000000;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (long i = 0; i < NWORKERS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
			fprintf(stderr, "threads2: pthread_create failed\n");
			return 1;
		}

	printf("ready %d f=%p ", (int)getpid(), (void *)f);
	print_bytes("bytes=");

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig != SIGUSR1)
			break;
		pthread_mutex_lock(&lock);
		ndone = 0;
		round_go++;
		pthread_cond_broadcast(&cond);
		while (ndone < NWORKERS)
			pthread_cond_wait(&cond, &lock);
		unsigned long sum = sums[0] + sums[1];
		pthread_mutex_unlock(&lock);
		total += NWORKERS * calls_per_round;
		printf("done %ld sum=%lu\n", total, sum);
		fflush(stdout);
	}
	print_bytes("bytes=");
	printf("exit\n");
	fflush(stdout);
	return 0;
}
