/*
 * loop.c - e2e target: calls f() (tests/progs/f.c) N times, N = argv[1]
 * (default 1), then prints `checksum <sum of f's results>` and exits 0.
 *
 * Used by the -c tests: `ubt -c './prog_loop_O2_pie 1000'
 * -e 'uprobe:./prog_loop_O2_pie:f { @c = count(); }'` must print `@c: 1000`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "progs.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 1;
	unsigned long sum = 0;

	for (long i = 0; i < n; i++)
		sum += (unsigned int)f((int)i);
	printf("checksum %lu\n", sum);
	return 0;
}
