/*
 * stack.c - ustack on ubt's side: the facts the runtime's walk needs, the
 * CFI unwinder for stacks recorded without frame pointers, and the text.
 *
 * Pipeline position: output (with one step at attach).  Probe code records
 * a stack id (runtime/rt_stack.c); an id names an entry of the shared stack
 * table, which holds frames from a frame-pointer walk and, when that walk
 * reached code without frame pointers, the registers and a copy of the
 * stack at the probe.  Such an entry is unwound here with the target's CFI
 * (.eh_frame, through libdwfl's dwfl_attach_state/dwfl_getthread_frames,
 * memory reads served from the copy), once per entry, and cached.
 *
 * out_stack_prepare() runs before probes are armed: it writes into the
 * shared header the main thread's stack range and the executable ranges of
 * the target, each marked RT_CODE_FP when most of the object's code (by
 * size) keeps a frame pointer, judged from its CFI in the middle of each
 * function (CFA = %rbp + 16), and the outermost functions
 * (__libc_start_call_main, start_thread) as RT_CODE_END, where a stack
 * ends as it does in bpftrace.
 */
#include "output.h"
#include "stack.h"
#include "sym.h"
#include "attach/elfsym.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DW_RBP 6
#define DW_RSP 7

/* ---- facts for the runtime ------------------------------------------------- */

/* Most of the object's code (by size) has CFA = %rbp + 16 mid-function. */
static bool object_keeps_fp(Elf *elf, const struct out_sym_func *fs, int n)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return false;
	uint64_t fp = 0, all = 0;
	for (int i = 0; i < n; i++) {
		if (fs[i].size < 8 || (i && fs[i].value == fs[i - 1].value))
			continue;
		Dwarf_Frame *fr;
		if (dwarf_cfi_addrframe(cfi, fs[i].value + fs[i].size / 2, &fr))
			continue;
		Dwarf_Op *ops;
		size_t nops;
		/* libdw gives a register rule as DW_OP_bregx reg, off */
		if (!dwarf_frame_cfa(fr, &ops, &nops) && nops == 1 &&
		    ((ops[0].atom == DW_OP_bregx && ops[0].number == DW_RBP) ||
		     ops[0].atom == DW_OP_breg0 + DW_RBP))
			fp += fs[i].size;
		all += fs[i].size;
		free(fr);
	}
	dwarf_cfi_end(cfi);
	return all && fp * 2 >= all;
}

static void add_range(struct rt_stack_facts *f, uint64_t lo, uint64_t hi, uint32_t flags)
{
	if (f->nranges >= RT_STACK_RANGES || lo >= hi)
		return;
	f->ranges[f->nranges++] = (struct rt_code_range){lo, hi, flags, 0};
	if (!f->code_lo || lo < f->code_lo)
		f->code_lo = lo;
	if (hi > f->code_hi)
		f->code_hi = hi;
}

static const char *const end_funcs[] = {"__libc_start_call_main", "start_thread"};

static const uint8_t *stk_data; /* the data part, for out_stack_text() */

/*
 * The flags of executable mapping m's code range (RT_CODE_FP when its
 * object keeps frame pointers); with ends, its outermost functions
 * (end_funcs) become RT_CODE_END ranges of f first.
 */
static uint32_t mapping_flags(struct rt_stack_facts *f, const struct proc_map *m, bool ends)
{
	const struct out_sym_func *fs;
	int n;
	uint64_t bias;
	void *elf;
	if (out_sym_funcs(m->start, &fs, &n, &bias, &elf))
		return 0;
	for (int k = 0; ends && k < n; k++)
		for (size_t e = 0; e < ARRAY_SIZE(end_funcs); e++)
			if (!strcmp(fs[k].name, end_funcs[e]) && fs[k].size &&
			    bias + fs[k].value >= m->start && bias + fs[k].value < m->end)
				add_range(f, bias + fs[k].value, bias + fs[k].value + fs[k].size,
					  RT_CODE_END);
	return object_keeps_fp(elf, fs, n) ? RT_CODE_FP : 0;
}

