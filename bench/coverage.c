/*
 * coverage.c - how many probe sites of a file take a jump, and why the
 * others would take a breakpoint: the planner of ubt run over every USDT
 * location and every function entry of ELF files, with no process (the
 * bytes come from the file, which is what a process maps there).
 *
 *   build/bench/site_coverage [--no-debug-file] FILE...
 *
 * prints one line per site, tab-separated, for bench/coverage.py to sum:
 *
 *   FILE  usdt   python:function__entry  0x4f20a1  .eh_frame  jump                      6
 *   FILE  entry  strlen                  0x9d6c0   .dynsym    breakpoint  branch at ...  4
 *
 * Fields: the kind of site, its name, its link-time address, where the
 * bounds of its function came from (.symtab, .dynsym, debug file,
 * .eh_frame, unknown; PLT entry: a non-PIE program's stub for a library
 * function, 16 bytes no branch enters), the plan (jump, breakpoint, or error when ubt would
 * refuse the probe), the planner's reason, and the bytes the patch covers.  The planning is ubt's:
 *   - a USDT location as resolve/usdt.c and inject/plan_mid.c plan it: the
 *     function around it from ef_func_around(), arch_plan_mid_site() with
 *     every other location of the file as a site the jump must not cover
 *     (what `usdt:FILE:*:*` probes), and a location that an earlier one's
 *     jump covers after nothing but nops shares that jump;
 *   - a function entry as resolve/resolve.c and inject/session.c plan it:
 *     the symbol's size and the fill after it (ef_fill_after()),
 *     arch_plan_site_padded().  An entry whose size is unknown gets a jump
 *     without the whole-function branch check: its bounds say `unknown`.
 * --no-debug-file plans as if the separate debug file were not installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/arch/arch.h"
#include "elf/elfsym.h"
#include "elf/notes.h"
#include "util/util.h"

static void print_plan(const char *path, const char *kind, const char *name, uint64_t addr,
		       const char *from, int ret, const struct arch_site_plan *plan)
{
	const char *what = ret ? "error" : plan->kind == ARCH_PATCH_JMP ? "jump" : "breakpoint";
	const char *why = ret ? strerror(-ret) : plan->kind == ARCH_PATCH_JMP ? "" : plan->why;
	printf("%s\t%s\t%s\t0x%llx\t%s\t%s\t%s\t%d\n", path, kind, name, (unsigned long long)addr,
	       from, what, why, ret ? 0 : plan->orig_len);
}

/*
 * The code of [start, start + len), or of as much of it as the file has
 * (a function of unknown size near the end of its segment): NULL if none.
 */
static uint8_t *code_at(struct ef_file *f, uint64_t start, size_t len, size_t min)
{
	uint8_t *code = xmalloc(len);
	while (ef_read_vaddr(f, start, code, len)) {
		if (len <= min) {
			free(code);
			return NULL;
		}
		len--;
	}
	return code;
}

/* The file's memory for the planner's jump tables (arch_mem). */
static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return ef_read_vaddr(ctx, addr, buf, len);
}

/*
 * The earlier location whose jump covers the one at pc as its own (only
 * nops between: arch_site_plan.mid_cover), which attach gives pc's
 * handlers to (inject/plan_mid.c), or -1.
 */
static int covered_by(const struct arch_site_plan *plans, const int *rets, int n, uint64_t pc)
{
	for (int j = 0; j < n; j++) {
		uint64_t k = pc - plans[j].site;
		if (!rets[j] && plans[j].kind == ARCH_PATCH_JMP && pc > plans[j].site &&
		    k < (uint64_t)plans[j].orig_len && (plans[j].mid_cover >> k & 1))
			return j;
	}
	return -1;
}

