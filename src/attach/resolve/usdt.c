/*
 * usdt.c - USDT probes: from `usdt:BIN:[PROVIDER:]NAME` attach points to
 * locations in ELF files, their argument operands, and their semaphores.
 *
 * Pipeline position: att_resolve() calls att_usdt_resolve() for every usdt
 * attach point before any process is touched; it adds one struct att_point
 * per location (patch.c patches each like a uprobe, but in the middle of
 * a function) and the argument lists codegen compiles the probe for
 * (cg_facts.usdt).  Planning the sites of the locations is inject's
 * (inject/plan_mid.c); taking and releasing the semaphores is a feature's
 * (features/usdt_sema.c).
 *
 * The notes are read by the ELF layer (elf/notes.c, which shows one).  A
 * note's semaphore is a 2-byte counter (a link-time address in .probes,
 * moved by the load bias only) that the program tests before computing expensive arguments: it is a count shared
 * by every tracer, so it is only ever incremented and decremented.
 *
 * Arguments are `[-]SIZE@OPERAND` in AT&T syntax, a negative size meaning
 * signed: every form GCC and Clang emit for the "nor" constraint is parsed
 * (register of any width, `disp(%base,%index,scale)`, `$imm`, `sym(%rip)`,
 * an absolute `sym`).  The location's argument list is compiled into the
 * probe (one compiled variant per distinct list, so two inlined copies
 * with different registers both read correctly): reading an argument costs
 * one or two loads, with no table lookup at run time.
 */
#include "attach/resolve/usdt.h"
#include "attach/resolve/resolve.h"
#include "attach/session.h"
#include "elf/elfsym.h"
#include "elf/findlib.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- symbols of argument operands (parsed by usdt_args.c) ------------- */

static int elf_syms_find(void *ctx, const char *name, bool tpoff, int64_t *value)
{
	struct ef_file *f = ctx;
	struct ef_symbol sym;
	if (!f || ef_find_symbol(f, name, &sym))
		return -ENOENT;
	free(sym.name);
	if (tpoff)
		return ef_tls_offset(f, sym.value, value);
	*value = (int64_t)sym.value;
	return 0;
}

struct usdt_syms usdt_elf_syms(struct ef_file *f)
{
	return (struct usdt_syms){elf_syms_find, f};
}

/* ---- resolving attach points ------------------------------------------ */

/*
 * A library or program named without a path: resolve.c's search (the
 * process's mappings, PATH, ld.so.cache, the library directories), seen
 * through /proc/PID/root with -p so a container's files are the ones read.
 */
static char *find_by_name(pid_t pid, const char *name)
{
	char *found = ef_find_binary(pid, name);
	if (found && pid > 0) {
		char *in_root = xasprintf("/proc/%d/root%s", pid, found);
		if (!access(in_root, F_OK)) {
			free(found);
			return in_root;
		}
		free(in_root);
	}
	return found;
}

/*
 * The argN a probe's code reads: bit N of the result, and where[N] the
 * first place it is read (for messages).  N above 63 counts as 63.
 */
static uint64_t args_used(const struct ast_node *n, const struct ast_node **where)
{
	if (!n)
		return 0;
	uint64_t m = 0;
	/* builtin_arg is -1 until sema has run (att_probe_name_sizes comes first) */
	if (n->kind == AST_BUILTIN && !strncmp(n->str, "arg", 3) && isdigit((unsigned char)n->str[3]) &&
	    n->builtin_arg >= 0) {
		int k = n->builtin_arg < 63 ? n->builtin_arg : 63;
		m = 1ull << k;
		if (!where[k])
			where[k] = n;
	}
	const struct ast_node *sub[] = {n->pred, n->lhs, n->rhs, n->cond, n->body, n->els};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		m |= args_used(sub[i], where);
	for (int i = 0; i < n->nkids; i++)
		m |= args_used(n->kids[i], where);
	return m;
}

/* The variant index of spec in the probe's list, adding it if new. */
static int variant_of(struct att_session *s, int probe_index, const struct cg_usdt_spec *spec)
{
	struct cg_usdt_variants *v = NULL;
	for (int i = 0; i < s->nusdt; i++)
		if (s->usdt[i].probe_index == probe_index)
			v = &s->usdt[i];
	if (!v) {
		s->usdt = xrealloc(s->usdt, (s->nusdt + 1) * sizeof(*s->usdt));
		v = &s->usdt[s->nusdt++];
		memset(v, 0, sizeof(*v));
		v->probe_index = probe_index;
	}
	for (int i = 0; i < v->nspecs; i++)
		if (!memcmp(&v->specs[i], spec, sizeof(*spec)))
			return i;
	v->specs = xrealloc(v->specs, (v->nspecs + 1) * sizeof(*v->specs));
	v->specs[v->nspecs] = *spec;
	return v->nspecs++;
}

