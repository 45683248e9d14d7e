/*
 * bound.c - e2e target for what one probe hit may cost the traced program
 * (tests/e2e/bound.test): its loops, its stack, its thread slot, compile
 * time.  Every mode prints a last line the tests check, so a target that
 * died (a probe overflowed its stack) is seen as a missing line.
 *
 *   prog_bound_O2_pie strs N          take_str(s) N times; `strs N`
 *   prog_bound_O2_pie loop N          f(i) N times; `loop N`
 *   prog_bound_O2_pie smallstack N B [warm]
 *                                     take_str(s) N times on a stack with
 *                                     only B bytes below the call's return
 *                                     address (a coroutine's stack: a page
 *                                     that cannot be touched lies below);
 *                                     with warm, once on the thread's own
 *                                     stack first; `smallstack N`
 *   prog_bound_O2_pie pthread N K     take_str(s) N times in a thread whose
 *                                     stack is K KiB; `pthread N`
 *   prog_bound_O2_pie threads T N     T threads alive at once, each calls
 *                                     f() N times once all have started;
 *                                     `threads T calls T*N`
 *   prog_bound_O2_pie shortlived T N  T threads, four at a time, each calls
 *                                     f() N times; `shortlived T calls T*N`.
 *                                     Each has a stack of its own that is
 *                                     never reused, so no two have the same
 *                                     thread pointer (glibc puts the TCB at
 *                                     the top of the stack)
 *   prog_bound_O2_pie signals N [alt|-] [US]
 *                                     the main thread calls f() N times
 *                                     while a timer sends it SIGUSR1
 *                                     every US us (20); the handler calls f()
 *                                     too; `calls C handler ran` (C: every
 *                                     call of f).  With alt the handler
 *                                     runs on a sigaltstack of 8 KiB
 *                                     (SA_ONSTACK)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

volatile long sink;

__attribute__((noinline)) void take_str(const char *s)
{
	__asm__ volatile("");
	sink += s[0];
}

/* also read by probes through uaddr("bound_text") */
const char bound_text[] = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
			   "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
			   "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
			   "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";

/*
 * Calls take_str(bound_text) with %rsp = top (16-aligned): at take_str's entry
 * the return address is at top - 8, and everything below it up to the
 * inaccessible page is the stack the probe may use.
 */
static void call_on(char *top)
{
	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "mov %0, %%rsp\n\t"
			 "mov %1, %%rdi\n\t"
			 "call take_str\n\t"
			 "mov %%rbx, %%rsp"
			 :
			 : "r"(top), "r"(bound_text)
			 : "rbx", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
			   "memory", "cc");
}

static int smallstack(long n, long bytes, int warm)
{
	long page = sysconf(_SC_PAGESIZE);
	long len = (bytes + 8 + 15 + page - 1) / page * page;
	char *m = mmap(NULL, (size_t)(page + len), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, (size_t)page, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	/* the return address at m + page + bytes: bytes of stack below it */
	char *top = (char *)(((unsigned long)(m + page + bytes + 8)) & ~15ul);
	if (top - 8 < m + page + bytes)
		top += 16;
	if (warm)
		take_str(bound_text);
	for (long i = 0; i < n; i++)
		call_on(top);
	printf("smallstack %ld\n", n);
	return 0;
}

static void *strs_thread(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		take_str(bound_text);
	return NULL;
}

static int small_thread(long n, long kib)
{
	pthread_attr_t a;
	pthread_t t;
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, (size_t)kib * 1024) ||
	    pthread_create(&t, &a, strs_thread, (void *)n)) {
		fprintf(stderr, "cannot start a thread with a %ld KiB stack\n", kib);
		return 1;
	}
	pthread_join(t, NULL);
	printf("pthread %ld\n", n);
	return 0;
}

static pthread_barrier_t start, end;
static long per_thread;

