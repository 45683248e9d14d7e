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
 * (a table row's name, the input that failed); it is appended to the line
 * and its arguments are evaluated only when the check failed.  The checks
 * are functions behind thin macros, so each operand is evaluated once.
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

/* Counts one check; on failure prints the head of the FAIL line, which
 * check_msg() ends. */
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

/* Bytes to dump after a CHECK_BYTES failure's line. */
static const uint8_t *check_dump_got, *check_dump_want;
static size_t check_dump_got_len, check_dump_want_len;

static inline void check_hex(const char *label, const uint8_t *p, size_t n)
{
	fprintf(stderr, "  %s (%zu):", label, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", p[i]);
	fputc('\n', stderr);
}

/*
 * Ends a FAIL line with the caller's message (the macros below call it
 * only after a failure).  They pass the format as " " fmt, never empty:
 * the space separates it.
 */
static inline __attribute__((format(printf, 1, 2))) bool check_msg(const char *fmt, ...)
{
	if (fmt[0] && fmt[1]) {
		va_list ap;
		va_start(ap, fmt);
		fputc(':', stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	if (check_dump_got) {
		check_hex("got", check_dump_got, check_dump_got_len);
		check_hex("want", check_dump_want, check_dump_want_len);
		check_dump_got = check_dump_want = NULL;
	}
	return false;
}

static inline bool check_eq(long long got, long long want, const char *file, int line,
			    const char *expr)
{
	if (check_count(got == want, file, line, expr))
		return true;
	fprintf(stderr, ": got %lld (%#llx), want %lld (%#llx)", got, (unsigned long long)got, want,
		(unsigned long long)want);
	return false;
}

static inline bool check_str(const char *got, const char *want, const char *file, int line,
			     const char *expr)
{
	bool ok = (!got && !want) || (got && want && !strcmp(got, want));
	if (check_count(ok, file, line, expr))
		return true;
	/* multi-line text (AST dumps, diagnostics) is easier to compare in blocks */
	bool block = (got && strchr(got, '\n')) || (want && strchr(want, '\n'));
	const char *sep = block ? "\n" : "";
	fprintf(stderr, ": got %s%s%s%s, want %s%s%s%s", sep, got ? "[" : "", got ? got : "NULL",
		got ? "]" : "", sep, want ? "[" : "", want ? want : "NULL", want ? "]" : "");
	return false;
}

static inline bool check_bytes(const uint8_t *got, size_t got_len, const uint8_t *want,
			       size_t want_len, const char *file, int line, const char *expr)
{
	bool ok = got_len == want_len && (!want_len || !memcmp(got, want, want_len));
	if (check_count(ok, file, line, expr))
		return true;
	fputs(": bytes differ", stderr);
	check_dump_got = got, check_dump_got_len = got_len;
	check_dump_want = want, check_dump_want_len = want_len;
	return false;
}

/* CHECK(cond [, fmt, ...]): cond is true. */
#define CHECK(cond, ...)                                                                           \
	((void)(check_count(!!(cond), __FILE__, __LINE__, #cond) || check_msg(" " __VA_ARGS__)))
/* CHECK_EQ(got, want [, fmt, ...]): two integers (or pointers as integers) are equal. */
#define CHECK_EQ(got, want, ...)                                                                   \
	((void)(check_eq((long long)(got), (long long)(want), __FILE__, __LINE__, #got) ||         \
		check_msg(" " __VA_ARGS__)))
/* CHECK_STR(got, want [, fmt, ...]): two strings are equal; NULL equals only NULL. */
#define CHECK_STR(got, want, ...)                                                                  \
	((void)(check_str(got, want, __FILE__, __LINE__, #got) || check_msg(" " __VA_ARGS__)))
/* CHECK_BYTES(got, got_len, want, want_len [, fmt, ...]): byte for byte. */
#define CHECK_BYTES(got, got_len, want, want_len, ...)                                             \
	((void)(check_bytes((const uint8_t *)(got), got_len, (const uint8_t *)(want), want_len,    \
			    __FILE__, __LINE__, #got) ||                                           \
		check_msg(" " __VA_ARGS__)))

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
