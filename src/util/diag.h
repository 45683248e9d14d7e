/*
 * diag.h - diagnostics in bpftrace's format.
 *
 * Every stage reports script errors through a struct diags so that all of
 * them are collected and printed together, exactly as bpftrace prints them:
 *
 *   stdin:1:21-26: ERROR: Unknown function: cuont
 *   uprobe:./t:f { @c = cuont(); }
 *                       ~~~~~
 *   HINT: did you mean 'count'?
 *
 * Locations are 1-based lines and columns; col_end is exclusive, as in
 * bpftrace (the example above underlines columns 21..25).  A diagnostic
 * with line == 0 has no location and prints as "ERROR: msg" alone.
 */
#ifndef UBT_DIAG_H
#define UBT_DIAG_H

#include <stdio.h>
#include <stdbool.h>

struct src_loc {
	int line;      /* 1-based; 0 = no location */
	int col;       /* 1-based first column */
	int end_line;  /* last line of the range (== line for one-line ranges) */
	int end_col;   /* column one past the range on end_line */
};

enum diag_level {
	DIAG_ERROR,   /* "ERROR: "; makes the stage fail */
	DIAG_WARNING, /* "WARNING: " */
};

struct diag {
	enum diag_level level;
	struct src_loc loc;
	char *msg;
	char *hint; /* NULL or text printed as "HINT: ..." on its own line */
};

struct diags {
	const char *filename; /* "stdin" for -e, else the script path */
	const char *source;   /* the whole script text, for the quoted line */
	size_t source_len;
	struct diag *items;
	int n, cap;
	int nerrors;
};

void diag_init(struct diags *d, const char *filename, const char *source, size_t len);
void diag_free(struct diags *d);
/* Adds an error; returns the new diag so a caller may attach a hint. */
struct diag *diag_error(struct diags *d, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct diag *diag_warning(struct diags *d, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_hint(struct diag *dg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints every collected diagnostic in order, errors and warnings. */
void diag_print(const struct diags *d, FILE *out);
/* The same from the first-th diagnostic on (those a later stage added). */
void diag_print_from(const struct diags *d, int first, FILE *out);
static inline bool diag_failed(const struct diags *d) { return d->nerrors > 0; }

/*
 * System errors (not about the script): "ERROR: <msg>" and an optional
 * "HINT: <hint>" line, to stderr.  Used by attach and the driver.
 */
void diag_sys(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
