/*
 * check.h - the one set of checks every unit test of ubt uses.
 *
 * A unit test is a plain program: it runs its checks, each of which counts
 * a pass or a failure, and ends with `return check_summary("NAME");`, which
 * prints "NAME: N passed, N failed" and gives the exit status (0 only when
 * nothing failed and something was checked; 77, meson's "skipped", after
 * check_skip()).  A failed check prints one line to stderr that says where
 * (file:line), what was checked (the expression as written), what the code
 * gave and what was wanted, so a failure reads without a debugger:
 *
 *   FAIL test_link.c:88: link_lookup(&img, "f"): got 4198400 (0x401000), want 4198416 (0x401010): f
 *
 * Every check takes an optional printf-style message after its operands
 * (a table row's name, the input that failed); it is appended to the line.
 * The checks are functions behind thin macros, so each operand is
 * evaluated once.
 */
#ifndef UBT_TEST_CHECK_H
#define UBT_TEST_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;
static const char *check_skipped; /* why the whole test was skipped */

/* The file name without its directories: "test_link.c:88" reads better. */
static inline const char *check_base(const char *file)
{
	const char *s = strrchr(file, '/');
	return s ? s + 1 : file;
}

/* Counts one check; on failure prints the head of the FAIL line. */
static inline bool check_count(bool ok, const char *file, int line, const char *expr)
{
	if (ok) {
		check_passed++;
		return true;
	}
	check_failed++;
	fprintf(stderr, "FAIL %s:%d: %s", check_base(file), line, expr);
	return false;
}

/* Ends a FAIL line with the caller's message.  The macros pass the format
 * as " " fmt so that it is never empty: the space separates it. */
static inline void check_tail(const char *fmt, va_list ap)
{
	if (fmt[0] && fmt[1]) {
		fputc(':', stderr);
		vfprintf(stderr, fmt, ap);
	}
	fputc('\n', stderr);
}

static inline __attribute__((format(printf, 5, 6))) bool
check_true(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
	if (check_count(ok, file, line, expr))
		return true;
	va_list ap;
	va_start(ap, fmt);
	check_tail(fmt, ap);
	va_end(ap);
	return false;
}

static inline __attribute__((format(printf, 6, 7))) bool
check_eq(long long got, long long want, const char *file, int line, const char *expr,
	 const char *fmt, ...)
{
	if (check_count(got == want, file, line, expr))
		return true;
	fprintf(stderr, ": got %lld (%#llx), want %lld (%#llx)", got, (unsigned long long)got, want,
		(unsigned long long)want);
	va_list ap;
	va_start(ap, fmt);
	check_tail(fmt, ap);
	va_end(ap);
	return false;
}

static inline __attribute__((format(printf, 6, 7))) bool
check_str(const char *got, const char *want, const char *file, int line, const char *expr,
	  const char *fmt, ...)
{
	bool ok = (!got && !want) || (got && want && !strcmp(got, want));
	if (check_count(ok, file, line, expr))
		return true;
	/* multi-line text (AST dumps, diagnostics) is easier to compare in blocks */
	bool block = (got && strchr(got, '\n')) || (want && strchr(want, '\n'));
	const char *sep = block ? "\n" : "";
	fprintf(stderr, ": got %s%s%s%s, want %s%s%s%s", sep, got ? "[" : "", got ? got : "NULL",
		got ? "]" : "", sep, want ? "[" : "", want ? want : "NULL", want ? "]" : "");
	va_list ap;
	va_start(ap, fmt);
	check_tail(fmt, ap);
	va_end(ap);
	return false;
}

static inline void check_hex(const char *label, const uint8_t *p, size_t n)
{
	fprintf(stderr, "  %s (%zu):", label, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", p[i]);
	fputc('\n', stderr);
}

static inline __attribute__((format(printf, 8, 9))) bool
check_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len,
	    const char *file, int line, const char *expr, const char *fmt, ...)
{
	bool ok = got_len == want_len && (!want_len || !memcmp(got, want, want_len));
	if (check_count(ok, file, line, expr))
		return true;
	fputs(": bytes differ", stderr);
	va_list ap;
	va_start(ap, fmt);
	check_tail(fmt, ap);
	va_end(ap);
	check_hex("got", got, got_len);
	check_hex("want", want, want_len);
	return false;
}

/* CHECK(cond [, fmt, ...]): cond is true. */
#define CHECK(cond, ...) check_true(!!(cond), __FILE__, __LINE__, #cond, " " __VA_ARGS__)
/* CHECK_EQ(got, want [, fmt, ...]): two integers (or pointers as integers) are equal. */
#define CHECK_EQ(got, want, ...)                                                                   \
	check_eq((long long)(got), (long long)(want), __FILE__, __LINE__, #got, " " __VA_ARGS__)
/* CHECK_STR(got, want [, fmt, ...]): two strings are equal; NULL equals only NULL. */
#define CHECK_STR(got, want, ...) check_str(got, want, __FILE__, __LINE__, #got, " " __VA_ARGS__)
/* CHECK_BYTES(got, got_len, want, want_len [, fmt, ...]): byte for byte. */
#define CHECK_BYTES(got, got_len, want, want_len, ...)                                             \
	check_bytes((const uint8_t *)(got), got_len, (const uint8_t *)(want), want_len, __FILE__, \
		    __LINE__, #got, " " __VA_ARGS__)

/* The whole test cannot run here (no permission, no kernel support): it
 * reports skipped unless a check failed before. */
static inline void check_skip(const char *why)
{
	check_skipped = why;
}

/* Prints "NAME: N passed, N failed" and returns main()'s exit status. */
static inline int check_summary(const char *name)
{
	if (check_skipped && !check_failed) {
		printf("%s: skipped: %s (%d passed before)\n", name, check_skipped, check_passed);
		return 77;
	}
	printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
	if (!check_passed && !check_failed) {
		printf("%s: nothing was checked\n", name);
		return 1;
	}
	return check_failed ? 1 : 0;
}

#endif
