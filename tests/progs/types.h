/*
 * types.h - the C types of tests/progs/types.c and the functions that take
 * them (typesfuncs.c, a separate translation unit so that no call to them
 * is inlined).  Scripts read them through casts: with the same
 * definitions in the script, or from the binary's DWARF.
 */
#ifndef UBT_TEST_TYPES_H
#define UBT_TEST_TYPES_H

struct point {
	int x;
	int y;
};

struct rec {
	int id;
	char name[16];
	int vals[4];
	int grid[2][2];
	struct point pt;
	struct rec *next;
	long big;
	short small;
	unsigned char flag;
};

/* int bitfields after short ones: e starts in the same 32-bit unit as the
 * shorts (bit 16), f in the next one (it would cross bit 32) */
struct bits {
	unsigned short a : 4, b : 8, c : 3, d : 1;
	unsigned int e : 9, f : 15, g : 1, h : 2, i : 5;
};

struct bits2 {
	unsigned int a : 4, b : 8, c : 3, d : 1, e : 16;
};

int use_rec(struct rec *r, int i);
int use_bits(struct bits *b, struct bits2 *b2);
int use_str(const char *s, int i);
int use_arr(int *vals, int **ptrs, int i);

#endif
