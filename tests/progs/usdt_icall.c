/*
 * usdt_icall.c - e2e target: a USDT location followed by an indirect call
 * (tests/e2e/usdt_icall.test).  gcc -O2 puts the probe's nop right before
 * `call *%r12`, so a 5-byte jump at the location would displace the call:
 * copied into the trampoline, it would push a return address there, and a
 * thread in the callee when ubt detaches would return into unmapped memory.
 *
 * Prints `ready`, then runs N rounds (argv[1], default 30) of three calls
 * through a pointer to a callee that sleeps 100 ms, then `done`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

__attribute__((noinline)) static int slow(void)
{
	usleep(100 * 1000);
	return 1;
}

__attribute__((noinline)) int run(int (*f)(void))
{
	int r = 0;
	for (int i = 0; i < 3; i++) {
		DTRACE_PROBE(icall, before);
		r += f();
	}
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30;
	long sum = 0;

	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < n; i++)
		sum += run(slow);
	printf("done %ld\n", sum);
	return 0;
}
