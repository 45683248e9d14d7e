/*
 * execer.c - a target that calls f 100 times, prints `before exec <sum>`,
 * then replaces itself with a shell that sleeps 0.3 s and prints `after
 * exec`: the tracer must notice that its code and patches went away with
 * the old program image, and the new program must run to its end.
 *
 *   prog_execer_O2_pie wait   calls f every 10 ms until SIGUSR1, then
 *                             prints `before exec` and execs as above (a
 *                             tracer attached with -p sees its probes fire
 *                             before it lets the program exec)
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	long sum = 0;
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		fflush(stdout);
		for (int i = 0; !go; i++) {
			sum += f(i);
			usleep(10000);
		}
	} else {
		for (int i = 0; i < 100; i++)
			sum += f(i);
	}
	printf("before exec %ld\n", sum);
	fflush(stdout);
	usleep(200000);
	execl("/bin/sh", "sh", "-c", "sleep 0.3; echo after exec", (char *)NULL);
	return 1;
}
