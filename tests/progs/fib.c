/*
 * fib.c - e2e target: recursive fib(n), n = argv[1] (default 20).
 *
 * fib(n) makes fib_calls(n) = 2 * fib(n + 1) - 1 calls (fib(20): 21891),
 * so a count() probe on fib has an exact expected value, and the prologue
 * of fib at -O2 contains a short conditional branch the relocator must
 * rewrite.  Prints `fib <n> = <value>`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "progs.h"

/*
 * Without no-optimize-sibling-calls gcc -O2 turns one of the two recursive
 * calls into a loop (tail recursion with an accumulator), and the number
 * of real calls would depend on the optimisation level.
 */
__attribute__((noinline, optimize("no-optimize-sibling-calls"))) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	printf("fib %d = %d\n", n, fib(n));
	return 0;
}
