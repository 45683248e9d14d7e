/*
 * coro.c - e2e target for return probes on functions that switch stacks:
 * coroutines on stacks of their own (mmap'ed, with a guard page below, as
 * QEMU allocates them), switched the two ways real programs do.
 *
 *   coro jmp  N R   QEMU's coroutine-ucontext: each coroutine is started
 *                   once with makecontext/swapcontext and from then on
 *                   entered and left by co_switch(), which is sigsetjmp +
 *                   siglongjmp (qemu_coroutine_switch): a co_switch call
 *                   entered on one stack returns, much later, on it after
 *                   the thread ran on the others
 *   coro swap N R   the same with co_swap(), a call of swapcontext
 *   ... N R US      sleep US microseconds after each round (a tracer can
 *                   detach while every coroutine is suspended in co_step)
 *
 * N coroutines each run R steps; a step (co_step, probed) yields in the
 * middle (co_yield -> co_switch or co_swap), so every coroutine's stack
 * holds a suspended probed frame while main runs the others, round robin.
 * The program counts the returns of each probed function itself and
 * prints them, so a test compares them with what the return probes saw;
 * it also checks every value that crossed a switch.  RET_WAIT: print
 * `ready` and wait for a line on stdin first (tests/e2e/ret_same.py).
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, optimize("no-optimize-sibling-calls")))
#define STACK (256 * 1024)

enum { ENTER = 1, YIELD = 2, DONE = 3 };

struct co {
	ucontext_t uc;       /* swap: the coroutine's context; jmp: only to start it */
	sigjmp_buf env;      /* jmp: where the coroutine resumes */
	int id, done;
	long steps, sum;
};

static int use_swap;
static sigjmp_buf main_env;
static ucontext_t main_uc;
static struct co *cur;
static int rounds;
static long n_switch, n_swap, n_step, n_yield;

/* qemu_coroutine_switch: returns the action whoever switches back passes */
NOINLINE int co_switch(sigjmp_buf *from, sigjmp_buf *to, int action)
{
	int ret = sigsetjmp(*from, 0);
	if (ret == 0)
		siglongjmp(*to, action);
	n_switch++;
	return ret;
}

static int swap_action;

NOINLINE int co_swap(ucontext_t *from, ucontext_t *to, int action)
{
	swap_action = action;
	swapcontext(from, to);
	n_swap++;
	return swap_action;
}

static int to_main(struct co *co, int action)
{
	if (use_swap)
		return co_swap(&co->uc, &main_uc, action);
	return co_switch(&co->env, &main_env, action);
}

NOINLINE long co_yield(struct co *co, long v)
{
	int a = to_main(co, YIELD);
	n_yield++;
	return a == ENTER ? v + 1 : -1000000;
}

/* a step: half of it before the yield, half after, on the coroutine's stack */
NOINLINE long co_step(struct co *co, long i)
{
	volatile long mine = co->id * 1000 + i;
	long v = co_yield(co, mine);
	n_step++;
	return v - mine; /* 1 when the switch came back to this very frame */
}

static void co_body(struct co *co)
{
	for (int i = 0; i < rounds; i++) {
		co->sum += co_step(co, i);
		co->steps++;
	}
	co->done = 1;
}

static sigjmp_buf *start_env;

static void co_start(int hi, int lo)
{
	struct co *co = (struct co *)((uintptr_t)(unsigned)hi << 32 | (unsigned)lo);
	if (!use_swap && !sigsetjmp(co->env, 0))
		siglongjmp(*start_env, 1); /* started: the first entry comes by co_switch */
	co_body(co);
	to_main(co, DONE); /* never resumed */
	abort();
}

static struct co *co_new(int id)
{
	struct co *co = calloc(1, sizeof(*co));
	char *st = mmap(NULL, STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!co || st == MAP_FAILED)
		exit(3);
	mprotect(st, 4096, PROT_NONE); /* a guard page below, as QEMU's qemu_alloc_stack */
	co->id = id;
	getcontext(&co->uc);
	co->uc.uc_stack.ss_sp = st + 4096;
	co->uc.uc_stack.ss_size = STACK;
	co->uc.uc_link = NULL;
	uintptr_t p = (uintptr_t)co;
	makecontext(&co->uc, (void (*)(void))co_start, 2, (int)(p >> 32), (int)(p & 0xffffffffu));
	if (!use_swap) {
		sigjmp_buf env;
		ucontext_t old;
		start_env = &env;
		if (!sigsetjmp(env, 0))
			swapcontext(&old, &co->uc);
	}
	return co;
}

static int enter(struct co *co)
{
	cur = co;
	if (use_swap)
		return co_swap(&main_uc, &co->uc, ENTER);
	return co_switch(&main_env, &co->env, ENTER);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: coro jmp|swap N ROUNDS\n");
		return 2;
	}
	use_swap = argv[1][0] == 's';
	int n = atoi(argv[2]);
	rounds = atoi(argv[3]);
	int pause_us = argc > 4 ? atoi(argv[4]) : 0;
	if (getenv("RET_WAIT")) {
		printf("ready\n");
		fflush(stdout);
		getchar();
	}
	struct co **cos = calloc(n, sizeof(*cos));
	for (int i = 0; i < n; i++)
		cos[i] = co_new(i);
	int left = n, bad = 0;
	while (left) {
		for (int i = 0; i < n; i++) {
			if (cos[i]->done)
				continue;
			int a = enter(cos[i]);
			if (a == DONE)
				left--;
			else if (a != YIELD)
				bad++;
		}
		if (pause_us)
			usleep(pause_us);
	}
	for (int i = 0; i < n; i++)
		if (cos[i]->steps != rounds || cos[i]->sum != rounds)
			bad++;
	printf("coroutines %d rounds %d bad %d\n", n, rounds, bad);
	printf("returns: co_switch %ld co_swap %ld co_step %ld co_yield %ld\n", n_switch, n_swap,
	       n_step, n_yield);
	return bad ? 1 : 0;
}
