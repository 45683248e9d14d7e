/*
 * fmt.h - the functions tests/progs/fmt.c calls (defined in fmtfuncs.c,
 * so the calls are never inlined).
 */
#ifndef UBT_TEST_FMT_H
#define UBT_TEST_FMT_H

struct fmt_addrs {
	unsigned char v4[4];
	unsigned char v6[16];
	unsigned char mac[6];
};

int fmt_bytes(const unsigned char *p, long len);
int fmt_argv(char **argv);
int fmt_errno(int e);
int fmt_inet(int af, const void *addr, unsigned int v4);
int fmt_addrs(const struct fmt_addrs *a);

#endif
