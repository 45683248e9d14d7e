/*
 * traced.c - a process already traced by a debugger-like helper: it forks
 * a child that seizes it with ptrace (the way a debugger attaches) and then
 * just waits.  `ubt -p PID` must fail with a clear error and a hint, and
 * leave the process untouched.
 *
 *   prog_traced   prints `traced <pid>` once the child is its tracer, then
 *                 calls f in a loop; on SIGTERM it ends the child and exits 0
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	int fds[2];
	char c;
	if (pipe(fds))
		return 1;
	signal(SIGTERM, on_term);
	pid_t parent = getpid(), child = fork();
	if (child == 0) {
		if (ptrace(PTRACE_SEIZE, parent, NULL, NULL) < 0)
			_exit(1);
		if (write(fds[1], "s", 1) != 1)
			_exit(1);
		/* like a debugger: pass every signal on to the tracee */
		for (;;) {
			int st;
			if (waitpid(parent, &st, __WALL) < 0)
				_exit(0);
			if (WIFSTOPPED(st))
				ptrace(PTRACE_CONT, parent, NULL, (void *)(long)WSTOPSIG(st));
		}
	}
	if (read(fds[0], &c, 1) != 1)
		return 1;
	printf("traced %d\n", parent);
	fflush(stdout);
	for (long i = 0; !stop; i++) {
		f((int)i);
		usleep(1000);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("exit\n");
	return 0;
}
