/*
 * usdt_icall.c - e2e target: USDT locations followed by an indirect call
 * (tests/e2e/usdt_icall.test).  gcc -O2 puts icall:before's nop right
 * before `call *%r12` and the instruction after it: a 5-byte jump there
 * would displace the call with the instruction its callee returns to, so
 * the location takes a breakpoint.  icall:arg's nop comes before
 * `mov %ebx,%edi; call *%r12` (spdk's msg_exec has that shape): the call
 * is the last displaced instruction, relocated as a push of the original
 * return address and a jmp through %r12, so the callee returns into the
 * program (a thread in the callee when ubt detaches must survive).
 *
 * Prints `ready`, then runs N rounds (argv[1], default 30) of three calls
 * through a pointer to a callee that sleeps 100 ms and three through a
 * pointer to one that takes an argument and sleeps 100 ms, then `done`.
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

__attribute__((noinline)) static int slow_arg(int r)
{
	usleep(100 * 1000);
	return r >= 0;
}

__attribute__((noinline)) int run_arg(int (*f)(int))
{
	int r = 0;
	for (int i = 0; i < 3; i++) {
		DTRACE_PROBE(icall, arg);
		r += f(r);
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
		sum += run(slow) + run_arg(slow_arg);
	printf("done %ld\n", sum);
	return 0;
}
