/*
 * stack_chain.c - the call chain of the stack benchmark: count.c's loop
 * calls bench_call(fn, i), which reaches fn through four more functions,
 * so a probe on f sees eight frames:
 *
 *   f, chain4, chain3, chain2, chain1 (bench_call), time_loop, worker,
 *   start_thread
 *
 * and the unprobed twin g pays the same chain.  Built twice (bench/
 * meson.build): with -fno-omit-frame-pointer (ustack walks the frame
 * pointers) and with -fomit-frame-pointer (the walk needs the CFI path).
 * Each link adds to the result after its call, so -O2 cannot turn the calls
 * into jumps and every frame is on the stack when fn runs.
 */
typedef int (*bench_fn)(int);

extern int bench_bias;

#define CHAIN_LINK(name, next)                                        \
	__attribute__((noinline)) int name(bench_fn fn, int x)       \
	{                                                             \
		int r = next(fn, x ^ bench_bias);                     \
		__asm__ volatile("" : "+r"(r));                       \
		return r + 1;                                         \
	}

__attribute__((noinline)) int chain4(bench_fn fn, int x)
{
	int r = fn(x);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

CHAIN_LINK(chain3, chain4)
CHAIN_LINK(chain2, chain3)
CHAIN_LINK(chain1, chain2)

int bench_call(bench_fn fn, int x)
{
	return chain1(fn, x);
}
