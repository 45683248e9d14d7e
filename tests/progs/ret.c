/*
 * ret.c - e2e target for return probes: every way a probed call can end
 * other than a plain return.  `ret MODE [N]` runs one case and prints
 * what it observed; the tests (tests/e2e/ret*.test) trace the functions
 * named ret_* with uprobe + uretprobe and compare this output and the
 * exit status with an unprobed run.
 *
 *   deep N       recursion N deep (deeper than the shadow stack)
 *   longjmp N    N times: longjmp out of two nested probed frames
 *   siglongjmp N N times: siglongjmp from a signal handler over probed frames
 *   signal       SIGALRM handled (calling probed functions) inside a probed call
 *   fork         fork() inside a probed function; both processes return
 *   exit         pthread_exit() inside a probed function, cleanup handlers run
 *   cancel       pthread_cancel() of a thread blocked inside a probed function
 *   cancel_leaf  the same through two probed frames, with a cleanup handler
 *                that calls a probed function while the unwinder runs
 *   backtrace    backtrace() from a probed function, printed by name
 *   detach       a thread sleeps inside a probed function while ubt detaches
 */
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, optimize("no-optimize-sibling-calls")))

static jmp_buf jb;
static sigjmp_buf sjb;
static volatile int sink;

NOINLINE long ret_leaf(long x)
{
	sink++;
	return x * 3 + 1;
}

NOINLINE long ret_deep(long n)
{
	return n ? ret_deep(n - 1) + 1 : ret_leaf(0);
}

NOINLINE void ret_jump(int how)
{
	ret_leaf(how);
	if (how == 1)
		longjmp(jb, 7);
	raise(SIGUSR1); /* its handler siglongjmps */
}

NOINLINE long ret_mid(int how)
{
	ret_jump(how);
	return 99; /* never */
}

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(sjb, 5);
}

static volatile int alarms;

static void on_alrm(int sig)
{
	(void)sig;
	alarms += (int)ret_leaf(1); /* a probed call inside the handler */
}

NOINLINE long ret_wait_signal(void)
{
	alarm(1);
	while (!alarms)
		pause();
	return ret_leaf(alarms);
}

NOINLINE int ret_fork(void)
{
	fflush(stdout);
	pid_t p = fork();
	if (p == 0)
		return 1;
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? 100 + WEXITSTATUS(st) : -1;
}

static void cleanup(void *what)
{
	printf("cleanup: %s\n", (const char *)what);
}

NOINLINE void ret_exit_inside(long v)
{
	ret_leaf(v);
	pthread_exit((void *)(v + 1));
}

static void *exit_thread(void *arg)
{
	pthread_cleanup_push(cleanup, "exit");
	ret_exit_inside((long)arg);
	pthread_cleanup_pop(0);
	return NULL;
}

NOINLINE static void wait_forever(void)
{
	for (;;)
		pause(); /* a cancellation point */
}

NOINLINE long ret_block(void)
{
	wait_forever(); /* (a loop here would branch into the patched bytes at -O0) */
	return 0;
}

static void cleanup_leaf(void *what)
{
	printf("cleanup: %s, leaf %ld\n", (const char *)what, ret_leaf(5));
}

NOINLINE long ret_cancel_outer(void)
{
	long r;
	pthread_cleanup_push(cleanup_leaf, "cancel_leaf");
	r = ret_block();
	pthread_cleanup_pop(0);
	return r;
}

static void *cancel_leaf_thread(void *arg)
{
	(void)arg;
	ret_cancel_outer();
	return NULL;
}

static void *cancel_thread(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, "cancel");
	ret_block();
	pthread_cleanup_pop(0);
	return NULL;
}

/* prints the function names in the backtrace, up to main */
NOINLINE int ret_backtrace(void)
{
	void *pcs[32];
	int n = backtrace(pcs, 32);
	char **names = backtrace_symbols(pcs, n);
	int shown = 0;
	for (int i = 0; i < n && names; i++) {
		char *o = strchr(names[i], '('), *e = o ? strpbrk(o, "+)") : NULL;
		if (!o || !e || e == o + 1)
			continue;
		printf("frame %.*s\n", (int)(e - o - 1), o + 1);
		shown++;
		if (!strncmp(o + 1, "main", 4) && e - o - 1 == 4)
			break;
	}
	free(names);
	return shown;
}

NOINLINE int ret_bt_outer(int x)
{
	return ret_backtrace() + x;
}

NOINLINE long ret_sleep(int secs)
{
	sleep(secs);
	return 42;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		printf("slow returned %ld\n", ret_sleep(1)), fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "deep";
	long n = argc > 2 ? atol(argv[2]) : 100;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("RET_WAIT")) { /* tests/e2e/ret_same.py: wait until the tracer is attached */
		printf("ready\n");
		fflush(stdout);
		getchar();
	}

	if (!strcmp(mode, "deep")) {
		printf("deep %ld = %ld\n", n, ret_deep(n));
	} else if (!strcmp(mode, "longjmp") || !strcmp(mode, "siglongjmp")) {
		int sig = mode[0] == 's';
		long jumps = 0;
		signal(SIGUSR1, on_usr1);
		for (long i = 0; i < n; i++) {
			if (sig ? sigsetjmp(sjb, 1) : setjmp(jb)) {
				jumps++;
				continue;
			}
			ret_mid(sig ? 2 : 1);
		}
		/* the shadow stack must still work after all this */
		printf("%s: %ld jumps, then %ld\n", mode, jumps, ret_deep(10));
	} else if (!strcmp(mode, "signal")) {
		signal(SIGALRM, on_alrm);
		printf("signal: %ld\n", ret_wait_signal());
	} else if (!strcmp(mode, "fork")) {
		int r = ret_fork();
		if (r == 1) {
			printf("child: returned %d, leaf %ld\n", r, ret_leaf(2));
			exit(3);
		}
		printf("parent: returned %d, leaf %ld\n", r, ret_leaf(4));
	} else if (!strcmp(mode, "exit") || !strcmp(mode, "cancel") || !strcmp(mode, "cancel_leaf")) {
		pthread_t t;
		void *res;
		int c = mode[0] == 'c';
		pthread_create(&t, NULL, !c ? exit_thread : mode[6] ? cancel_leaf_thread : cancel_thread,
			       (void *)41);
		if (c) {
			usleep(200000);
			pthread_cancel(t);
		}
		pthread_join(t, &res);
		printf("%s: thread result %s\n", mode,
		       res == PTHREAD_CANCELED ? "canceled" : (res == (void *)42 ? "42" : "?"));
		printf("%s: then %ld\n", mode, ret_deep(5));
	} else if (!strcmp(mode, "backtrace")) {
		printf("backtrace: %d frames\n", ret_bt_outer(0));
	} else if (!strcmp(mode, "detach")) {
		pthread_t t;
		printf("ready\n");
		pthread_create(&t, NULL, sleeper, NULL);
		pthread_join(t, NULL);
		printf("detach: done\n");
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
