// throw.cc - e2e target for libstdc++'s own USDT probes (libstdcxx:throw,
// libstdcxx:catch): N times (argv[1], default 8; 0 = until killed, one every
// 10 ms) it throws an int and catches it, then prints `caught <N>`.
// Built only when meson finds a C++ compiler.
#include <cstdio>
#include <cstdlib>
#include <ctime>

static __attribute__((noinline)) void thrower(long i)
{
	if (i >= 0)
		throw static_cast<int>(i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 8, caught = 0;
	for (long i = 0; n == 0 || i < n; i++) {
		try {
			thrower(i);
		} catch (int) {
			caught++;
		}
		if (n == 0) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, nullptr);
		}
	}
	printf("caught %ld\n", caught);
	return 0;
}