/* usdt:BIN:[PROV:]NAME as fnmatch patterns (struct ast_attach); provider
 * NULL when omitted or empty (usdt:BIN::NAME): any provider */
struct usdt_pattern {
	const char *provider, *name;
};

static bool note_matches(const struct usdt_pattern *pat, const struct usdt_note *n)
{
	return (!pat->provider || !fnmatch(pat->provider, n->provider, 0)) &&
	       !fnmatch(pat->name, n->name, 0);
}

static int add_location(const struct ast_node *probe, int index, const struct ast_node *a,
			struct att_session *s, struct ef_file *f, const char *path,
			const struct usdt_note *note, struct diags *diags)
{
	struct cg_usdt_spec spec;
	struct usdt_arg_errs errs;
	uint64_t fstart = 0, fsize = 0;
	struct usdt_syms syms = usdt_elf_syms(f);
	usdt_args_parse(note->args, note->pc, &syms, &spec, &errs);
	const struct ast_node *where[64] = {0};
	uint64_t used = args_used(probe, where);
	int ret = 0, top = used ? 63 - __builtin_clzll(used) : -1;
	if (top >= spec.nargs) {
		diag_error(diags, where[top]->loc, "couldn't get argument %d for %s:%s:%s (it has %d)",
			   where[top]->builtin_arg, path, note->provider, note->name, spec.nargs);
		return -EINVAL;
	}
	for (int k = 0; k <= top; k++) {
		if (!(used >> k & 1))
			continue;
		/* only a script that reads an operand ubt cannot parse is refused */
		if (spec.args[k].kind == CG_USDT_BAD) {
			diag_error(diags, where[k]->loc, "usdt probe %s:%s in %s: argument %d: %s",
				   note->provider, note->name, path, k, errs.msg[k]);
			ret = -EINVAL;
		}
	}
	if (ret)
		return ret;
	/* a stripped file's bounds come from its debug file or .eh_frame */
	struct ef_range fr;
	enum ef_bounds from;
	if (ef_func_around(f, note->pc, &fr, &from)) {
		/* nothing holds it: only the location itself can be checked */
		fr = (struct ef_range){note->pc, note->pc};
	}
	fstart = fr.start;
	fsize = fr.end - fr.start;
	s->points = xrealloc(s->points, (s->npoints + 1) * sizeof(*s->points));
	struct att_point *p = &s->points[s->npoints++];
	memset(p, 0, sizeof(*p));
	p->probe = probe;
	p->attach = a;
	p->probe_index = index;
	p->path = xstrdup(path);
	p->func = xasprintf("%s:%s", note->provider, note->name);
	p->vaddr = note->pc;
	p->usdt = true;
	p->func_vaddr = fstart;
	p->func_size = fsize;
	p->fill = fsize ? ef_fill_after_func(f, fstart, fsize) : 0;
	p->func_from = fsize ? from : EF_BOUNDS_NONE;
	p->sema = note->sema;
	p->variant = variant_of(s, index, &spec);
	p->dev = f->dev;
	p->ino = f->ino;
	return 0;
}

/*
 * One binary: every note matching pat.  *nmatched counts the probes
 * matched.  quiet: one of several files a wildcard or a process gave, where
 * a file that is no ELF object (a script, a data file) is skipped, as in
 * bpftrace.
 */
static int resolve_in_file(const struct ast_node *probe, int index, const struct ast_node *a,
			   struct att_session *s, const char *path, const struct usdt_pattern *pat,
			   bool quiet, int *nmatched, struct diags *diags)
{
	struct ef_file f;
	struct usdt_notes notes;
	/* with -p the file the process runs, as attach opens it (a container's,
	 * or the one it still runs after an upgrade renamed another over it):
	 * the notes' addresses must be that file's */
	char *open = att_open_path(s->pid_hint, path);
	int oret = ef_open(&f, open);
	free(open);
	if (oret) {
		if (quiet)
			return 0;
		diag_error(diags, a->loc, "usdt target file '%s' is not an ELF file", path);
		return -ENOEXEC;
	}
	if (usdt_notes_read(&f, &notes)) {
		ef_close(&f);
		if (quiet)
			return 0;
		diag_error(diags, a->loc, "usdt target file '%s': malformed .note.stapsdt", path);
		return -EINVAL;
	}
	/* provider omitted and a plain name: it must name one provider's probe */
	if (!pat->provider && !attach_is_wild(pat->name)) {
		const char *prov = NULL;
		int nprov = 0;
		for (int i = 0; i < notes.n; i++)
			if (note_matches(pat, &notes.v[i]) &&
			    (!prov || strcmp(prov, notes.v[i].provider))) {
				prov = notes.v[i].provider;
				nprov++;
			}
		if (nprov > 1) {
			struct diag *dg = diag_error(
			    diags, a->loc, "namespace for %s not specified, matched %d probes",
			    a->str, nprov);
			diag_hint(dg, "please specify a unique namespace or use '*' to attach "
					 "to all matched probes");
			usdt_notes_free(&notes);
			ef_close(&f);
			return -EINVAL;
		}
	}
	int ret = 0;
	for (int i = 0; i < notes.n && !ret; i++) {
		if (!note_matches(pat, &notes.v[i]))
			continue;
		(*nmatched)++;
		ret = add_location(probe, index, a, s, &f, path, &notes.v[i], diags);
	}
	usdt_notes_free(&notes);
	ef_close(&f);
	return ret;
}

