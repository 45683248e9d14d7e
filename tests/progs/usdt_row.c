/*
 * usdt_row.c - e2e target: USDT probes in a row (tests/e2e/usdt_row.test).
 * sys/sdt.h's probe is a 1-byte nop, so three probes one after the other
 * put three locations within the 5 bytes of one jump: they share the
 * first one's trampoline (src/attach/arch/x86_64/mid.c), each with its own
 * arguments, among them globals read through %rip, whose location-relative
 * offsets need each location's own pc.
 *
 * For i in 0..N-1 (N = argv[1], default 10) it fires, in this order,
 *   row:a(i, 2i)  row:b(2i, i)  row:c(g_c, i)
 * with g_c = 1000 - i (read through %rip).  It prints nothing itself, so
 * that the order of the probes' printf lines is all a test compares.  N < 0:
 * prints `ready` and fires until killed.
 */
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

long g_c;
static volatile long sink;

static __attribute__((noinline)) void fire(long i)
{
	long d = 2 * i;

	g_c = 1000 - i;
	DTRACE_PROBE2(row, a, i, d);
	DTRACE_PROBE2(row, b, d, i);
	DTRACE_PROBE2(row, c, g_c, i);
	sink += i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;

	if (n < 0) { /* until killed, for tests that attach to it running */
		if (write(1, "ready\n", 6) != 6)
			return 1;
		for (long i = 0;; i++) {
			fire(i);
			usleep(100);
		}
	}
	for (long i = 0; i < n; i++)
		fire(i);
	return sink == -1;
}
