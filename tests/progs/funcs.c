/*
 * funcs.c - functions with arguments for the e2e tests (args.c), in their
 * own translation unit so that no call to them is inlined.
 *
 * add() takes six integer arguments of different widths, so arg0..arg5
 * cover every argument register (rdi rsi rdx rcx r8 r9); many() takes
 * eight, so arg6 and arg7 are on the stack.
 */
#include "progs.h"

__attribute__((noinline)) int add(int a, long b, short c, unsigned char d,
				  long long e, int g)
{
	return (int)(a + b + c + d + e + g);
}

__attribute__((noinline)) int mul(int a, int b)
{
	return a * b;
}

static const char *const names[] = { "read", "write", "flush", "open" };

__attribute__((noinline)) const char *name_of(int id)
{
	return names[id & 3];
}

__attribute__((noinline)) long many(long a, long b, long c, long d, long e, long f, long g,
				    long h)
{
	return a + b + c + d + e + f + g + h;
}
