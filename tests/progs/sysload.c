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
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
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

int main(int argc, char **argv)
{
	n = argc > 1 ? strtol(argv[1], NULL, 0) : 10;
	int t = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t tids[16];
	if (t > 16)
		t = 16;
	if (!t)
		work(NULL);
	for (int i = 0; i < t; i++)
		pthread_create(&tids[i], NULL, work, NULL);
	for (int i = 0; i < t; i++)
		pthread_join(tids[i], NULL);
	printf("done\n");
	return 0;
}
