/*
 * diag.c - collecting and printing diagnostics in bpftrace's format
 * (see diag.h for the exact layout).
 */
#include "diag.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void diag_init(struct diags *d, const char *filename, const char *source, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->filename = filename;
	d->source = source;
	d->source_len = len;
}

void diag_free(struct diags *d)
{
	for (int i = 0; i < d->n; i++) {
		free(d->items[i].msg);
		free(d->items[i].hint);
	}
	free(d->items);
	d->items = NULL;
	d->n = d->cap = d->nerrors = 0;
}

static struct diag *diag_add(struct diags *d, enum diag_level level, struct src_loc loc,
			     const char *fmt, va_list ap)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->items = xrealloc(d->items, d->cap * sizeof(*d->items));
	}
	struct diag *dg = &d->items[d->n++];
	memset(dg, 0, sizeof(*dg));
	dg->level = level;
	dg->loc = loc;
	if (alloc_should_fail() || vasprintf(&dg->msg, fmt, ap) < 0)
		dg->msg = xstrdup("(out of memory)");
	if (level == DIAG_ERROR)
		d->nerrors++;
	return dg;
}

struct diag *diag_error(struct diags *d, struct src_loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct diag *dg = diag_add(d, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	return dg;
}

struct diag *diag_warning(struct diags *d, struct src_loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct diag *dg = diag_add(d, DIAG_WARNING, loc, fmt, ap);
	va_end(ap);
	return dg;
}

void diag_hint(struct diag *dg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(dg->hint);
	if (alloc_should_fail() || vasprintf(&dg->hint, fmt, ap) < 0)
		dg->hint = NULL;
	va_end(ap);
}

/* Finds line `line` (1-based) of the source; returns its start and length. */
static const char *source_line(const struct diags *d, int line, size_t *len)
{
	const char *p = d->source, *end = d->source + d->source_len;
	if (!p)
		return NULL;
	for (int l = 1; l < line; l++) {
		const char *nl = memchr(p, '\n', end - p);
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	const char *nl = memchr(p, '\n', end - p);
	*len = (nl ? nl : end) - p;
	return p;
}

static void print_one(const struct diags *d, const struct diag *dg, FILE *out)
{
	const char *level = dg->level == DIAG_ERROR ? "ERROR" : "WARNING";
	const struct src_loc *l = &dg->loc;
	if (l->line <= 0) {
		fprintf(out, "%s: %s\n", level, dg->msg);
	} else {
		/* bpftrace prints a range only when it stays on one line */
		if (l->end_line == l->line || l->end_line == 0)
			fprintf(out, "%s:%d:%d-%d: %s: %s\n", d->filename, l->line, l->col,
				l->end_col, level, dg->msg);
		else
			fprintf(out, "%s:%d-%d: %s: %s\n", d->filename, l->line, l->end_line,
				level, dg->msg);
		size_t len;
		const char *src = source_line(d, l->line, &len);
		if (src) {
			fwrite(src, 1, len, out);
			fputc('\n', out);
			int end = (l->end_line == l->line || l->end_line == 0) ? l->end_col
									   : (int)len + 1;
			for (int c = 1; c < l->col; c++)
				fputc((size_t)c <= len && src[c - 1] == '\t' ? '\t' : ' ', out);
			for (int c = l->col; c < end; c++)
				fputc('~', out);
			fputc('\n', out);
		}
	}
	if (dg->hint)
		fprintf(out, "HINT: %s\n", dg->hint);
}

void diag_print(const struct diags *d, FILE *out) { diag_print_from(d, 0, out); }

void diag_print_from(const struct diags *d, int first, FILE *out)
{
	for (int i = first; i < d->n; i++)
		print_one(d, &d->items[i], out);
}

void diag_sys(const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ERROR: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (hint)
		fprintf(stderr, "HINT: %s\n", hint);
}
