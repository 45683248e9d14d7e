/*
 * hammer.c - stress target: worker threads call f() in endless loops and
 * check every result (f(x) == 3x + 1), so a corrupted register, a wrong
 * relocation or a half-written patch shows up as a wrong value, not as
 * silence.  Used by tests/stress/stress.py for attach/detach cycles and
 * for killing ubt while it is attached.
 *
 *   prog_hammer_O2_pie THREADS
 *
 * Prints `ready <pid> f=<address of f>` when the workers run.  On SIGTERM
 * prints `calls <n> bad <n>` and exits 0 (1 if any result was wrong).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "progs.h"

static volatile long bad;
static volatile int stop;
static long counts[64];

static void *worker(void *arg)
{
	long id = (long)arg, n = 0;
	for (int x = 0; !stop; x = (x + 1) & 0xffff, n++)
		if (f(x) != 3 * x + 1)
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	counts[id] = n;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[64];
	sigset_t set;
	int sig;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 2;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	printf("ready %d f=%p\n", getpid(), (void *)f);
	fflush(stdout);
	sigwait(&set, &sig);
	stop = 1;
	long total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += counts[i];
	}
	printf("calls %ld bad %ld\n", total, bad);
	return bad ? 1 : 0;
}
