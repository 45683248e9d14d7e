/*
 * resolve.c - from uprobe attach points in the script to functions in ELF
 * files, before any process is touched: a missing binary or function is a
 * script error, reported at the attach point like bpftrace does.
 *
 *   uprobe:./t:f                ./t, symbol f (.symtab, else .dynsym)
 *   uprobe:libc:malloc          a library by name, found as the dynamic linker
 *                               would: the -p process's mappings, PATH (for
 *                               programs), /etc/ld.so.cache, the usual
 *                               library directories
 *   uprobe:/lib/x/libc.so.6:f   with -p: the file as the process sees it
 *                               (/proc/PID/root/lib/x/libc.so.6: containers)
 *   uprobe:*:foo, uprobe:./t:h*  wildcards (fnmatch): with -p, a binary
 *                               pattern matches the objects the process has
 *                               loaded (`*` = all of them), else a glob
 *   uprobe:./t:f+0x10           an offset, checked to be an instruction
 *                               boundary by decoding f from the file
 *   uprobe:./t:0x401136         an address in the file (link-time)
 *   uprobe:./t:"ns::foo(int)"   C++: the demangled name, or without its
 *                               parameters when only one overload has it
 *
 * Each matched function becomes one struct att_point; several names for
 * one address (aliases) are one point.  A point at an offset or at an
 * address inside a function is a mid-function site (the USDT kind of
 * trampoline, which saves every register); inject/plan_mid.c plans
 * those once the process is open.
 */
#include "attach/session.h"
#include "elf/elfsym.h"
#include "elf/findlib.h"
#include "sema/sema.h"
#include "util/demangle.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_uprobe(const struct ast_node *a)
{
	return a->attach.provider && (!strcmp(a->attach.provider, "uprobe") ||
				      !strcmp(a->attach.provider, "uretprobe"));
}

/* ---- the attach text ------------------------------------------------------ */

/* uprobe:TARGET:FUNC[+OFF] | uprobe:TARGET:ADDR | uprobe:TARGET:cpp:FUNC,
 * from the split the parser made (struct ast_attach: fnmatch patterns) */
struct uspec {
	char *target;     /* a pattern if wild_target, else the path */
	char *func;       /* a pattern if wild_func, else the name; NULL for an address */
	bool wild_target, wild_func;
	bool cpp;         /* written as TARGET:cpp:FUNC: match demangled names only */
	bool has_off;
	uint64_t off;
	bool has_addr;
	uint64_t addr;
	const struct ast_attach *src; /* uprobe:BIN@FILE:LINE[:COL] (src->src_file) */
};

