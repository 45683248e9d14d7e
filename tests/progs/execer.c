/*
 * execer.c - a target that calls f 100 times, prints `before exec <sum>`,
 * then replaces itself with `sleep 0.3`: the tracer must notice that its
 * code and patches went away with the old program image.
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
	execl("/bin/sleep", "sleep", "0.3", (char *)NULL);
	return 1;
}
