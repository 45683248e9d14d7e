/*
 * check.h - the few assertion helpers the arch unit tests share.  Each
 * failed check prints where and why; main() ends with the plain summary
 * line "arch: N passed, N failed" and exits non-zero on any failure.
 */
#ifndef UBT_TEST_ARCH_CHECK_H
#define UBT_TEST_ARCH_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int n_pass, n_fail;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			n_pass++;                                                                  \
		} else {                                                                           \
			n_fail++;                                                                  \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_INT(got, want, what)                                                                 \
	CHECK((long long)(got) == (long long)(want), "%s: got %lld (0x%llx), want %lld (0x%llx)",  \
	      what, (long long)(got), (unsigned long long)(got), (long long)(want),                \
	      (unsigned long long)(want))

static inline void dump_hex(const char *label, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(stderr, "  %s (%zu):", label, n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", p[i]);
	fputc('\n', stderr);
}

static inline void check_bytes_at(const char *file, int line, const char *what, const uint8_t *got,
				  size_t got_len, const uint8_t *want, size_t want_len)
{
	if (got_len == want_len && memcmp(got, want, want_len) == 0) {
		n_pass++;
		return;
	}
	n_fail++;
	fprintf(stderr, "FAIL %s:%d: %s: bytes differ\n", file, line, what);
	dump_hex("got", got, got_len);
	dump_hex("want", want, want_len);
}

#define CHECK_BYTES(what, got, got_len, want)                                                      \
	check_bytes_at(__FILE__, __LINE__, what, got, got_len, want, sizeof(want))

static inline int check_summary(void)
{
	printf("arch: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

#endif
