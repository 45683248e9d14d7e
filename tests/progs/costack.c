/*
 * costack.c - ucontext coroutines and a sigaltstack handler, for ustack on
 * stacks that are not a thread's (tests/e2e/coro.test).  The probed
 * function coro_leaf runs on:
 *
 *   mmap    a coroutine stack from mmap with an inaccessible page right
 *           above it (as QEMU's coroutine stacks can lie under another
 *           thread's guard page): a read past its top faults
 *   malloc  a coroutine stack from malloc (Boost.Context's fixedsize_stack,
 *           libco's shared stacks), inside the heap
 *   thread  a coroutine on an mmap'd stack, switched to from a pthread
 *   altstack  a SIGUSR1 handler on a sigaltstack from malloc
 *   blocked the mmap coroutine with SIGSEGV blocked (a fault could not be
 *           caught: ubt reads the stack with process_vm_readv instead)
 *   shrink  a coroutine on a 64 KiB stack, then on the lower half of the same
 *           mapping with the upper half made inaccessible: what ubt learnt
 *           of the mapping is stale, and its read past the new top faults
 *           (caught: the stack counts as cut short)
 *   main    the main thread's own stack (for comparison)
 *
 *   prog_costack N [KIND...]   runs each KIND (default: all) N times, then
 *                           prints `done N` and exits 0
 *   prog_costack -1 [KIND...]  prints `ready`, then runs them until SIGTERM
 *
 * Every path is coro_leaf <- coro_mid <- coro_body (<- the coroutine's
 * entry, or the signal handler), each noinline, so a stack is recognisable.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define STACK_SIZE (64 * 1024)
#define GUARD 4096

static ucontext_t main_ctx, coro_ctx;
static volatile long sink;

__attribute__((noinline)) long coro_leaf(long x)
{
	sink += x;
	__asm__ volatile("" ::: "memory");
	return sink;
}

__attribute__((noinline)) long coro_mid(long x)
{
	long r = coro_leaf(x + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) long coro_body(long x)
{
	long r = coro_mid(x + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static void coro_entry(void)
{
	coro_body(1);
	swapcontext(&coro_ctx, &main_ctx);
}

/* A stack from mmap whose top is followed by an inaccessible page (as a
 * QEMU coroutine stack under another thread's guard page). */
static void *stack_mmap(void)
{
	char *p = mmap(NULL, STACK_SIZE + GUARD, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	mprotect(p + STACK_SIZE, GUARD, PROT_NONE);
	return p;
}

static int run_on_size(void *stack, size_t size)
{
	if (!stack || getcontext(&coro_ctx))
		return -1;
	coro_ctx.uc_stack.ss_sp = stack;
	coro_ctx.uc_stack.ss_size = size;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, coro_entry, 0);
	return swapcontext(&main_ctx, &coro_ctx);
}

static int run_on(void *stack)
{
	return run_on_size(stack, STACK_SIZE);
}

static void *thread_main(void *arg)
{
	(void)arg;
	void *st = stack_mmap();
	int r = run_on(st);
	munmap(st, STACK_SIZE + GUARD);
	return (void *)(long)r;
}

static void on_usr1(int sig)
{
	(void)sig;
	coro_body(3);
}

static int run_altstack(void)
{
	stack_t ss = {.ss_sp = malloc(STACK_SIZE), .ss_size = STACK_SIZE, .ss_flags = 0};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (!ss.ss_sp || sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		return -1;
	raise(SIGUSR1);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(ss.ss_sp);
	return 0;
}

/* The same 64 KiB-aligned place each time, so both sizes share the granule
 * ubt caches the mapping by (runtime/mem/rt_vma.c). */
static int run_shrink(void)
{
	static char *r;
	if (!r) {
		char *p = mmap(NULL, 4 * STACK_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		r = (char *)(((unsigned long)p + STACK_SIZE - 1) & ~(unsigned long)(STACK_SIZE - 1));
	}
	if (mprotect(r, STACK_SIZE, PROT_READ | PROT_WRITE) || run_on(r))
		return -1;
	if (mprotect(r + STACK_SIZE / 2, STACK_SIZE / 2, PROT_NONE))
		return -1;
	return run_on_size(r, STACK_SIZE / 2);
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int run(const char *kind)
{
	if (!strcmp(kind, "mmap")) {
		void *st = stack_mmap();
		int r = run_on(st);
		munmap(st, STACK_SIZE + GUARD);
		return r;
	}
	if (!strcmp(kind, "malloc")) {
		void *st = malloc(STACK_SIZE);
		int r = run_on(st);
		free(st);
		return r;
	}
	if (!strcmp(kind, "thread")) {
		pthread_t t;
		void *r;
		if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, &r))
			return -1;
		return (int)(long)r;
	}
	if (!strcmp(kind, "altstack"))
		return run_altstack();
	if (!strcmp(kind, "shrink"))
		return run_shrink();
	if (!strcmp(kind, "blocked")) {
		sigset_t set, old;
		sigemptyset(&set);
		sigaddset(&set, SIGSEGV);
		pthread_sigmask(SIG_BLOCK, &set, &old);
		int r = run("mmap");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return r;
	}
	if (!strcmp(kind, "main")) {
		coro_body(2);
		return 0;
	}
	fprintf(stderr, "unknown kind %s\n", kind);
	return -1;
}

int main(int argc, char **argv)
{
	static const char *all[] = {"mmap", "malloc", "thread", "altstack", "blocked", "main"};
	long n = argc > 1 ? atol(argv[1]) : 1;
	const char **kinds = argc > 2 ? (const char **)argv + 2 : all;
	int nk = argc > 2 ? argc - 2 : (int)(sizeof(all) / sizeof(all[0]));
	if (n < 0) {
		signal(SIGTERM, on_term);
		printf("ready\n");
		fflush(stdout);
		for (n = 0; !stop; n++) {
			for (int k = 0; k < nk; k++)
				if (run(kinds[k]))
					return 1;
			usleep(1000);
		}
	}
	for (long i = 0; i < n && !stop; i++)
		for (int k = 0; k < nk; k++)
			if (run(kinds[k]))
				return 1;
	printf("done %ld\n", n);
	return 0;
}
