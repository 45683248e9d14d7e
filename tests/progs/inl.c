/*
 * inl.c - a static function that gcc -O2 inlines at three call sites and
 * also keeps out of line (called through a pointer), for source-line probes
 * (uprobe:BIN@inl.c:LINE) and inlined functions (issue 24).
 *
 *   prog_inl_O2_pie [N]   calls outer(i) (three inlined helper calls) and
 *                         the out-of-line helper N times each, and twice()
 *                         (only inlined, into main) N times, then prints
 *                         "hits H" (H = 4 * N: the helper's line ran H
 *                         times), "outer O" and exits.
 *
 * The lines the tests name (keep them where they are):
 *   the helper's counting statement is line 23 (INL_HIT_LINE),
 *   outer's counting statement is line 30 (INL_OUTER_LINE).
 */
#include <stdio.h>
#include <stdlib.h>

static volatile long hits, outers;

static inline int helper(int x)
{
	hits++;
	return x * 3 + 1;
}

__attribute__((noinline)) int outer(int a)
{
	int r = helper(a) + helper(a + 1) + helper(a + 2);
	outers++;
	return r;
}

int (*volatile helper_ptr)(int) = helper;

static inline int twice(int x); /* only inlined: no out-of-line copy */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long sum = 0;
	for (int i = 0; i < n; i++) {
		sum += outer(i);
		sum += helper_ptr(i);
		sum += twice(i);
	}
	printf("hits %ld\nouter %ld\nsum %ld\n", hits, outers, sum);
	return 0;
}

static inline int twice(int x)
{
	outers += 0 * x; /* a volatile access: the copy keeps an instruction of its own */
	return 2 * x;
}
