/*
 * sysload.c - e2e target of the system-call tracepoints
 * (tests/e2e/syscalls.test): a fixed workload of system calls through
 * libc's wrappers, the same on every run, so that counts under ubt and
 * under the kernel's tracepoints (bpftrace 0.17) can be compared.
 *
 *   prog_sysload_O2_pie N [T]
 *
 * Each of T threads (0: the main thread alone, which takes glibc's
 * single-threaded path; T > 0: the threads and not main, the
 * multi-threaded path with its cancellation points) makes, N times:
 * write(2) of 7 bytes to /dev/null, readv(2) of 100 + 28 bytes from
 * /dev/zero, and every fourth time a readv of 64 bytes, read(2) of 16
 * bytes from /dev/zero, epoll_wait(2) with no timeout on an empty set; then one nanosleep(2) of 1
 * ms (glibc makes it clock_nanosleep).  Then main prints `done` and exits 0.
 *
 *   prog_sysload_O2_pie N T FIFO
 *
 * For a tracer that attaches with -p (SPDK's syscalls.bt and readv.bt
 * through scripts/bpftrace.sh): makes FIFO, starts the T threads, prints
 * `ready`, and then makes the same workload once per byte written to FIFO,
 * printing `done R` after round R.  Between rounds every system call the
 * process makes is known: main read(2)s one byte from FIFO, hands each
 * thread its round with a 1-byte write(2) to its pipe, and read(2)s one
 * byte back from each; each thread read(2)s its pipe, works, and writes
 * one byte back.  Every wait is a read(2), which the kernel restarts after
 * a tracer stopped the thread (sigwaitinfo(2) or epoll_wait(2) would
 * return EINTR instead: docs/safety.md), so a tracer that attached while
 * the process waited counts the same calls as another.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long n;

static void *work(void *arg)
{
	(void)arg;
	char buf[128] = "sysload";
	int nul = open("/dev/null", O_WRONLY), zero = open("/dev/zero", O_RDONLY);
	int ep = epoll_create1(0);
	struct epoll_event ev;
	for (long i = 0; i < n; i++) {
		struct iovec two[2] = {{buf, 100}, {buf + 100, 28}}, one[1] = {{buf, 64}};
		if (write(nul, buf, 7) != 7 || readv(zero, two, 2) != 128)
			exit(1);
		if (i % 4 == 0 && readv(zero, one, 1) != 64)
			exit(1);
		if (read(zero, buf, 16) != 16)
			exit(1);
		if (epoll_wait(ep, &ev, 1, 0) != 0)
			exit(1);
	}
	struct timespec ms = {0, 1000000};
	nanosleep(&ms, NULL);
	close(ep);
	close(zero);
	close(nul);
	return NULL;
}

struct worker {
	int go[2];	/* main -> thread: one byte per round */
	int back;	/* thread -> main: one byte when the round is done */
};

static void *serve(void *arg)
{
	struct worker *w = arg;
	char c;

	while (read(w->go[0], &c, 1) == 1) {
		work(NULL);
		if (write(w->back, &c, 1) != 1)
			exit(1);
	}
	return NULL;
}

/* FIFO mode: a round per byte of the fifo, the calls between them fixed */
static int serve_rounds(int t, const char *fifo)
{
	struct worker w[16];
	int back[2], ctl;
	char c;

	if ((mkfifo(fifo, 0600) && errno != EEXIST) || (ctl = open(fifo, O_RDWR)) < 0 || pipe(back))
		return 1;
	for (int i = 0; i < t; i++) {
		pthread_t tid;
		w[i].back = back[1];
		if (pipe(w[i].go) || pthread_create(&tid, NULL, serve, &w[i]))
			return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (long r = 1; read(ctl, &c, 1) == 1; r++) {
		if (!t)
			work(NULL);
		for (int i = 0; i < t; i++)
			if (write(w[i].go[1], &c, 1) != 1)
				return 1;
		for (int i = 0; i < t; i++)
			if (read(back[0], &c, 1) != 1)
				return 1;
		printf("done %ld\n", r);
		fflush(stdout);
	}
	return 1;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? strtol(argv[1], NULL, 0) : 10;
	int t = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t tids[16];
	if (t > 16)
		t = 16;
	if (argc > 3)
		return serve_rounds(t, argv[3]);
	if (!t)
		work(NULL);
	for (int i = 0; i < t; i++)
		pthread_create(&tids[i], NULL, work, NULL);
	for (int i = 0; i < t; i++)
		pthread_join(tids[i], NULL);
	printf("done\n");
	return 0;
}
