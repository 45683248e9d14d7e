/*
 * waits.c - e2e target of the blocking calls that a stop of their thread
 * ends with EINTR (signal(7)): epoll_wait(2), epoll_pwait(2),
 * epoll_pwait2(2), sigwaitinfo(2), semop(2) and io_getevents(2) (kernel AIO,
 * as SPDK's and qemu's AIO back ends wait), each without a timeout and
 * each in a thread of its own (tests/e2e/safety.test).  ubt stops every
 * thread to attach and to detach; the target must not see those stops.
 *
 *   prog_waits_O2_pie FIFO RESULTS
 *
 * Starts the five threads, waits until /proc says each is in its call,
 * prints `ready`, and then waits for a byte in FIFO.  Then it wakes them
 * all (an eventfd the three epolls watch, SIGUSR1 to the process, a semop
 * that adds 1, an AIO read of /dev/zero) and each appends `NAME RESULT` to
 * RESULTS: the call's
 * return value, or `EINTR` if it ended with EINTR.  Then `done`, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { W_EPOLL, W_PWAIT, W_PWAIT2, W_SIGWAIT, W_SEMOP, W_AIO, NW };
static const char *names[NW] = {"epoll_wait", "epoll_pwait", "epoll_pwait2",
				"sigwaitinfo", "semop",	      "io_getevents"};
static const long nrs[NW] = {SYS_epoll_wait,	  SYS_epoll_pwait,
			     SYS_epoll_pwait2,	  SYS_rt_sigtimedwait,
			     SYS_semtimedop, /* glibc: semop is semtimedop */
			     SYS_io_getevents};
static aio_context_t aio;
static pid_t tids[NW];
static int efd, sem;
static sigset_t usr1;
static FILE *results;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *waiter(void *arg)
{
	int w = (int)(long)arg;
	struct epoll_event ev = {.events = EPOLLIN};
	int ep = epoll_create1(0);
	long r;

	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	__atomic_store_n(&tids[w], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	switch (w) {
	case W_EPOLL:
		r = epoll_wait(ep, &ev, 1, -1);
		break;
	case W_PWAIT:
		r = epoll_pwait(ep, &ev, 1, -1, &usr1);
		break;
	case W_PWAIT2:
		r = epoll_pwait2(ep, &ev, 1, NULL, &usr1);
		break;
	case W_SIGWAIT:
		r = sigwaitinfo(&usr1, NULL);
		break;
	case W_SEMOP: {
		struct sembuf take = {0, -1, 0};
		r = semop(sem, &take, 1);
		break;
	}
	default: {
		struct io_event done;
		r = syscall(SYS_io_getevents, aio, 1L, 1L, &done, NULL);
	}
	}
	int e = errno;
	pthread_mutex_lock(&lock);
	if (r < 0 && e == EINTR)
		fprintf(results, "%s EINTR\n", names[w]);
	else
		fprintf(results, "%s %ld\n", names[w], r);
	fflush(results);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* true once thread w is in its call (/proc/self/task/TID/syscall: "NR ...") */
static int in_call(int w)
{
	char path[64];
	long nr = -2;
	pid_t tid = __atomic_load_n(&tids[w], __ATOMIC_ACQUIRE);

	if (!tid)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -2;
	fclose(f);
	return nr == nrs[w];
}

int main(int argc, char **argv)
{
	pthread_t th[NW];
	char c;

	if (argc != 3)
		return 2;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	efd = eventfd(0, 0);
	sem = semget(IPC_PRIVATE, 1, 0600);
	if (syscall(SYS_io_setup, 1, &aio))
		return 1;
	results = fopen(argv[2], "w");
	if (efd < 0 || sem < 0 || !results || (mkfifo(argv[1], 0600) && errno != EEXIST))
		return 1;
	int ctl = open(argv[1], O_RDWR);
	for (int w = 0; w < NW; w++)
		pthread_create(&th[w], NULL, waiter, (void *)(long)w);
	for (int w = 0; w < NW; w++)
		while (!in_call(w))
			usleep(1000);
	printf("ready\n");
	fflush(stdout);
	if (ctl < 0 || read(ctl, &c, 1) != 1)
		return 1;
	uint64_t one = 1;
	struct sembuf give = {0, 1, 0};
	static char buf[64];
	int zero = open("/dev/zero", O_RDONLY);
	struct iocb cb = {.aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t)zero,
			  .aio_buf = (uint64_t)(uintptr_t)buf, .aio_nbytes = sizeof(buf)};
	struct iocb *cbs[1] = {&cb};
	if (write(efd, &one, sizeof(one)) != sizeof(one) || kill(getpid(), SIGUSR1) ||
	    semop(sem, &give, 1) || syscall(SYS_io_submit, aio, 1L, cbs) != 1)
		return 1;
	for (int w = 0; w < NW; w++)
		pthread_join(th[w], NULL);
	semctl(sem, 0, IPC_RMID);
	fprintf(results, "done\n");
	fclose(results);
	printf("done\n");
	return 0;
}