static bool parse_u64(const char *s, uint64_t *v)
{
	if (!*s || *s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !*end && !errno;
}

/* A pattern as itself when it has a wildcard, else the name it stands for. */
static char *pattern_or_name(const char *pat, bool *wild)
{
	*wild = attach_is_wild(pat);
	return *wild ? xstrdup(pat) : attach_plain(pat);
}

static int parse_spec(const struct ast_node *a, struct uspec *u, struct diags *diags)
{
	const struct ast_attach *at = &a->attach;
	memset(u, 0, sizeof(*u));
	if (at->src_file && at->target && *at->target) { /* the parser checked the rest */
		u->target = pattern_or_name(at->target, &u->wild_target);
		u->src = at;
		return 0;
	}
	if (!at->target || !*at->target || !at->func || !*at->func) {
		diag_error(diags, a->loc, "uprobe needs a binary and a function: uprobe:BIN:FUNC");
		return -EINVAL;
	}
	u->cpp = at->ns && !strcmp(at->ns, "cpp");
	u->target = pattern_or_name(at->target, &u->wild_target);
	uint64_t v;
	if (!at->has_offset && parse_u64(at->func, &v)) {
		u->has_addr = true;
		u->addr = v;
	} else {
		u->func = pattern_or_name(at->func, &u->wild_func);
		u->has_off = at->has_offset;
		u->off = at->offset;
	}
	if ((u->has_off || u->has_addr) && !strcmp(at->provider, "uretprobe")) {
		diag_error(diags, a->loc, "uretprobe cannot be attached at an offset or address: %s",
			   at->func);
		return -EINVAL;
	}
	if (u->has_off && u->wild_func) {
		diag_error(diags, a->loc, "an offset cannot be combined with a wildcard: %s", at->func);
		return -EINVAL;
	}
	return 0;
}

static void uspec_free(struct uspec *u)
{
	free(u->target);
	free(u->func);
}

/* ---- finding a binary by name ----------------------------------------------- */

/*
 * A file the process maps as `path (deleted)` (it was replaced or removed
 * since: an upgrade in place) while the file at `path` now is another one,
 * or none (open: what ubt opened for path, NULL if nothing): the mapped
 * one, through /proc/PID/map_files, said once per path; else NULL.  The
 * answers are kept: resolve and attach ask for every point.
 */
static char *replaced_file(pid_t pid, const char *path, const char *open)
{
	static struct {
		pid_t pid;
		char *path, *file; /* file NULL: not replaced */
	} seen[32];
	static int nseen;
	for (int i = 0; i < nseen; i++)
		if (seen[i].pid == pid && !strcmp(seen[i].path, path))
			return seen[i].file ? xstrdup(seen[i].file) : NULL;
	struct proc_map *maps;
	int n;
	struct stat st;
	char *file = NULL, *gone = xasprintf("%s (deleted)", path);
	bool have = open && !stat(open, &st);
	dev_t dev = 0;
	ino_t ino = 0;
	if (!proc_maps_read(pid, &maps, &n)) {
		for (int i = 0; i < n && !file; i++)
			if (!strcmp(maps[i].path, gone) &&
			    !(have && st.st_ino == maps[i].ino && st.st_dev == maps[i].dev)) {
				file = xasprintf("/proc/%d/map_files/%llx-%llx", (int)pid,
						 (unsigned long long)maps[i].start,
						 (unsigned long long)maps[i].end);
				dev = maps[i].dev;
				ino = maps[i].ino;
			}
		proc_maps_free(maps, n);
	}
	free(gone);
	if (file && access(file, R_OK)) {
		/* map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; the
		 * program itself is also /proc/PID/exe, which needs neither */
		char *exe = xasprintf("/proc/%d/exe", (int)pid);
		struct stat est;
		free(file);
		file = NULL;
		if (!stat(exe, &est) && est.st_ino == ino && est.st_dev == dev)
			file = exe;
		else {
			free(exe);
			fprintf(
			    stderr,
			    "WARNING: pid %d runs %s as it was before it was replaced or removed, "
			    "and ubt cannot read that file (/proc/%d/map_files needs "
			    "CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE)\n",
			    (int)pid, path, (int)pid);
		}
	}
	if (file)
		fprintf(stderr,
			"WARNING: pid %d runs %s as it was before it was replaced or removed: "
			"probing the file the process runs (%s)\n",
			(int)pid, path, file);
	if (nseen < (int)(sizeof(seen) / sizeof(seen[0])))
		seen[nseen++] = (typeof(seen[0])){pid, xstrdup(path), file ? xstrdup(file) : NULL};
	return file;
}

/*
 * The path ubt opens for a binary the user wrote as `path`: with -p, an
 * absolute path is the file the process sees (/proc/PID/root/PATH, so a
 * container's own libc is probed, not the host's), or the one it still
 * runs after that file was replaced (replaced_file).
 */
char *att_open_path(pid_t pid, const char *path)
{
	if (pid > 0 && path[0] == '/' && strncmp(path, "/proc/", 6)) {
		char *p = xasprintf("/proc/%d/root%s", (int)pid, path);
		bool there = !access(p, F_OK);
		char *old = replaced_file(pid, path, there ? p : NULL);
		if (old) {
			free(p);
			return old;
		}
		if (there)
			return p;
		free(p);
	}
	return xstrdup(path);
}

/* ---- symbols ------------------------------------------------------------ */

struct fsym {
	char *name;
	char *dem;        /* demangled, or NULL */
	uint64_t value, size;
	int rank;         /* global/weak and default version rank higher */
};

struct fsyms {
	struct fsym *v;
	int n;
	bool has_symtab; /* the file's .symtab, or its debug file's */
	bool debug_file; /* symbols came from its debug file */
};

struct syms_ctx {
	struct fsyms *out;
	bool want_dem;
};

static void syms_add(const struct ef_func *ef, void *arg)
{
	struct syms_ctx *c = arg;
	struct fsyms *out = c->out;
	if (!ef->dynamic)
		out->has_symtab = true;
	if (ef->debug_file)
		out->debug_file = true;
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n++] = (struct fsym){xstrdup(ef->name), c->want_dem ? demangle(ef->name) : NULL,
					 ef->value, ef->size, ef->rank};
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Of two names of one address, the one a program calls it by: the higher
 * rank (global or weak, the default version), then fewer leading
 * underscores (_setjmp over __GI__setjmp), then the shorter, then the
 * first in strcmp order.
 */
static bool name_better(const struct fsym *x, const struct fsym *y)
{
	if (x->rank != y->rank)
		return x->rank > y->rank;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx < ly;
	return strcmp(x->name, y->name) < 0;
}

/* Function symbols as bpftrace sees them (elfsym.c: .symtab, .dynsym, the
 * debug file), a name at one address once, with its best rank. */
static void syms_read(struct ef_file *f, struct fsyms *out, bool want_dem)
{
	memset(out, 0, sizeof(*out));
	struct syms_ctx c = {out, want_dem};
	ef_foreach_func(f, syms_add, &c);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), fsym_cmp);
	int k = 0;
	for (int i = 0; i < out->n; i++) {
		struct fsym *cur = &out->v[i];
		if (k && !fsym_cmp(&out->v[k - 1], cur)) {
			if (cur->rank > out->v[k - 1].rank)
				out->v[k - 1].rank = cur->rank;
			free(cur->name);
			free(cur->dem);
			continue;
		}
		out->v[k++] = *cur;
	}
	out->n = k;
}

