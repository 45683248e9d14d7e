/*
 * target_threads.c - a target for tests/unit/attach: test_attach stops it,
 * runs system calls inside it and lets it go, then checks from its exit
 * status and last line that nothing it was doing noticed.
 *
 * Default mode: two threads spin in hot loops, one thread is blocked in
 * read() on a pipe and the main thread sleeps 600 ms in clock_nanosleep.
 * After the sleep, main checks that the sleep lasted its full time and
 * returned 0, that the spinners still make progress, and that the reader
 * gets the byte main writes.  It prints the addresses test_attach compares
 * with what elfsym.c computes.  "hold" mode: the same, but after the sleep
 * main also waits for EOF on stdin before it checks and ends, so that the
 * test decides when it may end, however slowly it ran.
 *
 * "churn" mode: a spawner thread creates short-lived threads until stdin
 * reaches EOF, so that stopping races with clone and thread exit, while
 * test_attach sends it real-time signals (queued, so none may go missing:
 * the count is printed at the end).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

volatile int tt_marker = 1234;
static volatile unsigned long counters[2];
static volatile pid_t worker_tids[2], reader_tid;
static volatile int stop;
static volatile sig_atomic_t usr1_count;
static volatile int rt_count;
static int pipefd[2];
static ssize_t reader_ret = -2;
static char reader_byte;

__attribute__((noinline)) unsigned long tt_work(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static void on_usr1(int sig)
{
	usr1_count++;
}

static void *spin(void *arg)
{
	long i = (long)arg;
	worker_tids[i] = (pid_t)syscall(SYS_gettid);
	unsigned long sink = 0;
	while (!stop) {
		sink += tt_work(sink);
		counters[i]++;
	}
	return (void *)sink;
}

static void *reader(void *arg)
{
	reader_tid = (pid_t)syscall(SYS_gettid);
	reader_ret = read(pipefd[0], &reader_byte, 1);
	return NULL;
}

static long ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

static void on_rt(int sig)
{
	__atomic_fetch_add(&rt_count, 1, __ATOMIC_RELAXED);
}

static void *short_lived(void *arg)
{
	return arg;
}

static void *spawner(void *arg)
{
	unsigned long n = 0;
	while (!stop) {
		pthread_t th;
		if (pthread_create(&th, NULL, short_lived, NULL) == 0) {
			if (n % 2)
				pthread_detach(th);
			else
				pthread_join(th, NULL);
			n++;
		}
	}
	return (void *)n;
}

static int churn(void)
{
	pthread_t sp, w;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	pthread_create(&sp, NULL, spawner, NULL);
	pthread_create(&w, NULL, spin, (void *)0);
	while (!worker_tids[0])
		usleep(1000);
	printf("ready pid=%d worker=%d\n", getpid(), (int)worker_tids[0]);
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0)
		;
	stop = 1;
	void *n;
	pthread_join(sp, &n);
	pthread_join(w, NULL);
	usleep(50 * 1000); /* a handler may still be running in a thread */
	printf("churn done created=%lu rt=%d\n", (unsigned long)n, rt_count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "churn") == 0)
		return churn();

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(pipefd) < 0)
		return 10;
	pthread_t th[3];
	pthread_create(&th[0], NULL, spin, (void *)0);
	pthread_create(&th[1], NULL, spin, (void *)1);
	pthread_create(&th[2], NULL, reader, NULL);
	while (!worker_tids[0] || !worker_tids[1] || !reader_tid)
		usleep(1000);

	printf("ready pid=%d reader=%d worker=%d main=%p work=%p getpid=%p marker=%p\n", getpid(),
	       (int)reader_tid, (int)worker_tids[0], (void *)main, (void *)tt_work,
	       dlsym(RTLD_DEFAULT, "getpid"), (void *)&tt_marker);
	fflush(stdout);

	/* hold: 3 s, time enough for the test to see it asleep on a loaded machine */
	int hold = argc > 1 && strcmp(argv[1], "hold") == 0;
	long sleep_ms = hold ? 3000 : 600;
	struct timespec t0, req = {sleep_ms / 1000, sleep_ms % 1000 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int sleep_rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
	long slept = ms_since(&t0);

	if (hold) {
		char c;
		while (read(0, &c, 1) > 0)
			;
	}
	/* the spinners run on: wait for both to move (up to 20 s on a loaded machine) */
	unsigned long c0 = counters[0], c1 = counters[1];
	int progress = 0;
	for (int i = 0; i < 20000 && !progress; i++) {
		usleep(1000);
		progress = counters[0] > c0 && counters[1] > c1;
	}

	if (write(pipefd[1], "x", 1) != 1)
		return 11;
	pthread_join(th[2], NULL);
	stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);

	printf("done sleep_rc=%d slept_ok=%d reader=%zd/%c progress=%d usr1=%d\n", sleep_rc,
	       slept >= sleep_ms, reader_ret, reader_ret == 1 ? reader_byte : '-', progress,
	       (int)usr1_count);
	int ok = sleep_rc == 0 && slept >= sleep_ms && reader_ret == 1 && reader_byte == 'x' && progress;
	return ok ? 0 : 1;
}
