/*
 * test_find.c - table tests of two pure look-ups of attach:
 *
 *   att_find_gap() (inject/placement.c): where in a process's address
 *   space, given its mappings, a block of code can go: a free gap of the
 *   size inside a window, one guard page from each neighbour, nearest to
 *   a reference address (the probed code);
 *   ef_lib_name_matches() (src/elf/findlib.c): bpftrace's rule for a
 *   library named without a path ("libc" is libc.so.6).
 *
 * Mappings are listed by hand, sorted as /proc/PID/maps is.
 */
#include "attach/attach.h"
#include "attach/inject/session_internal.h"
#include "elf/findlib.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define TOP 0x7ffffffff000ull /* the highest end of a user mapping */
#define MAXMAPS 4

static const struct gap_row {
	const char *name;
	uint64_t maps[MAXMAPS][2]; /* [start, end), the unused ones {0, 0} */
	uint64_t lo, hi, ref, size;
	int ret;
	uint64_t want;
} gap_rows[] = {
	{"no mappings: the lowest address mmap allows", {{0}}, 0, TOP, 0, 0x1000, 0, 0x10000},
	{"below the probed code, one guard page away", {{0x400000, 0x500000}}, 0, TOP, 0x400000,
	 0x1000, 0, 0x3fe000},
	{"above it when that is nearer", {{0x400000, 0x500000}}, 0, TOP, 0x500000, 0x1000, 0,
	 0x501000},
	{"a gap too small is passed over", {{0x400000, 0x500000}}, 0, TOP, 0x400000, 0x400000, 0,
	 0x501000},
	{"nearest of several gaps", {{0x1000000, 0x1100000}, {0x2000000, 0x2100000}, {0x3000000, 0x3100000}},
	 0, TOP, 0x2100000, 0x1000, 0, 0x2101000},
	{"nearest of several gaps, from above", {{0x1000000, 0x1100000}, {0x2000000, 0x2100000}, {0x3000000, 0x3100000}},
	 0, TOP, 0x2000000, 0x1000, 0, 0x1ffe000},
	{"the window's low end, rounded up to a page", {{0x400000, 0x500000}}, 0x600001, 0x700000,
	 0, 0x1000, 0, 0x601000},
	{"the window's high end, rounded down to a page", {{0x400000, 0x500000}}, 0x600000,
	 0x700fff, TOP, 0x1000, 0, 0x6ff000},
	/* ref inside the gap: the gap's top end, even when its bottom is nearer */
	{"ref inside a gap", {{0x400000, 0x500000}}, 0x600000, 0x700000, 0x601000, 0x1000, 0,
	 0x6ff000},
	{"a gap of exactly the size between guard pages", {{0x400000, 0x401000}, {0x404000, 0x405000}},
	 0x401000, 0x404000, 0x402800, 0x1000, 0, 0x402000},
	{"one page short", {{0x400000, 0x401000}, {0x404000, 0x405000}}, 0x401000, 0x404000,
	 0x402800, 0x2000, -ENOMEM, 0},
	{"mappings side by side leave no gap", {{0x400000, 0x401000}, {0x401000, 0x402000}},
	 0x3ff000, 0x403000, 0x400000, 0x1000, -ENOMEM, 0},
	{"the window inside one mapping", {{0x400000, 0x800000}}, 0x500000, 0x700000, 0x600000,
	 0x1000, -ENOMEM, 0},
	{"an empty window", {{0}}, 0x500000, 0x500000, 0x500000, 0x1000, -ENOMEM, 0},
	{"the stack at the top: the gap below it", {{0x555555554000, 0x555555559000}, {0x7ffff7000000, TOP}},
	 0x7fff00000000, TOP, 0x7ffff7000000, 0x100000, 0, 0x7ffff6eff000},
	{"nothing above the last mapping's end", {{0x400000, TOP}}, 0x500000, TOP, TOP, 0x1000,
	 -ENOMEM, 0},
	{"below the first mapping, not under 0x10000", {{0x20000, 0x30000}}, 0, TOP, 0, 0xf000, 0,
	 0x10000},
	{"below the first mapping, one byte too big", {{0x20000, 0x30000}}, 0, 0x40000, 0, 0xf001,
	 -ENOMEM, 0},
	{"a whole 2 GiB window", {{0x400000, 0x401000}}, 0x80000000, 0x100000000, 0x400000,
	 0x80000000, 0, 0x80000000},
};

static void check_gaps(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(gap_rows); i++) {
		const struct gap_row *r = &gap_rows[i];
		struct proc_map maps[MAXMAPS];
		int n = 0;
		memset(maps, 0, sizeof(maps));
		for (; n < MAXMAPS && r->maps[n][1]; n++) {
			maps[n].start = r->maps[n][0];
			maps[n].end = r->maps[n][1];
			maps[n].path = "";
		}
		uint64_t at = 0xdead;
		int ret = att_find_gap(maps, n, r->lo, r->hi, r->ref, r->size, &at);
		CHECK_EQ(ret, r->ret, "%s", r->name);
		if (ret == 0) {
			CHECK_EQ(at, r->want, "%s", r->name);
			/* whatever it says, the block is free, in the window and off its neighbours */
			CHECK(at >= r->lo && at + r->size <= r->hi, "%s: in the window", r->name);
			for (int k = 0; k < n; k++)
				CHECK(at + r->size + PAGE <= maps[k].start || at >= maps[k].end + PAGE,
				      "%s: a page from mapping %d", r->name, k);
		} else {
			CHECK_EQ(at, 0xdead, "%s: *addr untouched on failure", r->name);
		}
	}
}

static const struct {
	const char *base, *name;
	bool want;
} lib_rows[] = {
	{"libc.so.6", "libc", true},
	{"libc.so.6", "c", true},
	{"libc.so.6", "libc.so.6", true},
	{"libc.so", "libc", true},
	{"libc.so", "c", true},
	{"libc.so.6.debug", "libc", true}, /* a prefix rule: the caller prefers the shortest */
	{"libstdc++.so.6", "stdc++", true},
	{"libstdc++.so.6", "libstdc++", true},
	{"libstdc++.so.6.0.32", "stdc++", true},
	{"libm.so.6", "m", true},
	{"libz.so.1", "z", true},
	{"ld-linux-x86-64.so.2", "ld-linux-x86-64", true},
	{"python3", "python3", true},
	{"libfoo.sox", "foo", true}, /* "starts with libNAME.so" */
	{"libc-2.31.so", "libc", false},
	{"libc-2.31.so", "c", false},
	{"libcrypt.so.1", "libc", false},
	{"libcrypt.so.1", "c", false},
	{"libmount.so.1", "m", false},
	{"libzstd.so.1", "z", false},
	{"python3.11", "python3", false},
	{"libc.so.6", "libc.so", false},
	{"libc.so.6", "libc.so.6.1", false},
	{"libc.so.6", "so", false},
	{"libc.so.6", "", false},
	{"", "libc", false},
	{"lib", "c", false},
	{"c.so", "c", true},
	{"libc", "c", false},
	{"LIBC.so.6", "libc", false},
};

static void check_lib_names(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(lib_rows); i++)
		CHECK_EQ(ef_lib_name_matches(lib_rows[i].base, lib_rows[i].name), lib_rows[i].want,
			 "'%s' named '%s'", lib_rows[i].base, lib_rows[i].name);
}

int main(void)
{
	check_gaps();
	check_lib_names();
	return check_summary("find");
}