static int usdt_sites(struct ef_file *f, const char *path)
{
	struct usdt_notes notes;
	int ret = usdt_notes_read(f, &notes);
	if (ret)
		return ret;
	uint64_t *pcs = xcalloc(notes.n + 1, sizeof(*pcs));
	struct arch_site_plan *plans = xcalloc(notes.n + 1, sizeof(*plans));
	int *rets = xcalloc(notes.n + 1, sizeof(*rets));
	enum ef_bounds *froms = xcalloc(notes.n + 1, sizeof(*froms));
	for (int i = 0; i < notes.n; i++)
		pcs[i] = notes.v[i].pc;
	for (int i = 0; i < notes.n; i++) {
		const struct usdt_note *n = &notes.v[i];
		struct ef_range r;
		if (ef_func_around(f, n->pc, &r, &froms[i]))
			r = (struct ef_range){n->pc, n->pc};
		size_t size = r.end - r.start;
		size_t fill = size ? ef_fill_after_func(f, r.start, size) : 0;
		size_t len = size ? size + fill : ARCH_MAX_DISPLACED;
		struct arch_mem mem = {read_mem, f};
		uint8_t *code = code_at(f, r.start, len, size ? size : 1);
		rets[i] = code ? arch_plan_mid_site(code, size, fill, r.start, n->pc, pcs, notes.n,
						    &mem, &plans[i])
			       : -EFAULT;
		free(code);
	}
	for (int i = 0; i < notes.n; i++) {
		const struct usdt_note *n = &notes.v[i];
		char *name = xasprintf("%s:%s", n->provider, n->name);
		int j = covered_by(plans, rets, notes.n, n->pc);
		print_plan(path, "usdt", name, n->pc, ef_bounds_name(froms[i]),
			   j >= 0 ? 0 : rets[i], j >= 0 ? &plans[j] : &plans[i]);
		free(name);
	}
	free(pcs);
	free(plans);
	free(rets);
	free(froms);
	usdt_notes_free(&notes);
	return 0;
}

struct entry {
	char *name;
	uint64_t value, size;
	int rank;
	bool from_debug, dynamic, plt;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

static void entry_add(const struct ef_func *fn, void *arg)
{
	struct entries *e = arg;
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 1024;
		e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
	}
	struct entry *n = &e->v[e->n++];
	*n = (struct entry){.name = xstrdup(fn->name), .value = fn->value, .size = fn->size};
	n->rank = fn->rank;
	n->from_debug = fn->debug_file;
	n->dynamic = fn->dynamic;
	n->plt = fn->plt;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return y->rank - x->rank; /* the best name of an address first */
}

static void entry_site(struct ef_file *f, const char *path, struct entry *e)
{
	uint64_t sym_size = e->size;
	e->size = ef_entry_size(f, e->value, e->size); /* as resolve.c's add_point */
	enum ef_bounds from = !e->size	      ? EF_BOUNDS_NONE
			      : !sym_size     ? EF_BOUNDS_EH_FRAME
			      : e->from_debug ? EF_BOUNDS_DEBUG_FILE
			      : e->dynamic    ? EF_BOUNDS_DYNSYM
					      : EF_BOUNDS_SYMTAB;
	uint64_t fill = ef_fill_after(f, e->value, e->size);
	size_t len = e->size ? e->size + fill : ARCH_MAX_DISPLACED;
	struct arch_site_plan plan = {0};
	uint8_t *code = code_at(f, e->value, len, e->size ? len : 1);
	int ret =
	    code ? arch_plan_site_padded(code, e->size, fill, e->value, e->value, &plan) : -EFAULT;
	print_plan(path, "entry", e->name, e->value, e->plt ? "PLT entry" : ef_bounds_name(from),
		   ret, &plan);
	free(code);
}

/* One site per address that some function symbol names, with the largest size given. */
static void entry_sites(struct ef_file *f, const char *path)
{
	struct entries e = {0};
	ef_foreach_func(f, entry_add, &e);
	if (e.n)
		qsort(e.v, e.n, sizeof(*e.v), entry_cmp);
	for (size_t i = 0, j; i < e.n; i = j) {
		struct entry best = e.v[i];
		for (j = i + 1; j < e.n && e.v[j].value == best.value; j++)
			if (e.v[j].size > best.size) {
				best.size = e.v[j].size;
				best.from_debug = e.v[j].from_debug;
				best.dynamic = e.v[j].dynamic;
			}
		entry_site(f, path, &best);
	}
	for (size_t i = 0; i < e.n; i++)
		free(e.v[i].name);
	free(e.v);
}

int main(int argc, char **argv)
{
	bool no_debug = false;
	int status = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-debug-file")) {
			no_debug = true;
			continue;
		}
		struct ef_file f;
		int ret = ef_open(&f, argv[i]);
		if (ret) {
			fprintf(stderr, "coverage: %s: %s\n", argv[i], strerror(-ret));
			status = 1;
			continue;
		}
		f.no_debug_file = no_debug;
		if ((ret = usdt_sites(&f, argv[i]))) {
			fprintf(stderr, "coverage: %s: USDT notes: %s\n", argv[i], strerror(-ret));
			status = 1;
		}
		entry_sites(&f, argv[i]);
		ef_close(&f);
	}
	return status;
}
