/*
 * stack.c - ustack on ubt's side: the facts the runtime's walk needs, the
 * CFI unwinder for stacks recorded without frame pointers, and the text.
 *
 * Pipeline position: output (with one step at attach).  Probe code records
 * a stack id (runtime/mem/rt_stack.c); an id names an entry of the shared stack
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
 *
 * The table and the facts are in memory the target can write (trust.c):
 * ubt keeps the table's layout (cg_layout.stacks) and the facts it wrote
 * in its own memory and never reads them back; an entry is copied out and
 * checked (frames, copy length) before it is unwound or printed.  The
 * caches of unwound and printed stacks are bounded: a target inventing
 * stacks forever costs ubt time, not memory.
 */
#include "stack.h"
#include "elf/elfsym.h"
#include "output.h"
#include "srcinfo.h"
#include "sym.h"
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

/*
 * Most of the object's code (by size) has CFA = %rbp + 16 mid-function.  A
 * Go program built without DWARF (`-ldflags=-w`) has no CFI at all, but
 * keeps frame pointers (Go does on x86-64): walked by them, where an
 * unwind without CFI lost the caller of a function probed at its entry.
 * At a mid-function site on a function's first byte (probe_inline,
 * reg("ax")) the walk by frame pointers loses that caller too; a Go
 * program with DWARF is unwound by its .debug_frame, exactly.
 */
static bool object_keeps_fp(Elf *elf, const struct out_sym_func *fs, int n)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	if (!cfi) /* .eh_frame's: Go's CFI is in .debug_frame, which libdwfl reads */
		return ef_elf_go_without_cfi(elf);
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

/* ubt's own state: the data part, the table's layout, the facts it wrote */
static struct {
	uint8_t *data;
	uint64_t table_off; /* 0: no ustack */
	struct rt_stack_table table;
	struct rt_stack_facts facts;
	uint8_t *entry; /* a private copy of the entry being read (table.entry_size bytes) */
} K;

void out_stack_bind(uint8_t *data, const struct cg_layout *l)
{
	free(K.entry);
	memset(&K, 0, sizeof(K));
	K.data = data;
	K.table_off = data ? l->stacks_off : 0;
	K.table = l->stacks;
	if (K.table_off)
		K.entry = xcalloc(1, K.table.entry_size);
}

static struct rt_stack_facts *shm_facts(void)
{
	return &((struct rt_shm_header *)K.data)->stk;
}

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

void out_stack_prepare(void)
{
	struct rt_stack_facts *f = &K.facts;
	if (!K.table_off)
		return;
	memset(f, 0, sizeof(*f));
	f->table_off = K.table_off;
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
	memcpy(shm_facts(), f, sizeof(*f)); /* before arming: no probe reads them yet */
}

/*
 * After the target loaded a library (attach/features/dlopen.c armed its probes): its
 * code joins the ranges, so a walk goes on through it.  The runtime may be
 * reading the facts: each range is complete before nranges counts it, and
 * the hull only widens.  The values come from ubt's copy, never from the
 * shared one.
 */
void out_stack_loaded(void)
{
	struct rt_stack_facts *f = &K.facts, *sf;
	if (!K.table_off)
		return;
	sf = shm_facts();
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
		uint32_t k = f->nranges;
		f->ranges[k] = (struct rt_code_range){m->start, m->end, flags, 0};
		f->nranges = k + 1;
		if (m->start < f->code_lo)
			f->code_lo = m->start;
		if (m->end > f->code_hi)
			f->code_hi = m->end;
		sf->ranges[k] = f->ranges[k];
		__atomic_store_n(&sf->code_lo, f->code_lo, __ATOMIC_RELEASE);
		__atomic_store_n(&sf->code_hi, f->code_hi, __ATOMIC_RELEASE);
		__atomic_store_n(&sf->nranges, f->nranges, __ATOMIC_RELEASE);
	}
}

/* ---- the table --------------------------------------------------------------- */

/*
 * The entry of id, copied into K.entry and checked, or NULL: not recorded
 * (table full, BEGIN/END), or corrupt (said once).  Only the entries the
 * runtime's probing can have put id in are looked at (RT_STACK_PROBES),
 * so a table the target filled with ids costs 64 reads per lookup.
 */
