/*
 * ret_cxx.cc - e2e target for return probes in C++: exceptions thrown
 * through probed frames (caught above them, and caught inside one), and
 * a libgcc unwinder (_Unwind_Backtrace) walking through a probed frame.
 * `ret_cxx N` runs the throw cases N times.  The tests trace cxx_* with
 * uprobe + uretprobe and compare the output with an unprobed run.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <stdexcept>
#include <unwind.h>

#define NOINLINE __attribute__((noinline, optimize("no-optimize-sibling-calls")))

static int destroyed;

struct guard {
	int id;
	~guard() { destroyed += id; }
};

extern "C" NOINLINE int cxx_throw(int x)
{
	if (x >= 0)
		throw std::runtime_error("boom");
	return x;
}

extern "C" NOINLINE int cxx_mid(int x)
{
	guard g{1};
	return cxx_throw(x) + 1; /* the exception passes through this frame */
}

extern "C" NOINLINE int cxx_outer(int x)
{
	guard g{10};
	return cxx_mid(x) + 1;
}

extern "C" NOINLINE int cxx_catch_inside(int x)
{
	try {
		return cxx_mid(x);
	} catch (const std::exception &) {
		return 1000; /* this probed frame survives and returns */
	}
}

static _Unwind_Reason_Code walk(struct _Unwind_Context *ctx, void *arg)
{
	int *n = (int *)arg;
	Dl_info di;
	void *pc = (void *)_Unwind_GetIP(ctx);
	if (dladdr((char *)pc - 1, &di) && di.dli_sname) {
		std::printf("frame %s\n", di.dli_sname);
		if (!std::strcmp(di.dli_sname, "main"))
			return _URC_END_OF_STACK;
	} else {
		std::printf("frame ?\n");
	}
	++*n;
	return _URC_NO_REASON;
}

extern "C" NOINLINE int cxx_unwind_walk(int x)
{
	int n = 0;
	_Unwind_Backtrace(walk, &n);
	return n + x;
}

extern "C" NOINLINE int cxx_walk_outer(int x)
{
	return cxx_unwind_walk(x) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 3, caught = 0, inside = 0;
	if (std::getenv("RET_WAIT")) { /* tests/e2e/ret_same.py */
		std::printf("ready\n");
		std::fflush(stdout);
		std::getchar();
	}
	for (int i = 0; i < n; i++) {
		try {
			cxx_outer(i);
		} catch (const std::runtime_error &e) {
			caught++;
		}
		inside += cxx_catch_inside(i) == 1000;
	}
	std::printf("caught %d, inside %d, destroyed %d\n", caught, inside, destroyed);
	std::printf("walk %d\n", cxx_walk_outer(0));
	return 0;
}
