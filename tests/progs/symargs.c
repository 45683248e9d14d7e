/*
 * symargs.c - e2e target of the DWARF argument tests (tests/e2e/args_dwarf.test):
 * functions whose parameters cover what `args.name` must find, typed from
 * DWARF and placed per the x86-64 ABI.
 *
 *   prog_symargs_<variant> N [slow]
 *
 * For i in 0..N-1 it calls
 *   do_io(i, 100 + i, "hello")               int, uint64_t, const char *
 *   handle(&reqs[i % 2], i)                  struct pointer: nested struct,
 *                                            char array, a linked next
 *   many(1, 2, 3, 4, 5, 6, 7 + i, 8 + i)     the last two on the stack
 *   mixed(1.5, i, 2.5f, 3)                   doubles in SSE registers
 *   bypair(i, (struct pair){10, 20}, 30)     a 16-byte struct in two registers
 *   bybig((struct big){i, 2, 3}, 4)          a 24-byte struct on the stack
 *   tdef(&reqs[0], &sum, &reqs[0].in, 1)     typedef'd, void and const pointers
 * and then g_int += 1.
 * `slow`: sleep 20 ms before each round.  Prints `sum <total>` at the end.
 * The structs are globals so every field is really in memory (gcc -O2
 * drops stores to a local struct whose fields no callee reads).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct inner {
	int a;
	short b;
};

struct req {
	int id;
	uint64_t len;
	const char *name;
	struct inner in;
	struct req *next;
	char tag[8];
};
typedef struct req req_t;

struct pair {
	long a, b;
};

struct big {
	long a, b, c;
};

/* globals for uaddr() (tests/e2e/symargs.test) */
volatile int g_int = 42;
volatile short g_short = -7;
volatile long g_long = 1L << 40;
volatile char g_char = 'x';

struct req reqs[2] = {
	{1, 10, "first", {3, 4}, &reqs[1], "taga"},
	{2, 20, "second", {5, 6}, NULL, "tagb"},
};

__attribute__((noinline)) int do_io(int id, uint64_t len, const char *name)
{
	return id + (int)len + name[0];
}

__attribute__((noinline)) long handle(struct req *r, unsigned flags)
{
	return r->id + (long)flags;
}

__attribute__((noinline)) long many(int a, long b, short c, char d, long e, int f, long g, int h)
{
	return a + b + c + d + e + f + g + h;
}

__attribute__((noinline)) double mixed(double x, int y, float z, long w)
{
	return x + y + z + w;
}

__attribute__((noinline)) long bypair(int x, struct pair p, int y)
{
	return x + p.a + p.b + y;
}

__attribute__((noinline)) long bybig(struct big b, int x)
{
	return b.a + b.b + b.c + x;
}

__attribute__((noinline)) int tdef(req_t *r, void *v, const struct inner *in, bool ok)
{
	return r->id + (v != NULL) + in->a + ok;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	bool slow = argc > 2 && !strcmp(argv[2], "slow");
	long sum = 0;
	for (int i = 0; i < n; i++) {
		if (slow)
			usleep(20000);
		sum += do_io(i, 100 + (uint64_t)i, "hello");
		sum += handle(&reqs[i % 2], (unsigned)i);
		sum += many(1, 2, 3, 4, 5, 6, 7 + i, 8 + i);
		sum += (long)mixed(1.5, i, 2.5f, 3);
		sum += bypair(i, (struct pair){10, 20}, 30);
		sum += bybig((struct big){i, 2, 3}, 4);
		sum += tdef(&reqs[0], &sum, &reqs[0].in, true);
		g_int += 1;
	}
	printf("sum %ld\n", sum);
	return 0;
}
