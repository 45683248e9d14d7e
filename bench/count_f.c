/*
 * count_f.c - the probed function f and its unprobed twin g of the count
 * benchmark (bench/count.c).
 *
 * Own translation unit, -O2, so the loop in count.c makes one real call per
 * iteration.  f and g have the same body and compile to the same bytes
 * (`lea (%rdi,%rdi,2),%eax; add bias(%rip),%eax; ret`), so the benchmark
 * can time a probed f and an unprobed g side by side in the same process.
 */
int bench_bias = 1;

__attribute__((noinline)) int f(int x)
{
	return x * 3 + bench_bias;
}

__attribute__((noinline)) int g(int x)
{
	return x * 3 + bench_bias;
}