void out_stack_prepare(void *data)
{
	struct rt_shm_header *h = data;
	stk_data = data;
	struct rt_stack_facts *f = &h->stk;
	if (!f->table_off)
		return;
	int nmaps;
	const struct proc_map *maps = out_sym_maps(&nmaps);
	struct rt_code_range code[RT_STACK_RANGES];
	int ncode = 0;
	for (int i = 0; i < nmaps; i++) {
		const struct proc_map *m = &maps[i];
		if (m->perms[2] != 'x' || m->path[0] != '/' || ncode >= RT_STACK_RANGES)
			continue;
		uint32_t flags = mapping_flags(f, m, true);
		code[ncode++] = (struct rt_code_range){m->start, m->end, flags, 0};
	}
	for (int i = 0; i < ncode; i++) /* END ranges first: they lie inside code ranges */
		add_range(f, code[i].lo, code[i].hi, code[i].flags);
}

/*
 * After the target loaded a library (attach/dlopen.c armed its probes): its
 * code joins the ranges, so a walk goes on through it.  The runtime may be
 * reading the facts: each range is complete before nranges counts it, and
 * the hull only widens.
 */
void out_stack_loaded(void *data)
{
	struct rt_shm_header *h = data;
	struct rt_stack_facts *f = &h->stk;
	if (!f->table_off)
		return;
	int nmaps;
	const struct proc_map *maps = out_sym_maps(&nmaps);
	for (int i = 0; i < nmaps && f->nranges < RT_STACK_RANGES; i++) {
		const struct proc_map *m = &maps[i];
		if (m->perms[2] != 'x' || m->path[0] != '/')
			continue;
		bool known = false;
		for (uint32_t k = 0; k < f->nranges && !known; k++)
			known = m->start < f->ranges[k].hi && f->ranges[k].lo < m->end &&
				!(f->ranges[k].flags & RT_CODE_END);
		if (known)
			continue;
		/* no END ranges: they must come before the code ranges around them */
		uint32_t flags = mapping_flags(f, m, false);
		f->ranges[f->nranges] = (struct rt_code_range){m->start, m->end, flags, 0};
		if (m->start < f->code_lo)
			__atomic_store_n(&f->code_lo, m->start, __ATOMIC_RELEASE);
		if (m->end > f->code_hi)
			__atomic_store_n(&f->code_hi, m->end, __ATOMIC_RELEASE);
		__atomic_store_n(&f->nranges, f->nranges + 1, __ATOMIC_RELEASE);
	}
}

/* ---- the table --------------------------------------------------------------- */

static const struct rt_stack_entry *find_entry(const uint8_t *data, uint64_t id,
					       const struct rt_stack_table **tp)
{
	const struct rt_shm_header *h = (const struct rt_shm_header *)data;
	if (!id || !h->stk.table_off)
		return NULL;
	const struct rt_stack_table *t = (const void *)(data + h->stk.table_off);
	*tp = t;
	uint64_t mask = t->cap - 1;
	for (uint64_t k = 0; k <= mask; k++) {
		const struct rt_stack_entry *e =
			(const void *)((const uint8_t *)t + t->entries_off +
				       ((id + k) & mask) * t->entry_size);
		if (!e->id)
			return NULL;
		if (e->id == id)
			return __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) ? e : NULL;
	}
	return NULL;
}

/* ---- CFI unwinding of a stack copy --------------------------------------------- */

struct unwind {
	const struct rt_stack_entry *e;
	const uint8_t *copy;
	uint64_t pc;
	uint64_t *out;
	int n, max;
};

