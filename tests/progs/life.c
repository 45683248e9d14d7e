/*
 * life.c - target of the tests of a tracer's life and death (tests/stress
 * `deaths`, tests/e2e/life.test): what happens to ubt, its watchdog, other
 * tracers, or in the target's own life (fork, vfork, signals, a crash)
 * must never crash or fool it.
 *
 * Two probed functions, both checked on every call:
 *   f(x)   from f.c: a jump site (3x + 1)
 *   g(n)   a loop whose head is at g+2, inside the first 5 bytes, so ubt
 *          can only put an int3 there (returns 1 + 2 + ... + n):
 *            31 c0     xor  %eax,%eax
 *            01 f8  1: add  %edi,%eax
 *            ff cf     dec  %edi
 *            7f fa     jg   1b
 *            c3        ret
 *
 *   prog_life hammer THREADS [block]
 *       THREADS threads call f and g in loops.  `block`: every thread runs
 *       with all signals blocked (the sigwait pattern).  Prints `ready PID
 *       f=ADDR g=ADDR`; on SIGTERM `calls N bad N`, exit 1 if any result
 *       was wrong.
 *   prog_life owntrap N
 *       One thread calls g in a loop.  On SIGUSR1 the main thread installs
 *       its own SIGTRAP handler, executes N int3 of its own and reports
 *       `own N/N` (traps its handler saw / executed); on SIGTERM `calls N
 *       bad N foreign N` (foreign: traps its handler saw at ubt's sites).
 *   prog_life server
 *       A forking server: each line `fork` on stdin forks a worker that
 *       calls f and g until SIGTERM, prints `child PID`; a worker writes
 *       `worker PID calls N bad N` when it ends.  EOF: ends the workers and
 *       exits.
 *   prog_life spawn
 *       Waits for SIGUSR1, then starts /bin/true with posix_spawn and a
 *       child with vfork() that calls f(7) then _exit(0); prints `spawned
 *       PID` and `vforked PID`; then calls f(9) itself.
 *   prog_life crash N
 *       Calls f N times, then dies of SIGSEGV.
 *   prog_life run N
 *       Calls f and g N times, prints `sum S` and `done`, exits 0.
 *   prog_life mainexit MS
 *       Two threads call f for MS milliseconds while the main thread has
 *       ended with pthread_exit() (its /proc/PID/maps is then empty); the
 *       last one prints `workers done calls N` and exits 0.
 *
 * liblifector.so (lifelib.c) sleeps LIFE_CTOR_SLEEP_MS in the loader.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

int g(int n);

__asm__(".text\n"
	".globl g\n.type g,@function\n"
	"g:\n"
	"\txor %eax,%eax\n"
	"1:\tadd %edi,%eax\n"
	"\tdec %edi\n"
	"\tjg 1b\n"
	"\tret\n"
	".size g, .-g\n");

extern char **environ;
static volatile int stop;
static volatile long bad, total;
static volatile sig_atomic_t go;

/* One round of calls; the number of wrong results. */
static long round_of_calls(int x)
{
	int n = x % 7;
	return (f(x) != 3 * x + 1) + (g(n) != n * (n + 1) / 2);
}

static void *caller(void *arg)
{
	long n = 0, b = 0;
	for (int x = 0; !stop; x = (x + 1) & 0xffff, n++)
		b += round_of_calls(x);
	__atomic_fetch_add(&bad, b, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total, n, __ATOMIC_RELAXED);
	return NULL;
}

static void block_all(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static int hammer(int nthreads, int blocked)
{
	pthread_t t[64];
	sigset_t set;
	int sig;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 2;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (blocked)
		block_all(); /* the workers inherit it */
	else
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, caller, NULL);
	printf("ready %d f=%p g=%p\n", getpid(), (void *)f, (void *)g);
	fflush(stdout);
	sigwait(&set, &sig);
	stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("calls %ld bad %ld\n", total, bad);
	return bad ? 1 : 0;
}

/* ---- owntrap ---------------------------------------------------------- */

static volatile long own_seen, foreign;

/* an int3 of the program's own: its handler sees pc == own_int3_end */
void own_int3(void);
extern char own_int3_end[];
__asm__(".text\n"
	".globl own_int3\n.type own_int3,@function\n"
	"own_int3:\n"
	"\tint3\n"
	".globl own_int3_end\n"
	"own_int3_end:\n"
	"\tret\n"
	".size own_int3, .-own_int3\n");

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char *pc = (char *)uc->uc_mcontext.gregs[REG_RIP];
	if (pc == own_int3_end)
		own_seen++;
	else
		foreign++;
}

