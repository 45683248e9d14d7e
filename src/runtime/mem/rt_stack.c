/*
 * rt_stack.c - ustack: the frames of the current call stack, recorded in
 * the shared stack table (layout in abi.h), named by a 64-bit id.
 *
 * Pipeline position: runtime, called from probe code (codegen emits
 * `rt_stack_id(regs, site, kind, n, thread, fp)` for each ustack expression).  ubt
 * prints an id by finding its entry (output/stack.c), unwinding the stack
 * copy with the target's CFI first when the entry has one.
 *
 * At a function entry the frame pointer still belongs to the caller, so a
 * plain frame-pointer walk skips the caller (the kernel only adds it when
 * the function starts with `push %rbp`).  Here frame 0 is the site,
 * frame 1 the return address the trampoline saved (regs->ret: exact), and
 * the walk starts from the caller's %rbp:
 *
 *   sym_inner+0        site
 *   sym_middle+18      regs->ret
 *   sym_outer+23       [rbp + 8]    rbp = sym_middle's frame
 *   main+57            [[rbp] + 8]  ...
 *
 * Each step is taken only out of code ubt marked as keeping frame pointers
 * (RT_CODE_FP); in other code (-O2 without -fno-omit-frame-pointer, most
 * of libc) %rbp is an ordinary register, so the walk stops there, and the
 * entry keeps the registers and a copy of the stack for ubt's CFI
 * unwinder.  Two different call paths through such code can have the same
 * frames so far, so their id also hashes every word of the copied stack
 * that points into code (return addresses among them); stale words make
 * some equal stacks get different ids, which ubt merges when it prints.
 *
 * Every read of the stack lies in [sp, hi), hi the end of the mapping sp is
 * in (rt_vma.c: a thread's stack, a coroutine's stack from mmap or malloc,
 * a sigaltstack), and is fault-tolerant, because a mapping found earlier
 * can have changed: a load with an exception-table entry (rt_ld8), or,
 * where a fault would not reach the runtime's handler (rt_read_direct
 * says no: the application replaced it, or the thread blocks SIGSEGV), a
 * window of 256 bytes filled by process_vm_readv (struct win).  A failed
 * read ends the walk or the copy there, makes rt_vma.c forget the mapping,
 * and counts the stack in the table's `cut`; so does an sp in no readable
 * mapping (then only the frames known from the registers are kept).
 *
 * Return probes hijack return slots: while sym_middle has a uretprobe, the
 * slot holding its return address into sym_outer holds the stub of
 * sym_middle's return trampoline, and the real address sits in the
 * thread's shadow stack (rt_ret.c, abi.h struct rt_ret_stack):
 *
 *   stack                       shadow stack (e[top-1] innermost)
 *   [rbp_middle + 8] = stub  -> e[k] = {sp = rbp_middle + 8, ret = sym_outer+23, stub}
 *
 * So every return address the walk reads from a slot, and every word of
 * the copy, is checked against the shadow entry of that slot (struct
 * shadow): a slot an entry names that still holds the entry's stub stands
 * for the entry's ret (and a chain of tail calls on one slot resolves
 * entry by entry to the first caller's address).  Entries are ordered by
 * slot address (the innermost frame has the lowest) and the walk goes up
 * the stack, so one cursor moving down the shadow stack costs one compare
 * per frame.  Without
 * return probes (rets_addr 0) the walk and the scan are the same code as
 * before, chosen once per call.
 */
#include "../rt.h"


static inline struct rt_stack_table *rt_stack_table(void)
{
	uint64_t off = rt_hdr()->stk.table_off;
	return off ? (struct rt_stack_table *)(ubt_shm + off) : 0;
}

/*
 * Where a fault would not reach rt_sigsegv, the stack is read through a
 * window of 32 words filled by process_vm_readv, never past hi.
 */
struct win {
	uint64_t base, len, hi;
	uint64_t w[32];
};

static __attribute__((noinline)) int win_ld(struct win *w, uint64_t addr, uint64_t *v)
{
	if (addr - w->base >= w->len) {
		uint64_t n = w->hi - addr < sizeof(w->w) ? w->hi - addr : sizeof(w->w);
		int64_t got = n >= 8 ? rt_read_some(w->w, addr, n) : -14;
		if (got < 8) {
			w->len = 0;
			return -14;
		}
		w->base = addr;
		w->len = (uint64_t)got & ~7ull;
	}
	*v = w->w[(addr - w->base) / 8];
	return 0;
}

/* One word of the stack at addr (below hi): 0, or -EFAULT. */
static inline __attribute__((always_inline)) int ld(struct win *win, uint64_t addr, uint64_t *v)
{
	return win ? win_ld(win, addr, v) : rt_ld8(addr, v);
}