static struct {
	Dwfl *dwfl;
	int nmaps; /* of the snapshot it was built from */
	struct unwind *cur;
	bool failed;
} U;

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return 1;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	(void)arg;
	const struct rt_stack_entry *e = U.cur->e;
	if (addr < e->sp || addr + 8 > e->sp + e->copy_len)
		return false;
	memcpy(result, U.cur->copy + (addr - e->sp), 8);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	(void)arg;
	Dwarf_Word regs[2] = {U.cur->e->rbp, U.cur->e->sp};
	if (!dwfl_thread_state_registers(thread, DW_RBP, 2, regs))
		return false;
	dwfl_thread_state_register_pc(thread, U.cur->pc);
	return true;
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = cb_next_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static Dwfl *get_dwfl(void)
{
	int nmaps;
	const struct proc_map *maps = out_sym_maps(&nmaps);
	if (U.dwfl && U.nmaps == nmaps)
		return U.dwfl;
	if (U.dwfl)
		dwfl_end(U.dwfl);
	U.dwfl = dwfl_begin(&offline);
	U.nmaps = nmaps;
	if (!U.dwfl)
		return NULL;
	dwfl_report_begin(U.dwfl);
	for (int i = 0; i < nmaps; i++) {
		const struct proc_map *m = &maps[i];
		bool seen = false;
		for (int j = 0; j < i; j++)
			seen |= maps[j].ino == m->ino && maps[j].dev == m->dev;
		if (m->path[0] != '/' || !m->ino || seen)
			continue;
		const struct out_sym_func *fs;
		int n;
		uint64_t bias;
		void *elf;
		if (out_sym_funcs(m->start, &fs, &n, &bias, &elf))
			continue;
		dwfl_report_elf(U.dwfl, m->path, m->path, -1, bias, true);
	}
	dwfl_report_end(U.dwfl, NULL, NULL);
	if (!dwfl_attach_state(U.dwfl, NULL, 1, &callbacks, &U))
		U.failed = true;
	return U.dwfl;
}

static bool in_end_func(const struct rt_shm_header *h, uint64_t pc)
{
	for (uint32_t i = 0; i < h->stk.nranges; i++)
		if ((h->stk.ranges[i].flags & RT_CODE_END) && pc >= h->stk.ranges[i].lo &&
		    pc < h->stk.ranges[i].hi)
			return true;
	return false;
}

static const struct rt_shm_header *cur_hdr;

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind *u = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act) || !pc)
		return DWARF_CB_ABORT;
	u->out[u->n++] = pc;
	if (u->n >= u->max || in_end_func(cur_hdr, pc))
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* Frames of e unwound with CFI from its copy; 0 when that fails. */
static int cfi_unwind(const uint8_t *data, const struct rt_stack_entry *e, uint64_t max_frames,
		      uint64_t *out, int max)
{
	Dwfl *dwfl = get_dwfl();
	if (!dwfl || U.failed)
		return 0;
	struct unwind u = {e, (const uint8_t *)&e->frames[max_frames], out_sym_unalias(e->pc), out,
			   0, max};
	U.cur = &u;
	cur_hdr = (const struct rt_shm_header *)data;
	/* the thread argument is U, which the callbacks ignore; frames go to u */
	dwfl_getthread_frames(dwfl, 1, frame_cb, &u);
	return u.n;
}

/* ---- text ----------------------------------------------------------------- */

struct cached {
	uint64_t id;
	int n;
	uint64_t *frames;
};
static struct cached *cache;
static int ncache;

int out_stack_frames(const uint8_t *data, uint64_t id, const uint64_t **frames)
{
	for (int i = 0; i < ncache; i++)
		if (cache[i].id == id) {
			*frames = cache[i].frames;
			return cache[i].n;
		}
	const struct rt_stack_table *t = NULL;
	const struct rt_stack_entry *e = find_entry(data, id, &t);
	if (!e) {
		*frames = NULL;
		return 0; /* not recorded (table full), or BEGIN/END */
	}
	uint64_t *fr = xcalloc(RT_STACK_MAX, sizeof(*fr));
	int n = (int)e->nframes;
	for (int i = 0; i < n; i++)
		fr[i] = out_sym_unalias(e->frames[i]);
	if (e->flags & RT_STK_COPY) {
		uint64_t cf[RT_STACK_MAX];
		int m = cfi_unwind(data, e, t->max_frames, cf, (int)t->max_frames);
		if (m >= n) {
			memcpy(fr, cf, m * sizeof(*cf));
			n = m;
		}
	}
	cache = xrealloc(cache, (ncache + 1) * sizeof(*cache));
	cache[ncache++] = (struct cached){id, n, fr};
	*frames = fr;
	return n;
}

