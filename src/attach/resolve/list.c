/*
 * list.c - `ubt -l [SEARCH] [-p PID]`: the probes a script could attach
 * to, one per line, as bpftrace 0.17 lists them (SPDK's scripts/bpf/gen.py
 * splits these lines on ':'):
 *
 *   ubt -l 'uprobe:./t:*'          uprobe:./t:do_io           (BIN as written)
 *   ubt -l 'uretprobe:./t:do*'     uretprobe:./t:do_io
 *   ubt -l 'usdt:./t:*'            usdt:./t:ubt:io_start
 *   ubt -l 'uprobe:libc:mallo*'    uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc
 *   ubt -l '*:./t:*'               both kinds
 *   ubt -l -p PID                  uprobe:/proc/PID/root/ABS/PATH:func  (the program)
 *                                  usdt:/proc/PID/root/ABS/PATH:prov:name  (the program
 *                                  and every object it has mapped)
 *   ubt -l 'usdt:*' -p PID         the process's usdt probes only
 *   ubt -l '*sleep*' -p PID        the process's probes whose name matches
 *   ubt -l 'tracepoint:syscalls:sys_enter_w*'
 *                                  tracepoint:syscalls:sys_enter_write (syscalls.c)
 *   ubt -l 'uprobe:./t@t.c:*'      uprobe:./t@t.c:12, one per line that has a
 *                                  statement (srcline.c)
 *
 * The search is parsed as attach points (tools/ubt.c, parse_listing), so
 * it gets the script's error messages.  Functions come from .symtab,
 * .dynsym and the separate debug file (elfsym.c, as bpftrace reads them),
 * IFUNCs included, gcc's split-off `.part.N` pieces left out as bpftrace
 * leaves them out.  Lines are sorted and unique within each probe type,
 * uprobes before usdt.
 *
 * Every line pastes back into a script unchanged: a name or path with a
 * character the parser does not take unquoted (a `$`, `@`, a space, a
 * wildcard character, a quote) is printed quoted, with `"` and `\` escaped:
 *
 *   usdt:./usdt_quoted_probe:test:"\"probe1\""
 *   uprobe:/lib/x86_64-linux-gnu/libc.so.6:"clock_nanosleep@@GLIBC_2.17"
 *
 * (bpftrace prints those raw, and its parser then refuses them.)  Nothing
 * here stops the process; only files are read.
 */
#include "attach/attach.h"
#include "attach/resolve/syscalls.h"
#include "attach/resolve/usdt.h"
#include "elf/elfsym.h"
#include "elf/findlib.h"
#include "util/demangle.h"
#include "util/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct lines {
	char **v;
	int n;
};

