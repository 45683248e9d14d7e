/*
 * fmtfuncs.c - probed functions of tests/progs/fmt.c, in their own
 * translation unit so that no call to them is inlined.
 */
#include "fmt.h"

__attribute__((noinline)) int fmt_bytes(const unsigned char *p, long len)
{
	return len > 0 ? p[0] : 0;
}

__attribute__((noinline)) int fmt_argv(char **argv)
{
	int n = 0;
	while (argv[n])
		n++;
	return n;
}

__attribute__((noinline)) int fmt_errno(int e)
{
	return e;
}

__attribute__((noinline)) int fmt_inet(int af, const void *addr, unsigned int v4)
{
	return af + (addr != 0) + (int)(v4 & 1);
}

__attribute__((noinline)) int fmt_addrs(const struct fmt_addrs *a)
{
	return a->mac[0];
}
