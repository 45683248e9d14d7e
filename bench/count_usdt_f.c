/*
 * count_usdt_f.c - f and g of the count benchmark (bench/count.c) for the
 * USDT probe (bench/run.py --probe usdt): f fires bench:hit(x), a
 * <sys/sdt.h> probe, in the middle of its body; g has the same `nop` there
 * without the note, so the two compile to the same instructions and the
 * benchmark can time a probed f and an unprobed g side by side.
 */
#include <sys/sdt.h>

int bench_bias = 1;

__attribute__((noinline)) int f(int x)
{
	int y = x * 3;
	DTRACE_PROBE1(bench, hit, y);
	return y + bench_bias;
}

__attribute__((noinline)) int g(int x)
{
	int y = x * 3;
	__asm__ volatile("nop" : : "nor"(y));
	return y + bench_bias;
}
