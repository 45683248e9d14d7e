/*
 * args.c - e2e target with several probed functions and arguments.
 *
 * For i in 0..N-1 (N = argv[1], default 8) it calls
 *   add(i, 10 * i, -i, i & 0xff, 1000000000000 + i, 7)
 *   mul(i, i % 4)
 *   name_of(i)                    (returns "read", "write", "flush", "open")
 *   many(i, ..., 600 + i, -700 - i)  (eight arguments: arg6, arg7 on the stack;
 *                                    its result is not part of the total)
 * and prints `total <sum>` at the end, so scripts can check argument values
 * (arg0..arg5) and count per-key hits of several probes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progs.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	long total = 0;

	for (int i = 0; i < n; i++) {
		total += add(i, 10L * i, (short)-i, (unsigned char)(i & 0xff),
			     1000000000000LL + i, 7);
		total += mul(i, i % 4);
		total += (long)strlen(name_of(i));
		(void)many(i, 1, 2, 3, 4, 5, 600 + i, -700 - i);
	}
	printf("total %ld\n", total);
	return 0;
}