static void syms_free(struct fsyms *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].dem);
	}
	free(s->v);
}

/*
 * The symbols of the last files resolved, kept: a script with a probe per
 * function of one binary (`ubt -l` output pasted back, SPDK's generated
 * scripts) reads and demangles the binary's symbols once, not once per
 * attach point.  A file is known by device and inode.
 */
#define SYMS_CACHE 8

static struct syms_cache {
	dev_t dev;
	ino_t ino;
	bool dem;
	struct fsyms ss;
} syms_cache[SYMS_CACHE];
static int syms_cache_next;

static const struct fsyms *syms_get(struct ef_file *f, bool want_dem)
{
	for (int i = 0; i < SYMS_CACHE; i++) {
		struct syms_cache *e = &syms_cache[i];
		if (e->ino && e->dev == f->dev && e->ino == f->ino && (e->dem || !want_dem))
			return &e->ss;
	}
	struct syms_cache *e = &syms_cache[syms_cache_next++ % SYMS_CACHE];
	syms_free(&e->ss);
	syms_read(f, &e->ss, want_dem);
	e->dev = f->dev;
	e->ino = f->ino;
	e->dem = want_dem;
	return &e->ss;
}

/* The function symbol whose [value, value + size) holds vaddr, best rank first. */
static const struct fsym *syms_around(const struct fsyms *s, uint64_t vaddr)
{
	const struct fsym *best = NULL;
	for (int i = 0; i < s->n; i++) {
		const struct fsym *f = &s->v[i];
		if (vaddr >= f->value && vaddr < f->value + (f->size ? f->size : 1) &&
		    (!best || f->rank > best->rank))
			best = f;
	}
	return best;
}