static void on_usr1(int sig)
{
	go = 1;
}

static int owntrap(int n)
{
	pthread_t t;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	/* SIGUSR1 must reach this thread's pause(), not the caller thread */
	sigset_t usr1, none;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &none);
	pthread_create(&t, NULL, caller, NULL);
	printf("ready %d f=%p g=%p\n", getpid(), (void *)f, (void *)g);
	fflush(stdout);
	while (!go)
		sigsuspend(&none);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	for (int i = 0; i < n; i++)
		own_int3();
	printf("own %ld/%d\n", own_seen, n);
	fflush(stdout);
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
	stop = 1;
	pthread_join(t, NULL);
	printf("calls %ld bad %ld foreign %ld\n", total, bad, foreign);
	return bad || foreign ? 1 : 0;
}

/* ---- server ----------------------------------------------------------- */

static void on_term(int sig)
{
	stop = 1;
}

static void worker(void)
{
	signal(SIGTERM, on_term);
	caller(NULL);
	printf("worker %d calls %ld bad %ld\n", getpid(), total, bad);
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

static int server(void)
{
	char line[64];
	pid_t kids[256];
	int nkids = 0, rc = 0;
	printf("ready %d f=%p g=%p\n", getpid(), (void *)f, (void *)g);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "fork", 4) || nkids == 256)
			continue;
		pid_t pid = fork();
		if (pid == 0)
			worker();
		kids[nkids++] = pid;
		printf("child %d\n", pid);
		fflush(stdout);
	}
	for (int i = 0; i < nkids; i++) {
		int st = 0;
		kill(kids[i], SIGTERM);
		waitpid(kids[i], &st, 0);
		rc |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return rc;
}

/* ---- spawn, crash ----------------------------------------------------- */

static int spawn(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (!go)
		pause();
	pid_t pid;
	char *argv[] = {"true", NULL};
	int st;
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ))
		return 1;
	printf("spawned %d\n", pid);
	fflush(stdout);
	waitpid(pid, &st, 0);
	pid = vfork();
	if (pid == 0) {
		f(7);
		_exit(0);
	}
	printf("vforked %d\n", pid);
	fflush(stdout);
	waitpid(pid, &st, 0);
	f(9); /* the parent's own ids again */
	return 0;
}

static int crash(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += f((int)i);
	printf("sum %ld\n", sum);
	fflush(stdout);
	*(volatile int *)(long)(sum & 1) = 0; /* address 0 or 1: SIGSEGV */
	return 0;
}

static int run(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += f((int)i) + g((int)(i % 7));
	printf("sum %ld\ndone\n", sum);
	return 0;
}

static struct timespec until;
static int workers_left = 2;
static long worker_calls;

static bool past(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void *counted(void *arg)
{
	long sum = 0, n = 0;
	while (!past(&until))
		for (int i = 0; i < 1024; i++, n++)
			sum += f(i);
	__atomic_fetch_add(&worker_calls, n, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&workers_left, 1, __ATOMIC_ACQ_REL) == 0) {
		printf("workers done calls %ld\n", worker_calls);
		fflush(stdout);
		exit(0);
	}
	return (void *)sum;
}

static int mainexit(long ms)
{
	pthread_t t[2];
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000 + (until.tv_nsec + ms % 1000 * 1000000) / 1000000000;
	until.tv_nsec = (until.tv_nsec + ms % 1000 * 1000000) % 1000000000;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, counted, NULL);
	pthread_exit(NULL);
}

/* liblifector.so: referenced, so that the linker keeps it (--as-needed) */
extern volatile int life_lib_mark;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	life_lib_mark = 1;
	long n = argc > 2 ? atol(argv[2]) : 0;
	if (!strcmp(mode, "hammer"))
		return hammer((int)n, argc > 3 && !strcmp(argv[3], "block"));
	if (!strcmp(mode, "owntrap"))
		return owntrap((int)n);
	if (!strcmp(mode, "server"))
		return server();
	if (!strcmp(mode, "spawn"))
		return spawn();
	if (!strcmp(mode, "crash"))
		return crash(n);
	if (!strcmp(mode, "run"))
		return run(n);
	if (!strcmp(mode, "mainexit"))
		return mainexit(n);
	fprintf(stderr, "usage: prog_life hammer|owntrap|server|spawn|crash|run|mainexit N\n");
	return 2;
}
