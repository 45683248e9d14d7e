/*
 * badread.c - e2e target for fault-tolerant reads (tests/e2e/safety.test).
 *
 *   prog_badread_O2_pie MODE ITERS [DELAY_US]
 *
 * Calls probe_me(i, p, s, n) ITERS times with pointers a script may read:
 * p and s cycle through NULL, 1, an unmapped page, a string that runs into
 * an unmapped page, a string that ends just before one, a mapped page never
 * touched, a good string, and this program's file mapped and never touched
 * ("unmapped" pages are PROT_NONE mappings, so nothing else is mapped there
 * later); n is a two-node list whose second node's next is NULL.  Prints
 * "ready" first and "done" at the end.
 *
 * MODE before: installs its own SIGSEGV handler before printing "ready";
 * MODE after: installs it when SIGUSR1 arrives (after ubt attached).
 * MODE blocked: blocks every signal (SIGSEGV included) before the loop.
 * With a handler, every 10th iteration the program faults on purpose on an
 * unmapped page and recovers with siglongjmp; at the end (or on SIGTERM) it
 * prints "own faults 1, foreign N": 1 when it received its own faults, N
 * the faults at any other address (a probe's fault leaking to it).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct node {
	long val;
	struct node *next;
	const char *name;
};

static sigjmp_buf env;
static volatile sig_atomic_t want_handler, have_handler, stop;
static volatile void *own_addr;
static int own_faults, foreign;

volatile long sink;

__attribute__((noinline)) void probe_me(long i, const void *p, const char *s, struct node *n)
{
	sink = i + (long)p + (long)s + (long)n;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	if (si->si_addr != own_addr)
		foreign++;
	siglongjmp(env, 1);
}

static void on_usr1(int sig)
{
	want_handler = 1;
}

static void on_term(int sig)
{
	stop = 1;
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	have_handler = 1;
}

/* a readable page followed by an inaccessible one */
static char *two_pages(long pg)
{
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(m + pg, pg, PROT_NONE);
	return m;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	long iters = argc > 2 ? strtol(argv[2], NULL, 0) : 10;
	long delay = argc > 3 ? strtol(argv[3], NULL, 0) : 0;
	long pg = sysconf(_SC_PAGESIZE);

	/* inaccessible (PROT_NONE keeps the range from being reused) */
	char *gone = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *runs = two_pages(pg); /* "xxxxxxxx" then the unmapped page */
	memset(runs + pg - 8, 'x', 8);
	char *edge = two_pages(pg); /* "edge" ending right before the unmapped page */
	strcpy(edge + pg - 5, "edge");
	char *fresh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* this program's own file, mapped and never touched: "\177ELF\2..." */
	FILE *self = fopen("/proc/self/exe", "r");
	char *file = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fileno(self), 0);
	struct node n2 = {2, NULL, "two"}, n1 = {1, &n2, "one"};
	const char *ptrs[] = {NULL, (char *)1, gone, runs + pg - 8, edge + pg - 5, fresh, "good", file + 1};
	int np = sizeof(ptrs) / sizeof(ptrs[0]);

	if (!strcmp(mode, "before"))
		install();
	if (!strcmp(mode, "after"))
		signal(SIGUSR1, on_usr1);
	if (!strcmp(mode, "blocked")) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
	}
	signal(SIGTERM, on_term);
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; i < iters && !stop; i++) {
		if (want_handler && !have_handler) {
			install();
			printf("handler installed\n");
			fflush(stdout);
		}
		probe_me(i, ptrs[i % np], ptrs[i % np], &n1);
		if (have_handler && i % 10 == 9) {
			own_addr = gone + 8;
			if (!sigsetjmp(env, 1))
				*(volatile int *)own_addr = 1;
			else
				own_faults++;
		}
		if (delay)
			usleep(delay);
	}
	if (have_handler)
		printf("own faults %d, foreign %d\n", own_faults ? 1 : 0, foreign);
	printf("done\n");
	return 0;
}