/* The code range holding addr (END ranges come first), or 0. */
static const struct rt_code_range *code_of(const struct rt_stack_facts *f, uint64_t addr)
{
	if (addr < f->code_lo || addr >= f->code_hi)
		return 0;
	for (uint32_t i = 0; i < f->nranges && i < RT_STACK_RANGES; i++)
		if (addr - f->ranges[i].lo < f->ranges[i].hi - f->ranges[i].lo)
			return &f->ranges[i];
	return 0;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * The thread's shadow stack, read-only (rt_ret.c owns it): e[0..k) are
 * the entries not yet passed, e[k-1] the one with the lowest slot.  The
 * thread itself is the only writer and rt_ret.c publishes an entry before
 * raising `top`, so e[0..top) are complete; one whose push is half done
 * (RT_RET_PENDING) has not hijacked its slot yet and is passed over.
 */
struct shadow {
	const struct rt_ret_entry *e;
	uint32_t k;
};

static __attribute__((noinline)) void shadow_find(struct shadow *sh, uint64_t tab)
{
	const struct rt_shm_header *h = rt_hdr();
	const struct rt_ret_stack *st = (const struct rt_ret_stack *)tab;
	uint64_t tp = rt_thread_pointer();
	uint32_t mask = h->nthreads - 1;
	uint32_t i = (uint32_t)((tp * RT_TP_HASH_MUL) >> RT_TP_HASH_SHIFT) & mask;
	for (uint32_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t cur = st[i].tp;
		if (!cur)
			return;
		if (cur == tp) {
			uint32_t top = st[i].top;
			sh->e = st[i].e;
			sh->k = top < RT_RET_DEPTH ? top : RT_RET_DEPTH;
			return;
		}
	}
}

/*
 * The return address that the word v read from slot stands for: the
 * shadow entry's ret when the slot is hijacked, else v.  Slots are asked
 * for in increasing order.
 */
static inline uint64_t shadow_fix(struct shadow *sh, uint64_t slot, uint64_t v)
{
	while (sh->k) {
		const struct rt_ret_entry *e = &sh->e[sh->k - 1];
		uint64_t esp = e->sp & ~1ull;
		if (esp > slot && e->sp != RT_RET_PENDING)
			return v;
		sh->k--;
		if (esp == slot && v == e->stub)
			v = e->ret; /* the next entry down may be a tail call's caller (a chain) */
	}
	return v;
}

struct walk {
	uint64_t frames[RT_STACK_MAX];
	uint32_t n;
	int cfi; /* stopped in code without frame pointers: unwind a copy */
	int cut; /* a read of the stack failed */
	struct win *win; /* NULL: read with rt_ld8 */
};

static inline __attribute__((always_inline)) void
fp_walk_(struct walk *w, uint64_t ra, uint64_t fp, uint64_t lo, uint64_t hi, uint32_t max,
	 struct shadow *sh)
{
	const struct rt_stack_facts *f = &rt_hdr()->stk;
	while (w->n < max) {
		const struct rt_code_range *r = code_of(f, ra);
		if (!r || (r->flags & RT_CODE_END))
			return; /* not code (the end of a chain), or the outermost frame */
		if (!(r->flags & RT_CODE_FP)) {
			w->cfi = 1;
			return;
		}
		if (fp < lo || fp & 7 || hi < 16 || fp > hi - 16)
			return;
		uint64_t next;
		if (ld(w->win, fp + 8, &ra) || ld(w->win, fp, &next)) {
			w->cut = 1;
			return;
		}
		if (sh)
			ra = shadow_fix(sh, fp + 8, ra);
		if (!ra)
			return;
		w->frames[w->n++] = ra;
		lo = fp + 16;
		fp = next;
	}
}

static __attribute__((noinline)) void fp_walk(struct walk *w, uint64_t ra, uint64_t fp,
					     uint64_t lo, uint64_t hi, uint32_t max)
{
	fp_walk_(w, ra, fp, lo, hi, max, 0);
}

static __attribute__((noinline)) void fp_walk_ret(struct walk *w, uint64_t ra, uint64_t fp,
						 uint64_t lo, uint64_t hi, uint32_t max,
						 struct shadow *sh)
{
	fp_walk_(w, ra, fp, lo, hi, max, sh);
}

static struct rt_stack_entry *entry_at(struct rt_stack_table *t, uint64_t i)
{
	return (struct rt_stack_entry *)((char *)t + t->entries_off + i * t->entry_size);
}

/*
 * Finds or claims the entry of id: the entry to fill, or NULL when it
 * exists already; *lost is set when there is no room (counted in drops).
 */
static inline __attribute__((always_inline)) struct rt_stack_entry *
claim(struct rt_stack_table *t, uint64_t id, int *lost)
{
	uint64_t mask = t->cap - 1;
	for (uint64_t k = 0; k < RT_STACK_PROBES && k <= mask; k++) {
		struct rt_stack_entry *e = entry_at(t, (id + k) & mask);
		uint64_t cur = e->id;
		if (cur == id)
			return 0;
		if (cur)
			continue;
		if (__atomic_compare_exchange_n(&e->id, &cur, id, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_fetch_add(&t->used, 1, __ATOMIC_RELAXED);
			return e;
		}
		if (cur == id)
			return 0;
	}
	__atomic_fetch_add(&t->drops, 1, __ATOMIC_RELAXED);
	*lost = 1;
	return 0;
}

/*
 * The part of the stack from sp that ubt's CFI unwinder needs, mixed into
 * id: every word that points into code, with its position.  The copy ends
 * at the first word pointing into an outermost function (RT_CODE_END: the
 * return address into start_thread or __libc_start_call_main), where the
 * unwinder stops anyway; above it lie only that function's frame and the
 * thread's TLS and TCB (for a pthread, tp is the top).  For
 *
 *   f <- chain4 <- ... <- time_loop <- worker <- start_thread
 *
 * that is about 300 bytes instead of the 1-8 KiB up to the top.  Words
 * that point into the stack itself (saved frame and object pointers) are
 * skipped before the range lookup.  *copyp gets the bytes to copy.  A
 * hijacked return slot counts as the return address it stands for.
 */
static inline __attribute__((always_inline)) uint64_t
hash_copy_(struct walk *w, struct win *win, uint64_t id, uint64_t sp, uint64_t hi, uint64_t cap,
	   uint64_t *copyp, struct shadow *sh)
{
	const struct rt_stack_facts *f = &rt_hdr()->stk;
	uint64_t copy = (hi - sp < cap ? hi - sp : cap) & ~7ull;
	uint64_t lo = f->code_lo, span = f->code_hi - f->code_lo;
	for (uint64_t i = 0; i < copy / 8; i++) {
		uint64_t v;
		if (ld(win, sp + i * 8, &v)) {
			copy = i * 8; /* the mapping changed: copy what was read */
			w->cut = 1;
			break;
		}
		if (sh)
			v = shadow_fix(sh, sp + i * 8, v);
		if (v - lo >= span || v - sp < hi - sp)
			continue;
		const struct rt_code_range *r = code_of(f, v);
		if (!r)
			continue;
		id = mix(id, v ^ (i << 48));
		if (r->flags & RT_CODE_END) {
			copy = (i + 1) * 8;
			break;
		}
	}
	*copyp = copy;
	return mix(id, 1);
}

/*
 * The copy as an unprobed run would have it: each hijacked slot in it
 * holds its caller's return address again, so ubt's CFI unwinder steps
 * through the frame as it would without the return probe.
 */
static void shadow_patch(const struct shadow *all, uint64_t sp, uint64_t copy, uint64_t *dst)
{
	for (uint32_t i = all->k; i-- > 0;) { /* from the top: a chain's top stub is in the slot */
		const struct rt_ret_entry *e = &all->e[i];
		uint64_t slot = e->sp & ~1ull;
		if (e->sp == RT_RET_PENDING || slot < sp || slot - sp >= copy || (slot - sp) & 7)
			continue;
		if (dst[(slot - sp) / 8] == e->stub)
			dst[(slot - sp) / 8] = e->ret;
	}
}

/*
 * The id of the current stack, at most n frames (1..RT_STACK_MAX).
 * regs: a struct rt_regs whose `ret` is the real return slot (its other
 * words need not be valid: codegen points it into the handler's caller's
 * frame, runtime/abi.h), or the mid-function trampoline's struct
 * rt_regs_mid with pc, rsp and rbp saved; site: the probe's own return
 * address (inside the site's trampoline; ubt maps it back) for entry
 * probes; fp: the probed code's %rbp at an entry or a return (nothing
 * between it and the probe code changes %rbp: the handler finds it saved
 * in its own frame; the handler runs on a probe stack, so walking up from
 * this function's frame would not lead there).
 */
static inline __attribute__((always_inline)) uint64_t
stack_id(void *regs, uint64_t site, uint32_t kind, uint32_t n, uint64_t fp, const int with_ret,
	 struct win *win)
{
	struct rt_stack_table *t = rt_stack_table();
	if (!t || !n)
		return 0;
	if (n > t->max_frames)
		n = t->max_frames;
	struct walk w;
	w.n = 0;
	w.cfi = 0;
	w.cut = 0;
	w.win = win;
	struct shadow all = {0, 0}; /* the thread's shadow stack, when return probes are on */
	if (with_ret)
		shadow_find(&all, rt_hdr()->rets_addr);
	struct shadow sh = all;
	uint64_t pc, sp, rbp;
	if (kind == RT_STK_MID) {
		const struct rt_regs_mid *m = regs;
		pc = m->pc;
		sp = m->rsp;
		rbp = m->rbp;
		w.frames[w.n++] = pc;
	} else {
		const struct rt_regs *r = regs;
		if (kind == RT_STK_ENTRY) {
			pc = site;
			sp = (uint64_t)&r->ret;
			w.frames[w.n++] = site;
		} else {
			pc = with_ret ? shadow_fix(&sh, (uint64_t)&r->ret, r->ret) : r->ret;
			sp = (uint64_t)&r->ret + 8;
		}
		rbp = fp;
	}
	uint64_t lo_map, hi = 0;
	if (rt_vma_find(sp, &lo_map, &hi))
		w.cut = 1; /* no readable mapping holds sp: only the frames known so far */
	if (win)
		win->hi = hi;
#define WALK(ra, fp, lo)                                                   \
	do {                                                               \
		if (with_ret && sh.k)                                      \
			fp_walk_ret(&w, ra, fp, lo, hi, n, &sh);           \
		else                                                       \
			fp_walk(&w, ra, fp, lo, hi, n);                    \
	} while (0)
	if (kind == RT_STK_ENTRY) {
		/* the caller, then the walk from the caller's frame */
		/* (a tail call from a function with a return probe: the slot holds its stub) */
		uint64_t ret = ((const struct rt_regs *)regs)->ret;
		if (with_ret)
			ret = shadow_fix(&sh, sp, ret);
		if (w.n < n)
			w.frames[w.n++] = ret;
		if (hi && w.n < n)
			WALK(ret, rbp, sp + 8);
	} else if (kind == RT_STK_RET) {
		w.frames[w.n++] = pc;
		if (hi && w.n < n)
			WALK(pc, rbp, sp);
	} else if (hi && w.n < n) {
		WALK(pc, rbp, sp);
	}
	uint64_t id = mix(0x6a09e667f3bcc908ull, n);
	for (uint32_t i = 0; i < w.n; i++)
		id = mix(id, w.frames[i]);
	uint64_t copy = 0;
	if (w.cfi && hi > sp) {
		sh = all;
		id = hash_copy_(&w, win, id, sp, hi, t->copy_size, &copy, with_ret && sh.k ? &sh : 0);
	}
	if (w.cut) {
		if (hi)
			rt_vma_forget(sp);
		__atomic_fetch_add(&t->cut, 1, __ATOMIC_RELAXED);
	}
	if (id <= RT_STACK_LOST)
		id += 2; /* 0: no stack, RT_STACK_LOST: not recorded */
	int lost = 0;
	struct rt_stack_entry *e = claim(t, id, &lost);
	if (!e)
		return lost ? RT_STACK_LOST : id;
	e->nframes = w.n;
	for (uint32_t i = 0; i < w.n; i++)
		e->frames[i] = w.frames[i];
	e->pc = pc;
	e->sp = sp;
	e->rbp = rbp;
	e->flags = 0;
	e->copy_len = 0;
	if (copy) {
		char *dst = (char *)&e->frames[t->max_frames];
		if (rt_read_raw(!win, dst, sp, copy))
			copy = 0; /* unmapped since the scan read it: keep the frames */
	}
	if (copy) {
		char *dst = (char *)&e->frames[t->max_frames];
		if (with_ret && all.k)
			shadow_patch(&all, sp, copy, (uint64_t *)dst);
		e->copy_len = (uint32_t)copy;
		e->flags = RT_STK_COPY;
	}
	__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
	return id;
}

/*
 * Two copies of the same code: without return probes in the process
 * (rets_addr 0) none of the shadow-stack work is compiled in, so ustack
 * costs what it did before return probes were taken into account.
 */
static __attribute__((noinline)) uint64_t stack_id_ret(void *regs, uint64_t site, uint32_t kind,
						       uint32_t n, uint64_t fp)
{
	return stack_id(regs, site, kind, n, fp, 1, 0);
}

/*
 * The thread cannot take a fault (rt_read_direct said no): the same walk
 * through a window read with process_vm_readv, about 1 us per 256 bytes.
 */
static __attribute__((noinline)) uint64_t stack_id_slow(void *regs, uint64_t site, uint32_t kind,
							uint32_t n, uint64_t fp)
{
	struct win win;
	win.base = win.len = 0;
	if (rt_hdr()->rets_addr)
		return stack_id(regs, site, kind, n, fp, 1, &win);
	return stack_id(regs, site, kind, n, fp, 0, &win);
}

RT_API uint64_t rt_stack_id(void *regs, uint64_t site, uint32_t kind, uint32_t n,
			    struct rt_thread *t, uint64_t fp)
{
	if (!rt_read_direct(t))
		return stack_id_slow(regs, site, kind, n, fp);
	if (rt_hdr()->rets_addr)
		return stack_id_ret(regs, site, kind, n, fp);
	return stack_id(regs, site, kind, n, fp, 0, 0);
}
