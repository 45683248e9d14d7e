/*
 * execer.c - a target that calls f 100 times, prints `before exec <sum>`,
 * then replaces itself with a shell that sleeps 0.3 s and prints `after
 * exec`: the tracer must notice that its code and patches went away with
 * the old program image, and the new program must run to its end.
 *
 *   prog_execer_O2_pie [wait-patched]
 *
 * wait-patched (for -p): before the exec, wait until f's first byte has
 * changed, i.e. a tracer attached, however long it took to start.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

int main(int argc, char **argv)
{
	long sum = 0;
	volatile unsigned char *code = (volatile unsigned char *)(void *)f;
	unsigned char first = *code;
	for (int i = 0; i < 100; i++)
		sum += f(i);
	printf("before exec %ld\n", sum);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "wait-patched"))
		for (int i = 0; i < 600000 && *code == first; i++)
			usleep(100);
	usleep(200000);
	execl("/bin/sh", "sh", "-c", "sleep 0.3; echo after exec", (char *)NULL);
	return 1;
}