static void add(struct lines *l, char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines are "KEY\1LINE": sorted by the names as the binary has them (as
 * bpftrace sorts), printed as the parser reads them back (put_name). */
static void flush(struct lines *l, FILE *out)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp);
	for (int i = 0; i < l->n; i++)
		if (!i || strcmp(l->v[i], l->v[i - 1]))
			fprintf(out, "%s\n", strchr(l->v[i], 1) + 1);
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * A name as the parser reads it back (above): as is, or as a string
 * literal whose value is a pattern matching exactly the name (fnmatch's
 * `*?[]\` escaped with a backslash, and then the literal's own `"` and
 * `\` escapes).
 */
static void put_name(struct buf *b, const char *s)
{
	bool plain = *s != 0;
	for (const char *p = s; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || strchr("_-./#+", *p);
	if (plain) {
		buf_append(b, s, strlen(s));
		return;
	}
	buf_append(b, "\"", 1);
	for (const char *p = s; *p; p++) {
		if (strchr("*?[]\\", *p))
			buf_append(b, "\\\\", 2); /* a pattern escape, itself escaped */
		if (*p == '"' || *p == '\\')
			buf_append(b, "\\", 1);
		buf_append(b, p, 1);
	}
	buf_append(b, "\"", 1);
}

static char *line_of(const char *type, const char *path, const char *ns, const char *name)
{
	struct buf b = {0};
	buf_printf(&b, "%s:%s:%s%s%s\1%s:", type, path, ns ? ns : "", ns ? ":" : "", name, type);
	put_name(&b, path);
	buf_append(&b, ":", 1);
	if (ns) {
		put_name(&b, ns);
		buf_append(&b, ":", 1);
	}
	put_name(&b, name);
	return b.data;
}

struct list_ctx {
	struct lines up, us;
	const struct ast_node *a;
	struct diags *diags;
	bool verbose;
	int nfiles; /* files looked at: nothing at all means nothing was named */
};

struct func_match {
	const char *pat;
	struct lfunc {
		uint64_t value;
		char *name;
	} *v;
	int n;
};

/* as bpftrace: the mangled name matches, or its demangled form does */
static void func_match(const struct ef_func *ef, void *arg)
{
	struct func_match *m = arg;
	if (strstr(ef->name, ".part."))
		return;
	bool ok = !fnmatch(m->pat, ef->name, 0);
	if (!ok) {
		char *dem = demangle(ef->name);
		if (dem) {
			char *base = demangle_base(dem);
			ok = !fnmatch(m->pat, dem, 0) || !fnmatch(m->pat, base, 0);
			free(base);
			free(dem);
		}
	}
	if (ok) {
		m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
		m->v[m->n++] = (struct lfunc){ef->value, xstrdup(ef->name)};
	}
}

/* Functions of path (shown as `shown`) matching pat: "type:SHOWN:func" lines. */
static void list_funcs(struct list_ctx *c, const char *type, const char *path, const char *shown,
		       const char *pat, bool quiet)
{
	struct ef_file f;
	if (ef_open(&f, path)) {
		if (!quiet)
			diag_error(c->diags, c->a->loc, "%s target file '%s' is not an ELF file", type,
				   shown);
		return;
	}
	c->nfiles++;
	struct func_match m = {pat, NULL, 0};
	ef_foreach_func(&f, func_match, &m);
	struct att_dwarf *dw = NULL;
	static bool warned; /* bpftrace says it once */
	if (c->verbose && m.n && !(dw = att_dwarf_open(path)) && !warned) {
		fprintf(stderr, "WARNING: No DWARF found for \"%s\", cannot show parameter info\n",
			shown);
		warned = true;
	}
	for (int i = 0; i < m.n; i++) {
		char *line = line_of(type, shown, NULL, m.v[i].name);
		char *params = dw ? att_dwarf_params_text(dw, m.v[i].value) : NULL;
		add(&c->up, params ? xasprintf("%s%s", line, params) : xstrdup(line));
		free(line);
		free(params);
		free(m.v[i].name);
	}
	free(m.v);
	att_dwarf_close(dw);
	ef_close(&f);
}

/*
 * uprobe:BIN@FILE:LINE[:COL]: listed when the line has a statement to probe
 * (else the probe's own error); uprobe:BIN@FILE:*: every line of FILE that
 * has one, in line order (resolve/srcline.c).
 */
static void list_src(struct list_ctx *c, const char *path, const char *shown)
{
	const struct ast_attach *at = &c->a->attach;
	char *err = NULL, *col = at->src_col ? xasprintf(":%u", at->src_col) : xstrdup("");
	uint32_t *lines = NULL;
	uint64_t *addrs = NULL;
	int n = 0;
	c->nfiles++;
	if (at->src_line ? att_src_line_addrs(path, at->src_file, at->src_line, at->src_col, &addrs,
					      &n, &err)
			 : att_src_lines(path, at->src_file, &lines, &n, &err)) {
		diag_error(c->diags, c->a->loc, "%s", err);
		free(err);
		free(col);
		return;
	}
	for (int i = 0; i < (at->src_line ? 1 : n); i++) {
		uint32_t line = at->src_line ? at->src_line : lines[i];
		add(&c->up, xasprintf("%s@%s:%010u%s\1uprobe:%s@%s:%u%s", shown, at->src_file, line,
				      col, shown, at->src_file, line, col));
	}
	free(addrs);
	free(lines);
	free(col);
}

/* USDT probes of path matching the patterns (prov NULL: any provider). */
static void list_usdt(struct list_ctx *c, const char *path, const char *shown, const char *prov,
		      const char *name, bool quiet)
{
	struct ef_file f;
	struct usdt_notes notes;
	if (ef_open(&f, path)) {
		if (!quiet)
			diag_error(c->diags, c->a->loc, "usdt target file '%s' is not an ELF file",
				   shown);
		return;
	}
	c->nfiles++;
	if (!usdt_notes_read(&f, &notes)) {
		for (int i = 0; i < notes.n; i++) {
			const struct usdt_note *n = &notes.v[i];
			if ((!prov || !fnmatch(prov, n->provider, 0)) && !fnmatch(name, n->name, 0))
				add(&c->us, line_of("usdt", shown, n->provider, n->name));
		}
		usdt_notes_free(&notes);
	}
	ef_close(&f);
}

/*
 * The files a target names, with the path each is shown as (the
 * caller frees both lists):
 *   ""/NULL or "*" with -p: the process's program (uprobes) or objects (usdt);
 *   a wildcard: the files it matches (quiet: non-ELF files are skipped);
 *   a name without '/': the program or library the dynamic linker would use;
 *   a path: that file, shown as written.
 */
static int target_files(struct list_ctx *c, const char *type, const char *target, pid_t pid,
			bool usdt, char ***paths, char ***shown, int *n, bool *quiet)
{
	*paths = *shown = NULL;
	*n = 0;
	*quiet = true;
	if (!target || !*target || (pid > 0 && !strcmp(target, "*"))) {
		if (pid <= 0)
			return 0;
		int ret = proc_objects(pid, paths, n);
		if (ret) {
			diag_error(c->diags, c->a->loc, "pid %d: %s", (int)pid, strerror(-ret));
			return ret;
		}
		if (!usdt) /* bpftrace lists the program's functions only */
			for (; *n > 1; (*n)--)
				free((*paths)[*n - 1]);
		*shown = xcalloc(*n, sizeof(char *));
		for (int i = 0; i < *n; i++)
			(*shown)[i] = xstrdup((*paths)[i]);
		return 0;
	}
	if (attach_is_wild(target)) {
		glob_t g = {0};
		if (!glob(target, 0, NULL, &g)) {
			*paths = xcalloc(g.gl_pathc, sizeof(char *));
			*shown = xcalloc(g.gl_pathc, sizeof(char *));
			for (size_t i = 0; i < g.gl_pathc; i++) {
				struct stat st;
				if (stat(g.gl_pathv[i], &st) || !S_ISREG(st.st_mode))
					continue;
				(*paths)[*n] = xstrdup(g.gl_pathv[i]);
				(*shown)[(*n)++] = xstrdup(g.gl_pathv[i]);
			}
		}
		globfree(&g);
		return 0;
	}
	*quiet = false;
	char *plain = attach_plain(target);
	char *path = strchr(plain, '/') ? xstrdup(plain) : ef_find_binary(pid, plain);
	struct stat st;
	char *open = path ? att_open_path(pid, path) : NULL;
	if (!path || stat(open, &st) || !S_ISREG(st.st_mode)) {
		if (usdt)
			diag_error(c->diags, c->a->loc, "usdt target file '%s' does not exist", plain);
		else
			diag_error(c->diags, c->a->loc,
				   "%s target file '%s' does not exist or is not executable", type,
				   plain);
		free(plain);
		free(path);
		free(open);
		return -ENOENT;
	}
	*paths = xcalloc(1, sizeof(char *));
	*shown = xcalloc(1, sizeof(char *));
	(*paths)[0] = open;
	/* as written; a library found by name, by where it was found */
	(*shown)[0] = strchr(plain, '/') ? xstrdup(plain) : xstrdup(path);
	*n = 1;
	free(plain);
	free(path);
	return 0;
}

static int list_type(struct list_ctx *c, const char *type, pid_t pid)
{
	const struct ast_attach *at = &c->a->attach;
	bool usdt = !strcmp(type, "usdt");
	char **paths, **shown;
	int n;
	bool quiet;
	int ret = target_files(c, type, at->target, pid, usdt, &paths, &shown, &n, &quiet);
	const char *func = at->func && *at->func ? at->func : "*";
	for (int i = 0; i < n; i++) {
		if (usdt)
			list_usdt(c, paths[i], shown[i], at->ns && *at->ns ? at->ns : NULL, func, quiet);
		else if (at->src_file)
			list_src(c, paths[i], shown[i]);
		else
			list_funcs(c, type, paths[i], shown[i], func, quiet);
	}
	proc_objects_free(paths, n);
	proc_objects_free(shown, n);
	return ret;
}

/*
 * tracepoint:syscalls:NAME and tracepoint:raw_syscalls:NAME (syscalls.c:
 * tracefs, else the table), with -v their fields but the common ones, as
 * bpftrace prints them:
 *
 *   tracepoint:syscalls:sys_enter_write
 *       int __syscall_nr
 *       unsigned int fd
 */
static int list_tracepoints(struct list_ctx *c)
{
	const struct ast_attach *at = &c->a->attach;
	int n = 0;
	char **ev = att_sys_events(at->target, at->func, &n);
	for (int i = 0; i < n; i++) {
		struct buf b = {0};
		struct att_sys_format f;
		buf_printf(&b, "%s\1tracepoint:%s:%s", ev[i], at->target, ev[i]);
		if (c->verbose && !att_sys_format(at->target, ev[i], &f)) {
			for (int k = 0; k < f.nfields; k++) {
				const struct att_sys_field *fl = &f.fields[k];
				if (strncmp(fl->name, "common_", 7))
					buf_printf(&b, "\n    %s %s", fl->type, fl->name);
				if (strncmp(fl->name, "common_", 7) && fl->count)
					buf_printf(&b, "[%d]", fl->count);
			}
			att_sys_format_free(&f);
		}
		add(&c->up, b.data);
		free(ev[i]);
	}
	free(ev);
	c->nfiles++;
	return 0;
}

static const char *const user_types[] = {"uprobe", "uretprobe", "usdt"};
static const char *const kernel_types[] = {
    "kprobe",   "kretprobe", "tracepoint", "rawtracepoint",   "software", "hardware",
    "watchpoint", "asyncwatchpoint", "kfunc", "kretfunc", "iter"};

/* One attach point of the search; 0 or -errno (after a message). */
static int list_point(struct list_ctx *c, pid_t pid)
{
	const struct ast_attach *at = &c->a->attach;
	int ret = 0;
	if (at->kernel) {
		struct diag *d;
		if (!strcmp(at->provider, "tracepoint")) /* tracepoint:sched:* */
			d = diag_error(
			    c->diags, c->a->loc,
			    "tracepoint:%s:%s needs the kernel tracer: ubt traces user space only",
			    at->target, at->func);
		else
			d = diag_error(
			    c->diags, c->a->loc,
			    "%s probes need the kernel tracer: ubt traces user space only",
			    at->provider);
		diag_hint(d, "bpftrace -l lists them; ubt lists uprobe, uretprobe and usdt probes");
		return -EINVAL;
	}
	if (!strcmp(at->provider, "tracepoint"))
		return list_tracepoints(c);
	if (!attach_is_wild(at->provider)) {
		for (size_t i = 0; i < ARRAY_SIZE(user_types); i++)
			if (!strcmp(at->provider, user_types[i]))
				ret = list_type(c, user_types[i], pid);
		return ret; /* BEGIN, END, interval, profile: nothing to list */
	}
	/* bpftrace lists no return probes for a wildcard type */
	bool any = false;
	if (!fnmatch(at->provider, "uprobe", 0)) {
		any = true;
		ret = list_type(c, "uprobe", pid);
	}
	if (!ret && !fnmatch(at->provider, "usdt", 0)) {
		any = true;
		ret = list_type(c, "usdt", pid);
	}
	for (size_t i = 0; !any && i < ARRAY_SIZE(kernel_types); i++) {
		if (fnmatch(at->provider, kernel_types[i], 0))
			continue;
		struct diag *d = diag_error(c->diags, c->a->loc,
					    "'%s' matches only probe types of the kernel tracer: ubt "
					    "traces user space only", at->provider);
		diag_hint(d, "bpftrace -l lists them; ubt lists uprobe, uretprobe and usdt probes");
		return -EINVAL;
	}
	return ret;
}

int att_list(const struct ast_node *prog, pid_t pid, bool verbose, FILE *out, struct diags *diags)
{
	int ret = 0;
	for (int i = 0; i < prog->nkids && !ret; i++) {
		for (int j = 0; j < prog->kids[i]->nkids && !ret; j++) {
			struct list_ctx c = {.a = prog->kids[i]->kids[j], .diags = diags,
					     .verbose = verbose};
			ret = list_point(&c, pid);
			if (!ret && !c.nfiles && !c.up.n && !c.us.n && pid <= 0 &&
			    (!c.a->attach.target || !*c.a->attach.target)) {
				/* `ubt -l`, `ubt -l '*sleep*'`: no binary, no process */
				struct diag *d = diag_error(diags, c.a->loc,
							    "nothing to list: name a binary or a process");
				diag_hint(d, "ubt lists the probes of a program or library (ubt -l "
					     "'uprobe:BIN:*', 'usdt:BIN:*') or of a process (ubt -l -p "
					     "PID); bpftrace -l lists kernel probes");
				ret = -EINVAL;
			}
			flush(&c.up, out);
			flush(&c.us, out);
		}
	}
	return ret ? ret : diag_failed(diags) ? -EINVAL : 0;
}
