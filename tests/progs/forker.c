/*
 * forker.c - a target that forks while probed: the parent calls f N times,
 * forks a child that calls f 3N times and exits, waits for it, then calls
 * f N more times.  Both print checksums, so a test sees that both
 * processes ran correctly; a tracer attached to the parent counts the
 * parent's 2N calls and the child's 3N (bpftrace 0.17 and ubt alike).
 *
 *   prog_forker_O2_pie N
 *   prog_forker_O2_pie N orphan FILE
 *
 * orphan: the parent exits right after the fork (its tracer then ends);
 * the child waits 300 ms, calls f 3N times with the parent's patched code
 * still in its copy of the text, and writes `child <sum>` to FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

static long calls(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += f((int)i);
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long before = calls(n);
	fflush(stdout);
	if (argc > 3 && !strcmp(argv[2], "orphan")) {
		if (fork() == 0) {
			usleep(300000);
			FILE *out = fopen(argv[3], "w");
			if (!out)
				_exit(1);
			fprintf(out, "child %ld\n", calls(3 * n));
			fclose(out);
			_exit(0);
		}
		printf("parent %ld\n", before);
		return 0;
	}
	pid_t child = fork();
	if (child == 0) {
		printf("child %ld\n", calls(3 * n));
		fflush(stdout);
		_exit(0);
	}
	int status = 0;
	waitpid(child, &status, 0);
	printf("parent %ld %ld child-status %d\n", before, calls(n), WEXITSTATUS(status));
	return 0;
}