/*
 * The files an attach point names: usdt::p:n and usdt:* with -p, the
 * program and every object the process has mapped; a wildcard, the files
 * it matches; else the one file (a name without '/' found as resolve.c
 * finds binaries).  *quiet: several files, of which those that are not
 * ELF objects are skipped.
 */
static int usdt_files(const struct ast_node *a, struct att_session *s, char ***files, int *n,
		      bool *quiet, struct diags *diags)
{
	const struct ast_attach *at = &a->attach;
	*files = NULL;
	*n = 0;
	*quiet = true;
	if (!*at->target) {
		if (s->pid_hint <= 0) {
			diag_error(diags, a->loc, "usdt probe must specify at least path or pid to probe");
			return -EINVAL;
		}
		int ret = proc_objects(s->pid_hint, files, n);
		if (ret)
			diag_error(diags, a->loc, "pid %d: %s", (int)s->pid_hint, strerror(-ret));
		return ret;
	}
	if (attach_is_wild(at->target)) {
		glob_t g = {0};
		if (glob(at->target, 0, NULL, &g) || !g.gl_pathc) {
			char *shown = attach_plain(at->target);
			diag_error(diags, a->loc, "usdt target file '%s' does not exist", shown);
			free(shown);
			globfree(&g);
			return -ENOENT;
		}
		*files = xcalloc(g.gl_pathc, sizeof(char *));
		for (size_t i = 0; i < g.gl_pathc; i++)
			(*files)[(*n)++] = xstrdup(g.gl_pathv[i]);
		globfree(&g);
		return 0;
	}
	*quiet = false;
	char *plain = attach_plain(at->target), *path = NULL;
	if (!strchr(plain, '/'))
		path = find_by_name(s->pid_hint, plain);
	if (!path)
		path = xstrdup(plain);
	struct stat st;
	char *open = att_open_path(s->pid_hint, path);
	bool bad = stat(open, &st) || !S_ISREG(st.st_mode);
	free(open);
	if (bad) {
		diag_error(diags, a->loc, "usdt target file '%s' does not exist", plain);
		free(plain);
		free(path);
		return -ENOENT;
	}
	free(plain);
	*files = xcalloc(1, sizeof(char *));
	(*files)[(*n)++] = path;
	return 0;
}

int att_usdt_resolve(const struct ast_node *probe, int index, const struct ast_node *a,
		     struct att_session *s, struct diags *diags)
{
	const struct ast_attach *at = &a->attach;
	struct usdt_pattern pat = {at->ns && *at->ns ? at->ns : NULL, at->func};
	char **files;
	int nfiles, nmatched = 0;
	bool quiet;
	int ret = usdt_files(a, s, &files, &nfiles, &quiet, diags);
	for (int i = 0; i < nfiles && !ret; i++)
		ret = resolve_in_file(probe, index, a, s, files[i], &pat, quiet, &nmatched, diags);
	proc_objects_free(files, nfiles);
	if (!ret && !nmatched && !attach_is_wild(pat.name) &&
	    !(pat.provider && attach_is_wild(pat.provider))) {
		diag_error(diags, a->loc, "usdt probe not found: %s", a->str);
		ret = -ENOENT;
	}
	return ret;
}

void att_usdt_free(struct att_session *s)
{
	for (int i = 0; i < s->nusdt; i++) {
		free(s->usdt[i].specs);
		att_probe_names_free(&s->usdt[i]);
	}
	free(s->usdt);
	s->usdt = NULL;
	s->nusdt = s->nsemas = 0;
	att_sys_dyn_free(s);
}
