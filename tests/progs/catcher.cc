/*
 * catcher.cc - e2e target for return probes and C++ exceptions: catcher()
 * calls thrower() through mid(), whose frame has a destructor; thrower
 * throws on three calls of four and catcher catches, so catcher returns
 * every time (1 or 2) while mid and thrower return only when nothing was
 * thrown.  `catcher N` makes N calls and prints the sum of catcher's
 * results and the number of destructors run.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#define NOINLINE __attribute__((noinline, optimize("no-optimize-sibling-calls")))

static volatile int destroyed, work;

struct guard {
	~guard() { destroyed++; }
};

extern "C" NOINLINE void thrower(int i)
{
	if (i % 4)
		throw std::runtime_error("thrown");
	work++;
}

extern "C" NOINLINE int mid(int i)
{
	guard g;
	thrower(i);
	return 1;
}

extern "C" NOINLINE int catcher(int i)
{
	try {
		return mid(i);
	} catch (const std::exception &) {
		return 2;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 2000, sum = 0;
	if (std::getenv("RET_WAIT")) { /* tests/e2e/ret_same.py */
		std::printf("ready\n");
		std::fflush(stdout);
		std::getchar();
	}
	for (int i = 0; i < n; i++)
		sum += catcher(i);
	std::printf("catcher %d: sum %d, destroyed %d\n", n, sum, (int)destroyed);
	return 0;
}