static void *worker(void *arg)
{
	int together = arg != NULL;
	if (together)
		pthread_barrier_wait(&start);
	for (long i = 0; i < per_thread; i++)
		sink += f((int)i);
	if (together)
		pthread_barrier_wait(&end);
	return NULL;
}

/* T threads at once (together), or in groups of 4, each on a new stack */
static int threads(const char *what, long t, long n, int together)
{
	pthread_attr_t a;
	pthread_t *ts = calloc((size_t)t, sizeof(*ts));
	const size_t stack = 64 * 1024;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, stack);
	per_thread = n;
	if (together) {
		pthread_barrier_init(&start, NULL, (unsigned)t);
		pthread_barrier_init(&end, NULL, (unsigned)t);
	}
	for (long i = 0; i < t; i++) {
		if (!together) {
			void *s = mmap(NULL, stack, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (s == MAP_FAILED || pthread_attr_setstack(&a, s, stack)) {
				perror("thread stack");
				return 1;
			}
		}
		if (pthread_create(&ts[i], &a, worker, together ? (void *)1 : NULL)) {
			fprintf(stderr, "pthread_create failed at thread %ld\n", i);
			return 1;
		}
		if (!together && i % 4 == 3)
			for (long j = i - 3; j <= i; j++)
				pthread_join(ts[j], NULL);
	}
	for (long i = together ? 0 : t - t % 4; i < t; i++)
		pthread_join(ts[i], NULL);
	printf("%s %ld calls %ld\n", what, t, t * n);
	free(ts);
	return 0;
}

static volatile sig_atomic_t handler_calls;

static void on_usr1(int sig)
{
	(void)sig;
	sink += f(-1);
	handler_calls++;
}

/*
 * A timer sends SIGUSR1 to this thread every us microseconds while it
 * calls f(), so signals land anywhere, also inside probe code running for
 * f (the handler's f() then runs a probe inside a probe).
 */
static int signals(long n, int alt, long us)
{
	struct sigaction sa;
	struct sigevent ev;
	timer_t tm;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	if (alt) {
		static char altstack[8192] __attribute__((aligned(16)));
		stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
		if (sigaltstack(&ss, NULL)) {
			perror("sigaltstack");
			return 1;
		}
		sa.sa_flags |= SA_ONSTACK;
	}
	sigaction(SIGUSR1, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	struct itimerspec its = {{0, us * 1000}, {0, us * 1000}};
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) || timer_settime(tm, 0, &its, NULL)) {
		perror("timer_create");
		return 1;
	}
	for (long i = 0; i < n; i++)
		sink += f((int)i);
	timer_delete(tm);
	printf("calls %ld handler %s\n", n + handler_calls, handler_calls ? "ran" : "never ran");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	long a = argc > 2 ? atol(argv[2]) : 1, b = argc > 3 ? atol(argv[3]) : 0;

	if (!strcmp(mode, "strs")) {
		for (long i = 0; i < a; i++)
			take_str(bound_text);
		printf("strs %ld\n", a);
		return 0;
	}
	if (!strcmp(mode, "loop")) {
		for (long i = 0; i < a; i++)
			sink += f((int)i);
		printf("loop %ld\n", a);
		return 0;
	}
	if (!strcmp(mode, "smallstack"))
		return smallstack(a, b, argc > 4 && !strcmp(argv[4], "warm"));
	if (!strcmp(mode, "pthread"))
		return small_thread(a, b);
	if (!strcmp(mode, "threads"))
		return threads("threads", a, b, 1);
	if (!strcmp(mode, "shortlived"))
		return threads("shortlived", a, b, 0);
	if (!strcmp(mode, "signals"))
		return signals(a, argc > 3 && !strcmp(argv[3], "alt"), argc > 4 ? atol(argv[4]) : 20);
	fprintf(stderr, "usage: %s strs|loop|smallstack|pthread|threads|shortlived|signals ...\n",
		argv[0]);
	return 2;
}
