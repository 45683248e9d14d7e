/*
 * hot.c - e2e target for profile probes: threads that burn CPU time in
 * hot_spin(), so samples must land there.
 *
 *   prog_hot_O2_pie MS [THREADS] [wait]
 *
 * Each of THREADS threads (default 1) calls hot_spin() until it has used
 * MS ms of its own CPU time, sleeping 20 us (nanosleep) between calls and
 * counting sleeps that failed with EINTR.  main prints `eintr <count>` and
 * `result <checksum of hot_spin's results>`, then exits with status 7.
 * With `wait`: prints `ready <pid>` first and, after the threads are done,
 * keeps spinning until SIGTERM; then prints the process's SigCgt and the
 * number of entries in /proc/self/timers (`sigcgt <hex> timers <n>`), so a
 * test sees what a tracer left behind after it detached, and exits 7.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long ms_each;
static volatile sig_atomic_t stop;
static unsigned long results[64];
static long eintrs[64];

__attribute__((noinline)) unsigned long hot_spin(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < 200000; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

static double thread_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long sum = 0, n = 0;
	while (thread_ms() < ms_each) {
		sum += hot_spin(n++) & 0xff;
		struct timespec d = {0, 20000};
		if (nanosleep(&d, NULL) && errno == EINTR)
			eintrs[id]++;
	}
	results[id] = sum ? 1 : 0;
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	ms_each = argc > 1 ? atol(argv[1]) : 100;
	long nth = argc > 2 ? atol(argv[2]) : 1;
	int wait = argc > 3 && !strcmp(argv[3], "wait");
	if (nth < 1 || nth > 64)
		nth = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wait) {
		signal(SIGTERM, on_term);
		printf("ready %d\n", (int)getpid());
	}
	pthread_t t[64];
	for (long i = 0; i < nth; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	long e = 0, r = 0;
	for (long i = 0; i < nth; i++) {
		pthread_join(t[i], NULL);
		e += eintrs[i];
		r += (long)results[i];
	}
	printf("eintr %ld\nresult %ld\n", e, r);
	if (wait) {
		unsigned long x = 0;
		while (!stop)
			x += hot_spin(x) & 1;
		char line[256], cgt[64] = "?";
		FILE *f = fopen("/proc/self/status", "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigCgt:", 7))
				sscanf(line + 7, "%63s", cgt);
		if (f)
			fclose(f);
		int timers = 0;
		f = fopen("/proc/self/timers", "r");
		while (f && fgets(line, sizeof(line), f))
			timers += !strncmp(line, "ID:", 3);
		if (f)
			fclose(f);
		printf("sigcgt %s timers %d\n", cgt, timers);
	}
	return 7;
}
