/*
 * execer.c - a target that calls f 100 times, prints `before exec <sum>`,
 * then replaces itself with a shell that sleeps 0.3 s and prints `after
 * exec`: the tracer must notice that its code and patches went away with
 * the old program image, and the new program must run to its end.
 */
#include <stdio.h>
#include <unistd.h>

#include "progs.h"

int main(void)
{
	long sum = 0;
	for (int i = 0; i < 100; i++)
		sum += f(i);
	printf("before exec %ld\n", sum);
	fflush(stdout);
	usleep(200000);
	execl("/bin/sh", "sh", "-c", "sleep 0.3; echo after exec", (char *)NULL);
	return 1;
}