static const struct rt_stack_entry *find_entry(uint64_t id)
{
	const struct rt_stack_table *t = &K.table;
	if (!id || !K.table_off || !t->cap)
		return NULL;
	const uint8_t *base = K.data + K.table_off + t->entries_off;
	uint64_t mask = t->cap - 1;
	for (uint64_t k = 0; k < RT_STACK_PROBES && k <= mask; k++) {
		const struct rt_stack_entry *e = (const void *)(base + ((id + k) & mask) * t->entry_size);
		uint64_t cur = __atomic_load_n(&e->id, __ATOMIC_RELAXED);
		if (!cur)
			return NULL;
		if (cur != id)
			continue;
		if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
			return NULL;
		memcpy(K.entry, e, t->entry_size);
		struct rt_stack_entry *c = (struct rt_stack_entry *)K.entry;
		if (c->id != id || c->nframes > t->max_frames ||
		    ((c->flags & RT_STK_COPY) && c->copy_len > t->copy_size)) {
			out_bad("stack entry",
				"stack table entry %llu: %u frames of at most %u, %u bytes of stack "
				"copy of at most %u; that stack prints empty",
				(unsigned long long)((id + k) & mask), c->nframes, t->max_frames,
				c->copy_len, t->copy_size);
			return NULL;
		}
		return c;
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
	const struct rt_stack_entry *e = U.cur->e; /* checked: copy_len <= copy_size */
	if (addr < e->sp || e->copy_len < 8 || addr - e->sp > e->copy_len - 8)
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
		const char *file;
		int fd;
		if (out_sym_funcs(m->start, &fs, &n, &bias, &elf) ||
		    (fd = out_sym_dup(m->start, &file)) < 0)
			continue;
		/* the file sym.c opened as the target sees it (its root), never
		 * m->path on the host, where a container's binary is missing or
		 * another file; libdwfl owns fd once the report succeeds */
		if (!dwfl_report_elf(U.dwfl, m->path, file, fd, bias, true))
			close(fd);
	}
	dwfl_report_end(U.dwfl, NULL, NULL);
	if (!dwfl_attach_state(U.dwfl, NULL, 1, &callbacks, &U))
		U.failed = true;
	return U.dwfl;
}

static bool in_end_func(uint64_t pc)
{
	const struct rt_stack_facts *f = &K.facts;
	for (uint32_t i = 0; i < f->nranges; i++)
		if ((f->ranges[i].flags & RT_CODE_END) && pc >= f->ranges[i].lo && pc < f->ranges[i].hi)
			return true;
	return false;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind *u = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act) || !pc)
		return DWARF_CB_ABORT;
	u->out[u->n++] = pc;
	if (u->n >= u->max || in_end_func(pc))
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* Frames of e (a checked private copy) unwound with CFI from its stack
 * copy, at most max; 0 when that fails. */
static int cfi_unwind(const struct rt_stack_entry *e, uint64_t *out, int max)
{
	Dwfl *dwfl = get_dwfl();
	if (!dwfl || U.failed)
		return 0;
	struct unwind u = {e, (const uint8_t *)&e->frames[K.table.max_frames],
			   out_sym_unalias(e->pc), out, 0, max};
	U.cur = &u;
	/* the thread argument is U, which the callbacks ignore; frames go to u */
	dwfl_getthread_frames(dwfl, 1, frame_cb, &u);
	return u.n;
}

/* ---- text ----------------------------------------------------------------- */

/*
 * Unwound stacks by id, and one id per distinct text (out_stack_canon):
 * open addressing, CACHE_MAX entries at most, emptied when full.  A map
 * holds at most BPFTRACE_MAP_KEYS_MAX stacks, so a real trace never
 * empties them; a target inventing stack ids only makes ubt unwind again.
 */
#define CACHE_MAX 16384

struct cached {
	uint64_t id; /* 0: free */
	int n;
	uint64_t *frames;
};
static struct cached cache[CACHE_MAX];
static int ncache;

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static void cache_clear(void)
{
	for (int i = 0; i < CACHE_MAX; i++)
		free(cache[i].frames);
	memset(cache, 0, sizeof(cache));
	ncache = 0;
}

static struct cached *cache_slot(uint64_t id)
{
	for (uint64_t i = mix(id) % CACHE_MAX;; i = (i + 1) % CACHE_MAX)
		if (cache[i].id == id || !cache[i].id)
			return &cache[i];
}

/* The frames of stack id (sites, return addresses); 0 if unknown.  The
 * frames stay valid until the next call. */
