/*
 * srcline.c - uprobe:BIN@FILE:LINE[:COL] (bpftrace 0.26): the addresses of
 * a source line, from BIN's DWARF line table (libdw), as a debugger places
 * a breakpoint on a line.
 *
 * FILE names the end of a source path (`inl.c`, `src/inl.c`, an absolute
 * path), matched at a '/' boundary; two different files that both end so
 * are ambiguous, as in bpftrace.  Of the line table's rows for that file
 * and line (and column, when given) only statement starts (is_stmt) count,
 * and of those one per function instance: the lowest address in each
 * DW_TAG_subprogram and in each DW_TAG_inlined_subroutine that holds the
 * line.  A line compiled into several places of one instance (a loop's
 * condition duplicated before the loop) is probed at its first, so a probe
 * fires once per time the line runs in the usual shapes; every inlined copy
 * of a static function is probed (bpftrace 0.26 takes only the first row
 * of the whole table).
 */
#include "attach/session.h"
#include "resolve.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* Does path end with file at a path component's start? */
static bool path_ends_with(const char *path, const char *file)
{
	size_t lp = strlen(path), lf = strlen(file);
	if (lf > lp || strcmp(path + lp - lf, file))
		return false;
	return lf == lp || path[lp - lf - 1] == '/' || file[0] == '/';
}

struct found {
	uint64_t *addr;	 /* per instance: its lowest address */
	uint64_t *owner; /* the instance's DIE offset */
	int n;
	const char *path; /* the one matching source path */
	char *err;
	/* line 0 (ubt -l): the lines with a statement start, unsorted */
	uint32_t *lines;
	int nlines;
};

/* The innermost function instance (subprogram or inlined copy) at addr in cu. */
static uint64_t instance_at(Dwarf_Die *cu, uint64_t addr)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr, &scopes);
	uint64_t off = 0;
	for (int i = 0; i < n && !off; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			off = dwarf_dieoffset(&scopes[i]);
	}
	free(scopes);
	return off ? off : ~0ull; /* no function: one group of its own */
}

static void add_row(struct found *f, uint64_t owner, uint64_t addr)
{
	for (int i = 0; i < f->n; i++)
		if (f->owner[i] == owner) {
			if (addr < f->addr[i])
				f->addr[i] = addr;
			return;
		}
	f->addr = xrealloc(f->addr, (size_t)(f->n + 1) * sizeof(*f->addr));
	f->owner = xrealloc(f->owner, (size_t)(f->n + 1) * sizeof(*f->owner));
	f->addr[f->n] = addr;
	f->owner[f->n++] = owner;
}

/* The rows of one compilation unit; false (with f->err) on an ambiguous file. */
static bool scan_cu(Dwarf_Die *cu, const char *file, uint32_t line, uint32_t col, uint64_t bias,
		    struct found *f)
{
	Dwarf_Lines *lines;
	size_t n;
	if (dwarf_getsrclines(cu, &lines, &n))
		return true;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (!src || !path_ends_with(src, file))
			continue;
		if (f->path && strcmp(f->path, src)) {
			free(f->err);
			f->err = xasprintf("Ambiguous source path, matches multiple files: %s, %s",
					   f->path, src);
			return false;
		}
		f->path = src;
		int ln, lc;
		bool stmt;
		Dwarf_Addr a;
		if (dwarf_lineno(l, &ln) || ln <= 0 || (line && (uint32_t)ln != line) ||
		    dwarf_linebeginstatement(l, &stmt) || !stmt || dwarf_lineaddr(l, &a))
			continue;
		if (col && (dwarf_linecol(l, &lc) || (uint32_t)lc != col))
			continue;
		bool end;
		if (!dwarf_lineendsequence(l, &end) && end)
			continue;
		if (!line) {
			f->lines = xrealloc(f->lines, (size_t)(f->nlines + 1) * sizeof(*f->lines));
			f->lines[f->nlines++] = (uint32_t)ln;
			continue;
		}
		add_row(f, instance_at(cu, a), a + bias);
	}
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every row of file (line 0: every line) in the binary at path, into f. */
static void scan_all(const char *path, const char *file, uint32_t line, uint32_t col,
		     struct found *f)
{
	struct att_dwarf *d = att_dwarf_open(path);
	uint64_t bias = 0;
	Dwarf *dw = d ? att_dwarf_handle(d, &bias) : NULL;
	if (!dw) {
		f->err = xasprintf("No DWARF debug info found for '%s', cannot attach by source "
				   "code location.",
				   path);
		if (d)
			att_dwarf_close(d);
		return;
	}
	Dwarf_Off off = 0, next;
	size_t hsize;
	bool ok = true;
	while (ok && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu))
			ok = scan_cu(&cu, file, line, col, bias, f);
		off = next;
	}
	if (ok && !f->path)
		f->err = xasprintf("No compilation unit matches %s", file);
	else if (ok && !f->n && line && col)
		f->err = xasprintf("Unable to map '%s:%u:%u' to address", file, line, col);
	else if (ok && !f->n && line)
		f->err = xasprintf("Unable to map '%s:%u' to address", file, line);
	att_dwarf_close(d);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int att_src_lines(const char *path, const char *file, uint32_t **lines, int *n, char **err)
{
	struct found f = {0};
	scan_all(path, file, 0, 0, &f);
	*lines = NULL;
	*n = 0;
	*err = f.err;
	if (f.err) {
		free(f.lines);
		return -1;
	}
	if (f.nlines)
		qsort(f.lines, (size_t)f.nlines, sizeof(*f.lines), cmp_u32);
	for (int i = 0; i < f.nlines; i++) /* unique */
		if (!*n || f.lines[i] != f.lines[*n - 1])
			f.lines[(*n)++] = f.lines[i];
	*lines = f.lines;
	return 0;
}

int att_src_line_addrs(const char *path, const char *file, uint32_t line, uint32_t col,
		       uint64_t **addrs, int *naddrs, char **err)
{
	*addrs = NULL;
	*naddrs = 0;
	struct found f = {0};
	scan_all(path, file, line, col, &f);
	*err = NULL;
	free(f.owner);
	if (f.err) {
		free(f.addr);
		*err = f.err;
		return -1;
	}
	qsort(f.addr, (size_t)f.n, sizeof(*f.addr), cmp_u64);
	*addrs = f.addr;
	*naddrs = f.n;
	return 0;
}
