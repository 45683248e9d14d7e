/*
 * reentry.c - four threads doing malloc/memcpy/mutex/free in a loop, for
 * probes on those libc functions with printf: probe code must neither
 * recurse into itself nor deadlock (built with -fno-builtin so every call
 * really reaches libc).
 *
 *   prog_reentry N   each thread does N rounds; prints `sum <n> total <n>`
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total, rounds;

static void *worker(void *arg)
{
	long s = 0;
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		char *p = malloc(64 + (i & 63));
		memcpy(p, "hello world", 12);
		pthread_mutex_lock(&lock);
		total += p[4];
		pthread_mutex_unlock(&lock);
		s += (long)strlen(p);
		free(p);
	}
	return (void *)s;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	long sum = 0;
	rounds = argc > 1 ? atol(argv[1]) : 1000;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("sum %ld total %ld\n", sum, total);
	return 0;
}
