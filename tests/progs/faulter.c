/*
 * faulter.c - e2e target whose only thread faults all the time
 * (tests/e2e/safety.test): it reads a PROT_NONE page in a loop, its
 * SIGSEGV handler checks the fault's address and siglongjmps back, and it
 * calls f between faults.  A stop by ubt then often finds the thread in
 * its fault's signal-delivery-stop.  Prints "ready" first and, on SIGTERM,
 * "foreign N": the faults whose siginfo did not name the page (0 unless a
 * tracer resent the fault without the kernel's siginfo).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "progs.h"

static sigjmp_buf env;
static volatile char *page;
static volatile long foreign;
static volatile sig_atomic_t stop;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if ((volatile char *)si->si_addr != page)
		foreign++;
	siglongjmp(env, 1);
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct sigaction sa;
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	signal(SIGTERM, on_term);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; !stop; i++) {
		f(i);
		if (!sigsetjmp(env, 1))
			(void)*page;
	}
	printf("foreign %ld\n", foreign);
	return 0;
}
