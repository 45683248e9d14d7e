/*
 * typesfuncs.c - the probed functions of tests/progs/types.c, in their own
 * translation unit so that no call to them is inlined.  Each returns a
 * small number derived from its arguments, so the program's total shows
 * that probes changed nothing.
 */
#include <string.h>

#include "types.h"

__attribute__((noinline)) int use_rec(struct rec *r, int i)
{
	return r->id + r->vals[3] + i;
}

__attribute__((noinline)) int use_bits(struct bits *b, struct bits2 *b2)
{
	return (int)(b->b + b2->e);
}

__attribute__((noinline)) int use_str(const char *s, int i)
{
	return (int)strlen(s) + i;
}

__attribute__((noinline)) int use_arr(int *vals, int **ptrs, int i)
{
	return vals[i & 3] + *ptrs[(i + 1) & 3];
}