static int stack_frames(uint64_t id, const uint64_t **frames)
{
	struct cached *c = cache_slot(id);
	if (c->id == id) {
		*frames = c->frames;
		return c->n;
	}
	const struct rt_stack_entry *e = find_entry(id);
	*frames = NULL;
	if (!e)
		return 0; /* not recorded (table full), BEGIN/END, or corrupt */
	uint64_t fr[RT_STACK_MAX];
	int n = (int)e->nframes; /* checked: <= max_frames <= RT_STACK_MAX */
	for (int i = 0; i < n; i++)
		fr[i] = out_sym_unalias(e->frames[i]);
	if (e->flags & RT_STK_COPY) {
		uint64_t cf[RT_STACK_MAX];
		int m = cfi_unwind(e, cf, (int)K.table.max_frames);
		if (m >= n) {
			memcpy(fr, cf, m * sizeof(*cf));
			n = m;
		}
	}
	if (ncache >= CACHE_MAX / 2) {
		cache_clear();
		c = cache_slot(id);
	}
	c->id = id;
	c->n = n;
	c->frames = xmalloc(((size_t)n + 1) * sizeof(*fr));
	memcpy(c->frames, fr, (size_t)n * sizeof(*fr));
	ncache++;
	*frames = c->frames;
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
	int n = stack_frames(id, &fr);
	int want = AST_STACK_FRAMES(t);
	struct buf b = {0};
	buf_append(&b, "\n", 1);
	for (int i = 0; i < n && i < want; i++) {
		switch (AST_STACK_MODE(t)) {
		case AST_STACK_PERF: {
			char *s = out_sym_text(fr[i], true);
			bool plus0 = s[0] != '0' && !strchr(s, '+');
			if (out_show_debug_info) { /* its inlined calls first (srcinfo.c) */
				char *pre = xasprintf("\t%llx ", (unsigned long long)fr[i]);
				out_src_frames(&b, fr[i], i > 0, s, pre, true);
				free(pre);
			}
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
			char *sym = xasprintf("%s%s", s, plus0 ? "+0" : "");
			char *pre = xasprintf("%*s", indent, "");
			/* under show_debug_info, with the inlined calls and lines */
			if (!out_show_debug_info ||
			    !out_src_frames(&b, fr[i], i > 0, sym, pre, false))
				buf_printf(&b, "%s%s\n", pre, sym);
			free(pre);
			free(sym);
			free(s);
			break;
		}
		}
	}
	return b.data; /* never NULL: it holds at least the newline */
}

/*
 * Stacks the table had no room for (runtime/mem/rt_stack.c): they print as an
 * empty key `@[]` (bpftrace's text for a failed stack id, which it
 * reports with "ERROR: failed to look up stack id"), so the count is said
 * once at the end, on stderr, like the drops of full maps.  So are stacks
 * cut short, which print with the frames found before the cut.
 */
void out_stack_report_drops(void)
{
	if (!K.table_off)
		return;
	const struct rt_stack_table *t = (const void *)(K.data + K.table_off);
	uint64_t n = __atomic_load_n(&t->drops, __ATOMIC_RELAXED);
	if (n)
		fprintf(stderr,
			"WARNING: %llu stack%s not recorded: the stack table was full (%u stacks); "
			"they print as an empty stack: @[]\n",
			(unsigned long long)n, n == 1 ? "" : "s", K.table.cap);
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
 * such id seen, found by the text's hash (bounded like the frame cache).
 */
uint64_t out_stack_canon(uint64_t id, const struct ast_type *t)
{
	static struct {
		uint64_t hash; /* 0: free */
		uint64_t id;
		char *text;
	} seen[CACHE_MAX];
	static int nseen;
	char *s = out_stack_text(id, t, 0);
	uint64_t h = 1469598103934665603ull;
	for (const char *p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h |= 1;
	uint64_t i = mix(h) % CACHE_MAX;
	for (; seen[i].hash; i = (i + 1) % CACHE_MAX)
		if (seen[i].hash == h && !strcmp(seen[i].text, s)) {
			free(s);
			return seen[i].id;
		}
	if (nseen >= CACHE_MAX / 2) {
		for (int k = 0; k < CACHE_MAX; k++)
			free(seen[k].text);
		memset(seen, 0, sizeof(seen));
		nseen = 0;
		i = mix(h) % CACHE_MAX;
	}
	seen[i].hash = h;
	seen[i].id = id;
	seen[i].text = s;
	nseen++;
	return id;
}
