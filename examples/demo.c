/*
 * demo.c - the example program traced by setup.sh and the README.
 *
 * A pretend request server: it handles N requests (argv[1], default 20)
 * of four kinds (0-3), each with a made-up size, by calling
 *
 *     long handle_request(int id, int kind, long bytes)
 *
 * and prints a one-line summary.  The sequence is deterministic (a fixed
 * LCG), so tracing it always gives the same counts:
 *
 *     ubt -c './demo' -e 'uprobe:./demo:handle_request
 *                         { @requests[arg1] = count(); @bytes[arg1] = sum(arg2); }'
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: keep a real call with the declared arguments at -O2 (no clone). */
__attribute__((noipa)) long handle_request(int id, int kind, long bytes)
{
	/* pretend to work a little */
	volatile long x = 0;

	for (long i = 0; i < bytes / 64; i++)
		x += i ^ id;
	return bytes + (x & 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	unsigned int seed = 12345;
	long served = 0, total = 0;

	for (int id = 0; id < n; id++) {
		seed = seed * 1103515245u + 12345u;
		int kind = (seed >> 16) & 3;
		long bytes = 128 + ((seed >> 8) & 0xfff);

		total += handle_request(id, kind, bytes) & ~1L;
		served++;
	}
	printf("demo: served %ld requests, %ld bytes\n", served, total);
	return 0;
}