/* vaddr is in an executable PT_LOAD segment's file bytes. */
static bool in_code(struct ef_file *f, uint64_t vaddr)
{
	size_t n;
	if (elf_getphdrnum(f->elf, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			return true;
	}
	return false;
}

/* An executable has PT_INTERP or is ET_EXEC; a library has neither. */
static bool is_executable(struct ef_file *f)
{
	if (!f->is_pie)
		return true;
	size_t n;
	if (elf_getphdrnum(f->elf, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

/*
 * Debian ships shared libraries 0644: a library given by path need not be
 * executable (attach then checks that the process has it mapped).
 */
static bool is_shared_object(const char *path)
{
	struct ef_file f;
	if (ef_open(&f, path))
		return false;
	bool lib = f.is_pie && !is_executable(&f);
	ef_close(&f);
	return lib;
}

/* ---- points ------------------------------------------------------------- */

struct rctx {
	const struct ast_node *probe, *a;
	int index;
	struct att_session *s;
	struct diags *diags;
	const struct uspec *u;
	int nmatched;
};

static bool point_exists(const struct att_session *s, const struct ast_node *a,
			 const struct ef_file *f, uint64_t vaddr)
{
	for (int i = 0; i < s->npoints; i++) {
		const struct att_point *p = &s->points[i];
		if (p->attach == a && p->dev == f->dev && p->ino == f->ino && p->vaddr == vaddr)
			return true;
	}
	return false;
}

static struct att_point *add_point(struct rctx *c, struct ef_file *f, const char *path,
				   const char *func, uint64_t vaddr, uint64_t size)
{
	struct att_session *s = c->s;
	s->points = xrealloc(s->points, (s->npoints + 1) * sizeof(*s->points));
	struct att_point *p = &s->points[s->npoints++];
	memset(p, 0, sizeof(*p));
	p->probe = c->probe;
	p->attach = c->a;
	p->probe_index = c->index;
	p->path = xstrdup(path);
	p->func = xstrdup(func);
	p->vaddr = vaddr;
	/* a symbol without a size: .eh_frame's, so that the branch check runs */
	p->size = ef_entry_size(f, vaddr, size);
	/* a function shorter than a jmp may be patched over its fill */
	p->fill = ef_fill_after(f, vaddr, p->size);
	p->dev = f->dev;
	p->ino = f->ino;
	p->main_exe = is_executable(f);
	p->variant = -1;
	return p;
}

/*
 * A probe inside a function (FUNC+OFF or an address that is not a
 * function's first byte): the offset must start an instruction, which the
 * function's decoded bytes tell (arch_plan_mid_site refuses anything else).
 */
static int add_mid_point(struct rctx *c, struct ef_file *f, const char *path,
			 const struct fsym *fn, uint64_t vaddr, const char *shown)
{
	uint64_t fstart = fn ? fn->value : vaddr, fsize = fn ? fn->size : 0;
	enum ef_bounds from = EF_BOUNDS_NONE; /* a symbol: the dump needs no source */
	struct ef_range fr;
	/* no symbol with a size holds it (stripped): .eh_frame may know the function */
	if (!fsize && !ef_fde_around(f, vaddr, &fr) && (!fn || fr.start == fn->value)) {
		fstart = fr.start;
		fsize = fr.end - fr.start;
		from = EF_BOUNDS_EH_FRAME;
	}
	if (fn && fsize && vaddr >= fstart + fsize) {
		diag_error(c->diags, c->a->loc, "Offset outside the function bounds ('%s' size is %llu)",
			   fn->name, (unsigned long long)fsize);
		return -EINVAL;
	}
	size_t len = fsize ? fsize : (vaddr - fstart) + ARCH_MAX_DISPLACED;
	uint8_t *code = xmalloc(len);
	struct arch_site_plan plan;
	int ret = ef_read_vaddr(f, fstart, code, len);
	if (ret && !fsize) {
		len = vaddr - fstart + 1; /* near the end of the segment */
		ret = ef_read_vaddr(f, fstart, code, len);
	}
	if (!ret)
		ret = arch_plan_mid_site(code, fsize, 0, fstart, vaddr, NULL, 0, NULL, &plan);
	free(code);
	if (ret) {
		diag_error(c->diags, c->a->loc,
			   "Could not add uprobe into middle of instruction: %s:%s", path, shown);
		return -EINVAL;
	}
	if (point_exists(c->s, c->a, f, vaddr))
		return 0;
	struct att_point *p = add_point(c, f, path, shown, vaddr, 0);
	p->mid = true;
	p->func_vaddr = fstart;
	p->func_size = fsize;
	p->func_from = from;
	p->variant = -1;
	c->nmatched++;
	return 0;
}

static bool sym_matches(const struct fsym *f, const char *pat, bool wild, bool cpp)
{
	if (wild) {
		/* as bpftrace: a wildcard leaves out the parts gcc split off a
		 * function (foo.part.0), which only the function itself calls */
		if (strstr(f->name, ".part."))
			return false;
		if (!cpp && !fnmatch(pat, f->name, 0))
			return true;
		if (!f->dem)
			return false;
		if (!fnmatch(pat, f->dem, 0))
			return true;
		char *b = demangle_base(f->dem);
		bool m = !fnmatch(pat, b, 0);
		free(b);
		return m;
	}
	return !cpp && !strcmp(f->name, pat);
}

/* Demangled matches: the full signature, else the name without parameters. */
static int match_demangled(const struct fsyms *ss, const char *name, const struct fsym **out,
			   int max)
{
	int n = 0;
	for (int pass = 0; pass < 2 && !n; pass++) {
		for (int i = 0; i < ss->n; i++) {
			const struct fsym *f = &ss->v[i];
			if (!f->dem)
				continue;
			bool m;
			if (!pass) {
				m = !strcmp(f->dem, name);
			} else {
				char *b = demangle_base(f->dem);
				m = !strcmp(b, name);
				free(b);
			}
			bool dup = false;
			for (int k = 0; k < n; k++)
				dup |= out[k]->value == f->value;
			if (m && !dup && n < max)
				out[n++] = f;
		}
	}
	return n;
}

/*
 * The functions an exact name names: every definition of the symbol of
 * that name with the best rank (a global over a static one of the same
 * name; two static functions of one name in two files are both taken, as
 * the name `ubt -l` prints for them means both), else the one C++
 * function whose demangled name it is.  Returns how many (at most max),
 * -ENOENT if none, -EINVAL (with the message) for a C++ name that fits
 * several overloads.
 */
static int find_exact(struct rctx *c, const struct fsyms *ss, const char *path,
		      const struct fsym **cand, int max)
{
	const char *name = c->u->func;
	int n = 0;
	int best = -1;
	for (int i = 0; i < ss->n && !c->u->cpp; i++) {
		const struct fsym *f = &ss->v[i];
		if (strcmp(f->name, name))
			continue;
		if (f->rank > best) {
			best = f->rank;
			n = 0;
		}
		bool dup = false;
		for (int k = 0; k < n; k++)
			dup |= cand[k]->value == f->value;
		if (f->rank == best && !dup && n < max)
			cand[n++] = f;
	}
	if (n)
		return n;
	n = match_demangled(ss, name, cand, max);
	if (!n)
		return -ENOENT;
	if (n > 1) {
		struct buf b = {0};
		for (int k = 0; k < n && k < 6; k++)
			buf_printf(&b, "%s%s at 0x%llx", k ? ", " : "",
				   cand[k]->dem ? cand[k]->dem : cand[k]->name,
				   (unsigned long long)cand[k]->value);
		if (n > 6)
			buf_printf(&b, ", ...");
		struct diag *d = diag_error(c->diags, c->a->loc,
					    "ambiguous function name '%s' in %s: %d functions have it",
					    name, path, n);
		diag_hint(d, "%s; name one by its full signature or address (uprobe:%s:0x%llx), "
			     "or use a wildcard to probe them all",
			  b.data, path, (unsigned long long)cand[0]->value);
		buf_free(&b);
		return -EINVAL;
	}
	return n;
}

/* Every entry of this uprobe is a mid-function point (probe_inline, or a
 * script that reads a register the entry trampoline does not save): sema
 * compiled its handlers for that kind (sema_stack_kind), so no entry of it
 * may take the other kind's trampoline (a wildcard's neither). */
static bool entries_are_mid(const struct rctx *c)
{
	return (c->s->probe_inline || sema_all_regs) && !strcmp(c->a->attach.provider, "uprobe");
}

/*
 * A function's entry as a point.  It is a mid-function point (every
 * register saved, the stack unwound by CFI) when the probe's other points
 * may be inside functions: a source line (its line may start a function),
 * and every uprobe under probe_inline (an inlined copy is inside the
 * function it was inlined into) or sema_all_regs; sema types such probes'
 * reg() and ustack as mid-function ones (sema_stack_kind).
 */

static int entry_point(struct rctx *c, struct ef_file *f, const char *path, const struct fsym *fn,
		       const char *shown)
{
	bool mid = c->u->src || entries_are_mid(c);
	if (mid)
		return add_mid_point(c, f, path, fn, fn->value, shown);
	if (!point_exists(c->s, c->a, f, fn->value))
		add_point(c, f, path, shown, fn->value, fn->size);
	c->nmatched++;
	return 0;
}

/* uprobe:BIN:ADDR, or one address of a source line: a function's entry
 * or a place inside one */
static int add_addr_point(struct rctx *c, struct ef_file *f, const char *path,
			  const struct fsyms *ss, uint64_t addr)
{
	const struct fsym *fn = syms_around(ss, addr);
	int ret = 0;
	char *shown = fn && fn->value == addr ? xstrdup(fn->name)
		      : fn ? xasprintf("%s+%llu", fn->name, (unsigned long long)(addr - fn->value))
			   : xasprintf("0x%llx", (unsigned long long)addr);
	if (fn && fn->value == addr) {
		ret = entry_point(c, f, path, fn, shown);
	} else if (!in_code(f, addr)) {
		struct diag *d =
		    diag_error(c->diags, c->a->loc, "Could not resolve address: %s:0x%llx", path,
			       (unsigned long long)addr);
		diag_hint(d, "0x%llx is in no function and no executable segment of %s",
			  (unsigned long long)addr, path);
		ret = -EINVAL;
	} else {
		ret = add_mid_point(c, f, path, fn, addr, shown);
	}
	free(shown);
	return ret;
}

/* The number of inlined copies of the spec's function in path. */
static int inline_count(struct rctx *c, const char *path)
{
	uint64_t *addrs;
	char *dpath = att_open_path(c->s->pid_hint, path);
	int n = att_inline_copies(dpath, c->u->func, &addrs);
	free(dpath);
	free(addrs);
	return n;
}

/*
 * The inlined copies of an exactly named function (bpftrace 0.21's
 * probe_inline): with `config = { probe_inline = 1 }` each is a point (at
 * its first instruction, inside the function it was inlined into); else a
 * probe on the out-of-line function says once how many calls it misses.
 * A uretprobe cannot take a copy (it does not return), nor can `args` be
 * read there (the arguments are where the compiler left them).  Returns
 * the number of copies probed, or a negative error.
 */
static int inline_copies(struct rctx *c, struct ef_file *f, const char *path,
			 const struct fsyms *ss, bool found)
{
	const struct uspec *u = c->u;
	uint64_t *addrs;
	char *dpath = att_open_path(c->s->pid_hint, path);
	int n = att_inline_copies(dpath, u->func, &addrs);
	free(dpath);
	int ret = 0;
	bool ret_probe = !strcmp(c->a->attach.provider, "uretprobe");
	if (!n || !c->s->resolving) {
		/* other passes over the points (`args`, the probes' names) say nothing */
		ret = found ? 0 : n;
	} else if (!c->s->probe_inline) {
		if (found && !c->s->quiet) {
			/* where: the functions they were inlined into, the first few */
			struct buf where = {0};
			for (int i = 0; i < n && i < 6; i++) {
				const struct fsym *fn = syms_around(ss, addrs[i]);
				if (fn)
					buf_printf(&where, "%s%s+%llu", i ? ", " : "", fn->name,
						   (unsigned long long)(addrs[i] - fn->value));
				else
					buf_printf(&where, "%s0x%llx", i ? ", " : "",
						   (unsigned long long)addrs[i]);
			}
			diag_warning(c->diags, c->a->loc,
				     "%s has %d inlined cop%s in %s that this probe misses (%s%s); "
				     "config = { probe_inline = 1 } probes %s too",
				     u->func, n, n == 1 ? "y" : "ies", path,
				     where.data ? where.data : "", n > 6 ? ", ..." : "",
				     n == 1 ? "it" : "them");
			buf_free(&where);
		}
		ret = 0;
	} else if (ret_probe) {
		diag_error(c->diags, c->a->loc,
			   "uretprobe cannot be attached to the %d inlined cop%s of %s in %s: an "
			   "inlined copy does not return",
			   n, n == 1 ? "y" : "ies", u->func, path);
		ret = -EINVAL;
	} else if (att_uses_args(c->probe->body, 0) || att_uses_args(c->probe->pred, 0)) {
		diag_error(c->diags, c->a->loc,
			   "args cannot be read at the %d inlined cop%s of %s in %s: ubt reads "
			   "arguments where the calling convention puts them",
			   n, n == 1 ? "y" : "ies", u->func, path);
		ret = -EINVAL;
	} else {
		for (int i = 0; i < n && !ret; i++)
			ret = add_addr_point(c, f, path, ss, addrs[i]);
		ret = ret ? ret : n;
	}
	free(addrs);
	return ret;
}

static int resolve_in_file(struct rctx *c, const char *path, bool quiet_missing)
{
	const struct uspec *u = c->u;
	char *opath = att_open_path(c->s->pid_hint, path);
	struct ef_file f;
	int ret = ef_open(&f, opath);
	free(opath);
	if (ret) {
		if (quiet_missing)
			return 0;
		diag_error(c->diags, c->a->loc, "uprobe target file '%s' is not an ELF file", path);
		return -ENOEXEC;
	}
	/*
	 * A return probe replaces a return address, and Go's runtime walks
	 * goroutine stacks (GC, preemption, growth, tracebacks): it dies of the
	 * address it does not know (`unexpected return pc`), as under kernel
	 * bpftrace.  Refused until returns are probed in place (issue 25).
	 */
	if (!strcmp(c->a->attach.provider, "uretprobe") && ef_elf_is_go(f.elf)) {
		struct diag *d =
		    diag_error(c->diags, c->a->loc,
			       "uretprobe on a Go program (%s) is not supported: Go's "
			       "runtime walks goroutine stacks and would kill the program "
			       "at the return address ubt puts there",
			       path);
		diag_hint(d,
			  "probe the function's entry; bpftrace's uretprobe kills Go programs too");
		ret = -ENOTSUP;
		goto out;
	}
	bool wild = u->wild_func;
	const struct fsyms *cached = syms_get(&f, demangle_enabled() || u->cpp || !wild);
	struct fsyms ss = *cached;
	if (u->has_addr) {
		ret = add_addr_point(c, &f, path, &ss, u->addr);
		goto out;
	}
	if (u->src) {
		/* every statement start of the line, one per function instance */
		uint64_t *addrs;
		int n;
		char *err;
		if (!u->src->src_line) { /* `*`: ubt -l's */
			struct diag *d = diag_error(c->diags, c->a->loc, "Invalid line number: *");
			diag_hint(d,
				  "a probe names one line; ubt -l 'uprobe:BIN@FILE:*' lists them");
			ret = -EINVAL;
			goto out;
		}
		char *dpath = att_open_path(c->s->pid_hint, path);
		if (att_src_line_addrs(dpath, u->src->src_file, u->src->src_line, u->src->src_col,
				       &addrs, &n, &err)) {
			diag_error(c->diags, c->a->loc, "%s", err);
			free(err);
			ret = -ENOENT;
		}
		for (int i = 0; !ret && i < n; i++)
			ret = add_addr_point(c, &f, path, &ss, addrs[i]);
		free(dpath);
		if (!ret)
			free(addrs);
		goto out;
	}
	if (wild) {
		/* one point per address (ss.v is sorted by address), named by the
		 * best of the matching names there: _setjmp, not __GI__setjmp */
		for (int i = 0; i < ss.n;) {
			const struct fsym *best = NULL;
			int j = i;
			for (; j < ss.n && ss.v[j].value == ss.v[i].value; j++)
				if (sym_matches(&ss.v[j], u->func, true, u->cpp) &&
				    (!best || name_better(&ss.v[j], best)))
					best = &ss.v[j];
			for (int k = i; k < j; k++)
				c->nmatched += best && sym_matches(&ss.v[k], u->func, true, u->cpp);
			if (best && entries_are_mid(c))
				ret =
				    ret ? ret
					: add_mid_point(c, &f, path, best, best->value, best->name);
			else if (best && !point_exists(c->s, c->a, &f, best->value))
				add_point(c, &f, path, best->name, best->value, best->size);
			i = j;
		}
		goto out;
	}
	const struct fsym *cand[16];
	int ncand = find_exact(c, &ss, path, cand, 16);
	ret = ncand < 0 ? ncand : 0;
	if (!u->has_off && ret != -EINVAL) {
		/* its inlined copies: probed, warned about, or the only ones */
		int k = inline_copies(c, &f, path, &ss, ret != -ENOENT);
		if (k < 0 || (k > 0 && ret == -ENOENT)) {
			ret = k < 0 ? k : 0;
			goto out;
		}
	}
	if (ret == -ENOENT) {
		ret = 0;
		if (quiet_missing)
			goto out;
		struct diag *d = diag_error(c->diags, c->a->loc, "Could not resolve symbol: %s:%s",
					    path, u->func);
		int ninl = inline_count(c, path);
		if (ninl)
			diag_hint(d,
				  "%s exists only inlined in %s (%d cop%s): config = { "
				  "probe_inline = 1 } probes %s",
				  u->func, path, ninl, ninl == 1 ? "y" : "ies",
				  ninl == 1 ? "it" : "them");
		else if (!ss.has_symtab)
			diag_hint(d, "%s has no symbol table (.symtab: stripped?); looked in its %d "
				     "exported functions (.dynsym). Install its debug symbols, or "
				     "probe an address (uprobe:%s:0xADDR)",
				  path, ss.n, path);
		else if (ss.debug_file)
			diag_hint(d, "looked in the %d functions of %s (.dynsym and its debug file)",
				  ss.n, path);
		else
			diag_hint(d, "looked in the %d functions of %s (.symtab)", ss.n, path);
		ret = -ENOENT;
		goto out;
	}
	for (int k = 0; k < ncand && !ret; k++) {
		const struct fsym *fn = cand[k];
		if (u->has_off && u->off) {
			char *shown = xasprintf("%s+%llu", fn->name, (unsigned long long)u->off);
			ret = add_mid_point(c, &f, path, fn, fn->value + u->off, shown);
			free(shown);
			continue;
		}
		ret = entry_point(c, &f, path, fn, fn->name);
	}
out:
	ef_close(&f);
	return ret;
}

/* Mapped files of the -p process matching a binary pattern (`*`: all). */
static int match_loaded(struct rctx *c, const char *pat, char ***out)
{
	struct proc_map *maps;
	int n, cnt = 0;
	*out = NULL;
	if (proc_maps_read(c->s->pid_hint, &maps, &n))
		return 0;
	for (int i = 0; i < n; i++) {
		const char *p = maps[i].path;
		if (p[0] != '/' || !maps[i].ino || strstr(p, " (deleted)") || !strchr(maps[i].perms, 'x'))
			continue;
		const char *base = strrchr(p, '/') + 1;
		if (fnmatch(pat, p, 0) && fnmatch(pat, base, 0))
			continue;
		bool dup = false;
		for (int k = 0; k < cnt; k++)
			dup |= !strcmp((*out)[k], p);
		if (dup)
			continue;
		*out = xrealloc(*out, (cnt + 1) * sizeof(char *));
		(*out)[cnt++] = xstrdup(p);
	}
	proc_maps_free(maps, n);
	return cnt;
}

static int resolve_point(const struct ast_node *probe, int index, const struct ast_node *a,
			 struct att_session *s, struct diags *diags)
{
	struct uspec u;
	if (parse_spec(a, &u, diags)) {
		uspec_free(&u);
		return -EINVAL;
	}
	struct rctx c = {probe, a, index, s, diags, &u, 0};
	int ret = 0;
	if (u.wild_target) {
		char **paths = NULL;
		int n = 0;
		glob_t g = {0};
		if (s->pid_hint > 0) {
			n = match_loaded(&c, u.target, &paths);
		} else if (!glob(u.target, 0, NULL, &g)) {
			n = (int)g.gl_pathc;
			paths = xcalloc(n, sizeof(char *));
			for (int i = 0; i < n; i++)
				paths[i] = xstrdup(g.gl_pathv[i]);
		}
		globfree(&g);
		for (int i = 0; i < n && !ret; i++)
			ret = resolve_in_file(&c, paths[i], true);
		for (int i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		if (!ret && !n) {
			struct diag *d = diag_error(diags, a->loc, "no binary matches '%s'", u.target);
			if (s->pid_hint > 0)
				diag_hint(d, "matched against the files pid %d has mapped",
					  (int)s->pid_hint);
			ret = -ENOENT;
		}
		if (!ret && !c.nmatched && !u.wild_func) {
			diag_error(diags, a->loc, "Could not resolve symbol: %s:%s", u.target,
				   u.func ? u.func : "");
			ret = -ENOENT;
		}
		goto out;
	}
	char *path = NULL;
	if (!strchr(u.target, '/')) {
		path = ef_find_binary(s->pid_hint, u.target);
		if (!path) {
			char *where = ef_find_binary_where(s->pid_hint);
			struct diag *d = diag_error(
			    diags, a->loc, "uprobe target file '%s' does not exist or is not executable",
			    u.target);
			diag_hint(d, "no program or library named '%s' in %s", u.target, where);
			free(where);
			ret = -ENOENT;
			goto out;
		}
	} else {
		path = xstrdup(u.target);
		char *opath = att_open_path(s->pid_hint, path);
		struct stat st;
		bool ok = !stat(opath, &st) && S_ISREG(st.st_mode) &&
			  (!access(opath, X_OK) || is_shared_object(opath));
		free(opath);
		if (!ok) {
			diag_error(diags, a->loc,
				   "uprobe target file '%s' does not exist or is not executable",
				   u.target);
			free(path);
			ret = -ENOENT;
			goto out;
		}
	}
	ret = resolve_in_file(&c, path, false);
	free(path);
out:
	uspec_free(&u);
	return ret;
}

int att_resolve_one(const struct ast_node *probe, int index, const struct ast_node *a,
		    struct att_session *s, struct diags *diags)
{
	return is_uprobe(a) ? resolve_point(probe, index, a, s, diags) : 0;
}

/* config = { probe_inline = 1 } or BPFTRACE_PROBE_INLINE=1 (the environment wins) */
static bool probe_inline_wanted(const struct ast_node *prog)
{
	const char *e = getenv("BPFTRACE_PROBE_INLINE");
	if (e)
		return !strcmp(e, "1") || !strcmp(e, "true");
	const struct ast_node *cfg = prog->prog ? prog->prog->config : NULL;
	for (int i = 0; cfg && i < cfg->nkids; i++) {
		const struct ast_node *a = cfg->kids[i];
		const char *n = a->lhs->str;
		if (!strncasecmp(n, "bpftrace_", 9))
			n += 9;
		if (strcasecmp(n, "probe_inline"))
			continue;
		return a->rhs->kind == AST_INT
			   ? a->rhs->uval != 0
			   : a->rhs->kind == AST_IDENT && !strcmp(a->rhs->str, "true");
	}
	return false;
}

int att_resolve(const struct ast_node *prog, struct att_session *s, struct diags *diags)
{
	int ret = 0;
	s->probe_inline = probe_inline_wanted(prog);
	s->resolving = true;
	for (int i = 0; i < prog->nkids; i++) {
		const struct ast_node *probe = prog->kids[i];
		for (int j = 0; j < probe->nkids; j++) {
			const struct ast_node *a = probe->kids[j];
			if (is_uprobe(a) && resolve_point(probe, i, a, s, diags))
				ret = -EINVAL;
			if (a->attach.provider && !strcmp(a->attach.provider, "usdt") &&
			    att_usdt_resolve(probe, i, a, s, diags))
				ret = -EINVAL;
			if (att_sys_resolve(probe, i, a, s, diags)) /* syscalls.c */
				ret = -EINVAL;
		}
	}
	att_inline_forget();
	s->resolving = false;
	if (!ret)
		att_probe_names(prog, s); /* names.c */
	return ret;
}
