/*
 * types.c - e2e target whose probed functions take C types: records with
 * string, array, nested and pointer members, bitfields, arrays of ints and
 * of pointers, and strings, for the tests of casts, `->`, pointer
 * arithmetic, record and array values, bitfields and string comparison
 * (tests/diff/types.cases, tests/e2e/types.test).
 *
 *   prog_types_O2_pie [N]
 *
 * For i in 0..N-1 (N = argv[1], default 4) it calls, from typesfuncs.c so
 * that no call is inlined:
 *   use_rec(&recs[i], i)       recs[i] = { .id = 100 + i, .name = "rec-i",
 *                              .vals = {i, 2i, 3i, 4i}, .grid = {{1,2},{3,4}}
 *                              (+ i each), .pt = {i, -i}, .next = &recs[i+1]
 *                              (NULL for the last), .big = 1e12 + i,
 *                              .small = -1 - i, .flag = i & 1 }
 *   use_bits(&bits, &bits2)    the bitfields below (same values each time)
 *   use_str(names[i % 4], i)   names: "read", "write", "flush", "open"
 *   use_arr(vals, ptrs, i)     vals = {10, 20, 30, 40}, ptrs = {&vals[k]}
 * and prints `total <sum>` at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

static const char *const names[] = { "read", "write", "flush", "open" };

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	struct rec *recs;
	struct bits bits;
	struct bits2 bits2;
	int vals[4] = { 10, 20, 30, 40 };
	int *ptrs[4] = { &vals[0], &vals[1], &vals[2], &vals[3] };
	long total = 0;

	if (n < 1)
		n = 1;
	recs = calloc((size_t)n, sizeof(*recs));
	if (!recs)
		return 1;
	for (int i = 0; i < n; i++) {
		struct rec *r = &recs[i];
		r->id = 100 + i;
		snprintf(r->name, sizeof(r->name), "rec-%d", i);
		for (int k = 0; k < 4; k++)
			r->vals[k] = (k + 1) * i;
		for (int k = 0; k < 4; k++)
			r->grid[k / 2][k % 2] = k + 1 + i;
		r->pt.x = i;
		r->pt.y = -i;
		r->next = i + 1 < n ? &recs[i + 1] : NULL;
		r->big = 1000000000000L + i;
		r->small = (short)(-1 - i);
		r->flag = (unsigned char)(i & 1);
	}
	memset(&bits, 0, sizeof(bits));
	bits.a = 1;
	bits.b = 217;
	bits.c = 5;
	bits.d = 1;
	bits.e = 500;
	bits.f = 31117;
	bits.g = 1;
	bits.h = 2;
	bits.i = 27;
	memset(&bits2, 0, sizeof(bits2));
	bits2.a = 1;
	bits2.b = 2;
	bits2.c = 5;
	bits2.d = 0;
	bits2.e = 65535;

	for (int i = 0; i < n; i++) {
		total += use_rec(&recs[i], i);
		total += use_bits(&bits, &bits2);
		total += use_str(names[i % 4], i);
		total += use_arr(vals, ptrs, i);
	}
	printf("total %ld\n", total);
	free(recs);
	return 0;
}