/*
 * bpftrace's text of a stack: "\n" then one line per frame, `indent`
 * spaces and "sym+off" (bpftrace mode), TAB "hexaddr sym+off (path)"
 * (perf), or the address in hex (raw).  malloc'ed.
 */
char *out_stack_text(uint64_t id, const struct ast_type *t, int indent)
{
	if (id == RT_STACK_LOST)
		return xstrdup(""); /* as bpftrace prints a stack id its map refused */
	const uint64_t *fr = NULL;
	int n = stk_data ? out_stack_frames(stk_data, id, &fr) : 0;
	int want = AST_STACK_FRAMES(t);
	struct buf b = {0};
	buf_append(&b, "\n", 1);
	for (int i = 0; i < n && i < want; i++) {
		switch (AST_STACK_MODE(t)) {
		case AST_STACK_PERF: {
			char *s = out_sym_text(fr[i], true);
			bool plus0 = s[0] != '0' && !strchr(s, '+');
			buf_printf(&b, "\t%llx %s%s (%s)\n", (unsigned long long)fr[i], s, plus0 ? "+0" : "",
				   out_sym_path(fr[i]));
			free(s);
			break;
		}
		case AST_STACK_RAW:
			buf_printf(&b, "%*s%llx\n", indent, "", (unsigned long long)fr[i]);
			break;
		default: {
			char *s = out_sym_text(fr[i], true);
			/* bpftrace writes the offset even when it is 0: "sym_inner+0" */
			bool plus0 = s[0] != '0' && !strchr(s, '+');
			buf_printf(&b, "%*s%s%s\n", indent, "", s, plus0 ? "+0" : "");
			free(s);
			break;
		}
		}
	}
	return b.data; /* never NULL: it holds at least the newline */
}

/*
 * Stacks the table had no room for (runtime/rt_stack.c): they print as an
 * empty key `@[]` (bpftrace's text for a failed stack id, which it
 * reports with "ERROR: failed to look up stack id"), so the count is said
 * once at the end, on stderr, like the drops of full maps.  So are stacks
 * cut short, which print with the frames found before the cut.
 */
void out_stack_report_drops(const uint8_t *data)
{
	const struct rt_shm_header *h = (const struct rt_shm_header *)data;
	if (!data || !h->stk.table_off)
		return;
	const struct rt_stack_table *t = (const void *)(data + h->stk.table_off);
	uint64_t n = __atomic_load_n(&t->drops, __ATOMIC_RELAXED);
	if (n)
		fprintf(stderr,
			"WARNING: %llu stack%s not recorded: the stack table was full (%u stacks); "
			"they print as an empty stack: @[]\n",
			(unsigned long long)n, n == 1 ? "" : "s", t->cap);
	/* rt_stack.c: sp in no readable mapping, or a read failed (the mapping changed) */
	uint64_t c = __atomic_load_n(&t->cut, __ATOMIC_RELAXED);
	if (c)
		fprintf(stderr,
			"WARNING: %llu stack%s cut short: the stack pointer was in no readable "
			"mapping, or a read of the stack failed\n",
			(unsigned long long)c, c == 1 ? "" : "s");
}

/*
 * The same id for ids whose stacks print the same (a stack recorded
 * through code without frame pointers can have several ids): the first
 * such id seen.
 */
uint64_t out_stack_canon(uint64_t id, const struct ast_type *t)
{
	static struct {
		uint64_t id;
		char *text;
	} *seen;
	static int nseen;
	char *s = out_stack_text(id, t, 0);
	for (int i = 0; i < nseen; i++)
		if (!strcmp(seen[i].text, s)) {
			free(s);
			return seen[i].id;
		}
	seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
	seen[nseen].id = id;
	seen[nseen++].text = s;
	return id;
}
