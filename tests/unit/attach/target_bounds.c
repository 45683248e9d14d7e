/*
 * target_bounds.c - a program test_bounds reads, never runs: built twice
 * with the same code, once with .symtab and once stripped (-s), so that the
 * function bounds ubt finds in the stripped copy (.eh_frame) can be
 * compared with the symbols of the other.  Functions of a few shapes: a
 * leaf, a loop, a static function, one with a switch.
 */
#include <stdio.h>
#include <stdlib.h>

volatile long tb_sink;

__attribute__((noinline)) long tb_leaf(long x) { return x * 3 + 1; }

__attribute__((noinline)) long tb_loop(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += tb_leaf(i) ^ tb_sink;
	return s;
}

static __attribute__((noinline)) long tb_static(long x)
{
	tb_sink += x;
	return tb_sink * 7;
}

__attribute__((noinline)) long tb_switch(int k)
{
	switch (k) {
	case 0:
		return tb_static(3);
	case 1:
		return tb_loop(9);
	case 2:
		return tb_leaf(4) + 2;
	case 3:
		return tb_sink ^ 5;
	case 4:
		return tb_static(11) - 1;
	default:
		return -1;
	}
}

int main(int argc, char **argv)
{
	printf("%ld\n", tb_switch(argc > 1 ? atoi(argv[1]) : 2));
	return 0;
}
