/*
 * symcxx.cc - C++ target of the symbol tests: namespaced functions,
 * overloads, a method and a template's two instances, so that probes can
 * name them demangled
 * (`uprobe:BIN:"ubt::Shape::area"`) and usym()/ustack print demangled names.
 *
 *   prog_symcxx_<variant> N     calls each N times, prints `sum <total>`
 */
#include <cstdio>
#include <cstdlib>

namespace ubt {

struct Shape {
	int w, h;
	__attribute__((noinline)) long area() const;
};

__attribute__((noinline)) long Shape::area() const
{
	return (long)w * h;
}

__attribute__((noinline)) long scale(long v, int k)
{
	return v * k;
}

__attribute__((noinline)) double scale(double v, int k)
{
	return v * k;
}

__attribute__((noinline)) long measure(const Shape &s)
{
	return scale(s.area(), 2);
}

} // namespace ubt

/* a function template, instantiated twice: probes name an instance */
namespace tpl {
template <typename T> __attribute__((noinline)) T twice(T v)
{
	return v * 2;
}
} // namespace tpl

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::strtol(argv[1], nullptr, 0) : 1;
	long sum = 0;
	for (long i = 0; i < n; i++) {
		ubt::Shape s{(int)i, 3};
		sum += ubt::measure(s);
		sum += (long)ubt::scale(1.5, (int)i);
		sum += tpl::twice<long>(i) + tpl::twice<int>((int)i);
	}
	std::printf("sum %ld\n", sum);
	return 0;
}
