/*
 * fmt.c - e2e/differential target for the value-formatting functions
 * (buf, strftime, join, strerror, ntop, pton, macaddr).
 *
 * For i in 0..N-1 (N = argv[1], default 4) it calls, from fmtfuncs.c:
 *   fmt_bytes(bytes, len)     bytes: 0x00..0x1f, "Hello, world!", 0x80..0xff
 *                             (300 bytes); len = 5 * i (0, 5, 10, ...)
 *   fmt_argv(argv)            one of the vectors below, by i % 5:
 *                             {"ls", "-l", "/tmp"}, 20 elements "a0".."a19",
 *                             {"x", "", "y"}, an empty vector, and
 *                             {"long", <1500 x 'L'>, "end"}
 *   fmt_errno(e)              e = i (0 = success, 1 EPERM, 2 ENOENT, ...)
 *   fmt_inet(af, addr, v4)    af AF_INET / AF_INET6 by i % 2; addr the
 *                             address's bytes; v4 192.168.1.i in network order
 *   fmt_addrs(&a)             a struct with v4[4], v6[16] and mac[6] arrays
 * and prints `total <sum>` at the end.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fmt.h"

static char *v_ls[] = { "ls", "-l", "/tmp", NULL };
static char *v_many[21];
static char *v_empty_mid[] = { "x", "", "y", NULL };
static char *v_none[] = { NULL };
static char *v_long[4];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	long total = 0;
	unsigned char bytes[300];
	static char names[20][8];
	static char lng[1501];

	for (int k = 0; k < 32; k++)
		bytes[k] = (unsigned char)k;
	memcpy(bytes + 32, "Hello, world!", 13);
	for (int k = 45; k < 300; k++)
		bytes[k] = (unsigned char)(0x80 + k);
	for (int k = 0; k < 20; k++) {
		snprintf(names[k], sizeof(names[k]), "a%d", k);
		v_many[k] = names[k];
	}
	memset(lng, 'L', 1500);
	v_long[0] = "long";
	v_long[1] = lng;
	v_long[2] = "end";
	char **vecs[] = { v_ls, v_many, v_empty_mid, v_none, v_long };

	for (int i = 0; i < n; i++) {
		struct fmt_addrs a;
		unsigned char v6[16];
		unsigned int v4 = htonl(0xc0a80100u | (unsigned)(i & 0xff));

		inet_pton(AF_INET6, i % 4 == 1 ? "::1" : "fe80::1:2:3:4", v6);
		memcpy(a.v4, &v4, 4);
		memcpy(a.v6, v6, 16);
		for (int k = 0; k < 6; k++)
			a.mac[k] = (unsigned char)(0x10 * k + i);
		total += fmt_bytes(bytes + 32 * (i % 2 ? 0 : 1), 5L * i);
		total += fmt_argv(vecs[i % 5]);
		total += fmt_errno(i);
		if (i % 2)
			total += fmt_inet(AF_INET6, v6, v4);
		else
			total += fmt_inet(AF_INET, &v4, v4);
		total += fmt_addrs(&a);
	}
	printf("total %ld\n", total);
	return 0;
}
