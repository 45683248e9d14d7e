/*
 * rt_ret.c - shadow stacks for return probes, running in the target.
 *
 * A return trampoline (attach/arch/x86_64/tramp_ret.c) calls
 * rt_ret_enter() at the probed function's entry: the caller's return
 * address is saved here and the trampoline then `call`s the function's
 * relocated body, so that the body returns into the trampoline's stub,
 * which calls rt_ret_leave() to get the caller's address back, runs the
 * return handlers and returns to the caller.  rt_ret_unwind_fde() is the
 * handler of ubt's own entry probe on libgcc's _Unwind_Find_FDE(), which
 * the unwinder calls for every frame it steps through: it shows the
 * unwinder the real return address of a hijacked frame without touching
 * the stack.  docs/ARCHITECTURE.md ("Return probes") has the whole
 * picture; the memory layout is drawn in abi.h.
 *
 * The common push and pop are done inline by the trampolines
 * (tramp_ret.c); rt_ret_enter and rt_ret_leave are their slow paths.
 * All of them run with the thread's slot marked busy, so that a signal
 * handler entering a probed function in between sees a consistent stack
 * (it runs that call without a return probe instead; the inline paths
 * test busy too).
 *
 * Which frames are still live.  An entry is matched by its identity, the
 * return slot and the stub (abi.h).  Entries whose slot is at or below a
 * new call's slot, or below a returning frame's, were left without a
 * return on this stack: longjmp, an exception, or a switch to another
 * stack (a coroutine; its frames come back later).  They are dropped only
 * when that is proven:
 *
 *   - the slot lies between this function's own frame and the slot of
 *     the call being handled: that is this very stack, in use, so the
 *     frame is gone (a longjmp a few frames up);
 *   - the slot no longer holds the stub (read without faulting: the stack
 *     may have been freed), so the frame returned or was overwritten;
 *   - the slot is the new call's own and holds its caller's address.
 *
 * A slot that still holds the stub may be a suspended coroutine's frame:
 * the entry moves to the thread's park (abi.h), where its return finds it
 * by identity.  A full park is cleaned by the same test, and if every
 * frame in it still looks live the oldest gets its return address back in
 * its slot (it returns without its probe, counted), so no return is left
 * without its address.
 *
 * Tail calls.  f3 hijacks its slot S and jumps to f4, whose entry finds
 * S holding f3's stub: f4's entry goes on top of f3's with the same slot
 * and f3's stub as its ret, and the returns run f4's stub, then f3's,
 * then the caller: both return probes fire, as with kernel uretprobes.
 */
#include "../rt.h"

extern struct rt_priv ubt_priv RT_API;

#define ESP(e) ((e)->sp & ~1ull)

static inline uint32_t rt_ret_hash(uint64_t tp, uint32_t mask)
{
	return (uint32_t)((tp * RT_TP_HASH_MUL) >> RT_TP_HASH_SHIFT) & mask;
}

static inline struct rt_ret_stack *rt_ret_table(const struct rt_shm_header *h)
{
	return (struct rt_ret_stack *)h->rets_addr;
}

/* This thread's shadow stack; claim a free slot when `claim` is set. */
static struct rt_ret_stack *rt_ret_stack(struct rt_shm_header *h, int claim)
{
	struct rt_ret_stack *tab = rt_ret_table(h);
	uint64_t tp = rt_thread_pointer();
	uint32_t mask = h->nthreads - 1;
	uint32_t i = rt_ret_hash(tp, mask);

	if (!tab)
		return 0;
	for (uint32_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		struct rt_ret_stack *s = &tab[i];
		uint64_t cur = s->tp;
		if (cur == tp)
			return s;
		if (cur == 0) {
			uint64_t expect = 0;
			if (!claim)
				return 0;
			if (__atomic_compare_exchange_n(&s->tp, &expect, tp, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				s->tid = (h->flags & RT_F_TID) ? rt_gettid() : 0;
				return s;
			}
		}
	}
	return 0;
}

static inline void rt_ret_lock(struct rt_ret_stack *s)
{
	s->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void rt_ret_unlock(struct rt_ret_stack *s)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->busy = 0;
}

/* *slot, or -1 when it cannot be read (the stack it was on is gone) */
static int rt_ret_peek(struct rt_ret_stack *s, uint64_t slot, uint64_t *v)
{
	return rt_read_u64(&s->rd_state, v, slot) ? -1 : 0;
}

/* ---- the park: frames that may be live on another stack ---------------- */

/* Another entry in the park or on e[] with the same slot whose ret is p's
 * stub (p is below it in a chain), or 0. */
static struct rt_ret_entry *rt_ret_above(struct rt_ret_stack *s, const struct rt_ret_entry *p)
{
	for (uint32_t i = 0; i < RT_RET_PARK; i++)
		if (&s->park[i] != p && s->park[i].sp == p->sp && s->park[i].ret == p->stub)
			return &s->park[i];
	for (uint32_t i = 0; i < s->top && i < RT_RET_DEPTH; i++)
		if (ESP(&s->e[i]) == p->sp && s->e[i].ret == p->stub)
			return &s->e[i];
	return 0;
}

/*
 * Is the frame of parked entry p gone?  Its slot holds neither p's stub
 * nor the stub of an entry above it in a chain, or cannot be read; or a
 * newer entry on e[] has the same identity (the slot was reused by a new
 * call of the same function).
 */
static int rt_ret_park_dead(struct rt_ret_stack *s, const struct rt_ret_entry *p)
{
	uint64_t v;
	for (uint32_t i = 0; i < s->top && i < RT_RET_DEPTH; i++)
		if (ESP(&s->e[i]) == p->sp && s->e[i].stub == p->stub)
			return 1;
	if (rt_ret_peek(s, p->sp, &v))
		return 1;
	for (const struct rt_ret_entry *q = p; q; q = rt_ret_above(s, q))
		if (v == q->stub)
			return 0;
	return 1;
}

/*
 * A frame that cannot be parked (the park is full of frames that all
 * look live) gets its caller's address back: in its slot if the slot
 * holds its stub, else in the entry above it in its chain.  Its frame
 * then returns without its return probe, counted.  The newest frame is
 * the one given up: coroutines resumed in turn (the common schedule) find
 * the older ones still parked.
 */
static void rt_ret_unpark(struct rt_shm_header *h, struct rt_ret_stack *s,
			  const struct rt_ret_entry *e)
{
	uint64_t v;
	struct rt_ret_entry *up;
	if (!rt_ret_peek(s, ESP(e), &v) && v == e->stub)
		rt_write_u64(ESP(e), e->ret);
	else if ((up = rt_ret_above(s, e)))
		up->ret = e->ret;
	__atomic_fetch_add(&h->ret_evicted, 1, __ATOMIC_RELAXED);
}

/* Frees every park entry whose frame is gone; how many. */
static uint32_t rt_ret_park_gc(struct rt_ret_stack *s)
{
	uint32_t freed = 0;
	for (uint32_t i = 0; i < RT_RET_PARK; i++)
		if (s->park[i].sp && rt_ret_park_dead(s, &s->park[i])) {
			s->park[i].sp = 0;
			freed++;
		}
	return freed;
}

static void rt_ret_park(struct rt_shm_header *h, struct rt_ret_stack *s, const struct rt_ret_entry *e)
{
	struct rt_ret_entry *free = 0;
	for (uint32_t i = 0; i < RT_RET_PARK && !free; i++)
		if (!s->park[i].sp)
			free = &s->park[i];
	/* full: clean up, unless the last clean-up found (almost) nothing */
	if (!free && (s->gc_skip ? (s->gc_skip--, 0) : 1)) {
		if (rt_ret_park_gc(s) < RT_RET_PARK / 16)
			s->gc_skip = RT_RET_PARK / 16;
		for (uint32_t i = 0; i < RT_RET_PARK && !free; i++)
			if (!s->park[i].sp)
				free = &s->park[i];
	}
	if (!free) {
		rt_ret_unpark(h, s, e);
		return;
	}
	free->ret = e->ret;
	free->stub = e->stub;
	free->pad = 0;
	/* last: another thread looking for a migrated frame matches on it */
	__atomic_store_n(&free->sp, ESP(e), __ATOMIC_RELEASE);
	__atomic_fetch_add(&h->ret_parked, 1, __ATOMIC_RELAXED);
}

/*
 * The group g[0..n) of entries sharing one slot (a chain; g[n-1] on top)
 * has no return left on this stack.  own_lo..own_hi is stack this thread
 * is running on right now (from its own frame up to the slot being
 * handled): a slot there is proven gone.  Otherwise the slot is read.
 */
static void rt_ret_abandon(struct rt_shm_header *h, struct rt_ret_stack *s,
			   const struct rt_ret_entry *g, uint32_t n, uint64_t own_lo, uint64_t own_hi)
{
	uint64_t slot = ESP(&g[n - 1]), v;
	int live = 0;
	if (g[n - 1].sp != RT_RET_PENDING && !(slot >= own_lo && slot < own_hi) &&
	    !rt_ret_peek(s, slot, &v))
		live = v == g[n - 1].stub || ((g[0].sp & 1) && v == g[0].ret);
	for (uint32_t i = n; i > 0; i--) { /* the top first: rt_ret_unpark splices below it */
		if (live)
			rt_ret_park(h, s, &g[i - 1]);
		else
			__atomic_fetch_add(&h->ret_dropped, 1, __ATOMIC_RELAXED);
	}
}

/* Abandons e[lo..n), group by group from the top; returns lo. */
static uint32_t rt_ret_abandon_above(struct rt_shm_header *h, struct rt_ret_stack *s, uint32_t lo,
				     uint32_t n, uint64_t own_lo, uint64_t own_hi)
{
	while (n > lo) {
		uint32_t b = n - 1;
		while (b > lo && ESP(&s->e[b - 1]) == ESP(&s->e[n - 1]))
			b--;
		s->top = b; /* before the entries are reused: a signal sees a consistent top */
		rt_ret_abandon(h, s, &s->e[b], n - b, own_lo, own_hi);
		n = b;
	}
	return lo;
}

/*
 * A new thread on a dead thread's TCB (same process): the entries on e[]
 * were its frames, gone with it unless they were on a coroutine's stack.
 * A fork child (another process) keeps them: they are its own frames.
 */
static void rt_ret_check_tid(struct rt_shm_header *h, struct rt_ret_stack *s)
{
	uint32_t tid = rt_gettid();
	if (s->tid == tid)
		return;
	if ((uint32_t)rt_getpid() == h->pid) {
		rt_ret_abandon_above(h, s, 0, s->top < RT_RET_DEPTH ? s->top : RT_RET_DEPTH, 0, 0);
		s->nrestored = 0;
	}
	s->tid = tid;
}

/* Slots an unwinder was given back whose frames are still live get the stub again. */
static void rt_ret_rehijack(struct rt_ret_stack *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct rt_ret_entry *e = &s->e[i];
		uint64_t v;
		if (!(e->sp & 1) || e->sp == RT_RET_PENDING)
			continue;
		e->sp &= ~1ull;
		if (!rt_ret_peek(s, e->sp, &v) && v == e->ret)
			*(uint64_t *)e->sp = e->stub;
	}
	s->nrestored = 0;
}

/*
 * At the probed function's entry; *slot is the caller's return address,
 * slot the word the trampoline's call will overwrite with stub.  Returns 1
 * if the entry was pushed (the trampoline then calls the body), 0 to run
 * the call without a return probe.
 */
uint64_t rt_ret_enter(uint64_t *slot, uint64_t stub) RT_API;
uint64_t rt_ret_enter(uint64_t *slot, uint64_t stub)
{
	struct rt_shm_header *h = rt_hdr();
	struct rt_ret_stack *s;
	uint64_t sp = (uint64_t)slot, own = (uint64_t)__builtin_frame_address(0);
	uint32_t n;

	/* detached, or a forked child not (yet) on (abi.h, struct rt_priv) */
	if (!ubt_priv.enabled && !rt_fork_enable())
		return 0;
	s = rt_ret_stack(h, 1);
	if (!s || s->busy)
		goto skip;
	rt_ret_lock(s);
	if (h->flags & RT_F_TID)
		rt_ret_check_tid(h, s);
	n = s->top < RT_RET_DEPTH ? s->top : RT_RET_DEPTH;
	if (s->nrestored)
		rt_ret_rehijack(s, n);
	/* frames at or below this one's slot: gone, or on another stack,
	 * except the caller of a tail call (a chain on the same slot) */
	while (n && ESP(&s->e[n - 1]) <= sp) {
		if (ESP(&s->e[n - 1]) == sp && *slot == s->e[n - 1].stub)
			break;
		uint32_t b = n - 1;
		while (b && ESP(&s->e[b - 1]) == ESP(&s->e[n - 1]))
			b--;
		if (ESP(&s->e[n - 1]) == sp) { /* the slot holds a new caller's address */
			s->top = b;
			__atomic_fetch_add(&h->ret_dropped, n - b, __ATOMIC_RELAXED);
		} else {
			rt_ret_abandon_above(h, s, b, n, own, sp);
		}
		n = b;
	}
	if (n == RT_RET_DEPTH) {
		s->top = n;
		rt_ret_unlock(s);
		goto skip;
	}
	s->e[n].sp = RT_RET_PENDING;
	s->top = n + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->e[n].ret = *slot;
	s->e[n].stub = stub;
	s->e[n].pad = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->e[n].sp = sp;
	rt_ret_unlock(s);
	return 1;
skip:
	__atomic_fetch_add(&h->ret_skipped, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A frame that migrated with its coroutine to this thread: another
 * thread's entry, read without writing (that thread owns it).  0 or -1. */
static int rt_ret_foreign(struct rt_shm_header *h, const struct rt_ret_stack *mine, uint64_t sp,
			  uint64_t stub, uint64_t *ret)
{
	struct rt_ret_stack *tab = rt_ret_table(h);
	for (uint32_t t = 0; t < h->nthreads; t++) {
		const struct rt_ret_stack *o = &tab[t];
		if (o == mine || !o->tp)
			continue;
		for (uint32_t i = 0; i < RT_RET_DEPTH + RT_RET_PARK; i++) {
			const volatile struct rt_ret_entry *e = i < RT_RET_DEPTH ? &o->e[i] : &o->park[i - RT_RET_DEPTH];
			if ((e->sp & ~1ull) != sp || e->stub != stub)
				continue;
			uint64_t r = e->ret;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if ((e->sp & ~1ull) == sp && e->stub == stub) {
				*ret = r;
				return 0;
			}
		}
	}
	return -1;
}

/*
 * In the stub, after the body returned: slot is the one the entry saved
 * (the stub moved %rsp back onto it), stub the trampoline's.  Writes the
 * caller's return address to *slot, where the stub's final `ret` takes it.
 */
void rt_ret_leave(uint64_t *slot, uint64_t stub) RT_API;
void rt_ret_leave(uint64_t *slot, uint64_t stub)
{
	struct rt_shm_header *h = rt_hdr();
	struct rt_ret_stack *s = rt_ret_stack(h, 0);
	uint64_t sp = (uint64_t)slot, own = (uint64_t)__builtin_frame_address(0), ret;
	uint32_t i, n;

	if (!s)
		goto foreign;
	n = s->top < RT_RET_DEPTH ? s->top : RT_RET_DEPTH;
	for (i = n; i > 0; i--)
		if (ESP(&s->e[i - 1]) == sp && s->e[i - 1].stub == stub)
			break;
	if (i > 0) {
		*slot = s->e[i - 1].ret;
		if (s->busy) /* a signal interrupted this thread's own rt_ret_*: read only */
			return;
		rt_ret_lock(s);
		/* entries above it: frames left by longjmp on this stack, or
		 * live on another (those are parked) */
		rt_ret_abandon_above(h, s, i, n, own, sp);
		if ((s->e[i - 1].sp & 1) && s->nrestored)
			s->nrestored--;
		s->top = i - 1;
		rt_ret_unlock(s);
		return;
	}
	/* a coroutine's frame, parked when its thread switched stacks */
	for (i = 0; i < RT_RET_PARK; i++) {
		struct rt_ret_entry *p = &s->park[i];
		if (p->sp == sp && p->stub == stub) {
			*slot = p->ret;
			if (!s->busy)
				p->sp = 0;
			return;
		}
	}
foreign:
	if (!rt_ret_foreign(h, s, sp, stub, &ret)) {
		*slot = ret;
		return;
	}
	/* Nothing knows where this call came from: there is no right thing
	 * left to do.  Counted so that ubt can say so, then a clean fault. */
	__atomic_fetch_add(&h->ret_lost, 1, __ATOMIC_RELAXED);
	__asm__ volatile("ud2");
}

/* ---- unwinders ---------------------------------------------------------- */

/* The entry of this thread whose slot is sp and stub is stub, or 0. */
static const struct rt_ret_entry *rt_ret_find(const struct rt_ret_stack *s, uint64_t sp,
					      uint64_t stub)
{
	uint32_t n = s->top < RT_RET_DEPTH ? s->top : RT_RET_DEPTH;
	for (uint32_t i = n; i > 0; i--)
		if (ESP(&s->e[i - 1]) == sp && s->e[i - 1].stub == stub)
			return &s->e[i - 1];
	for (uint32_t i = 0; i < RT_RET_PARK; i++)
		if (s->park[i].sp == sp && s->park[i].stub == stub)
			return &s->park[i];
	return 0;
}

/* Is v the stub of one of this thread's entries?  Compares only: no
 * memory of the program is read. */
static int rt_ret_is_stub(const struct rt_ret_stack *s, uint64_t v)
{
	uint32_t n = s->top < RT_RET_DEPTH ? s->top : RT_RET_DEPTH;
	for (uint32_t i = 0; i < n; i++)
		if (s->e[i].stub == v)
			return 1;
	for (uint32_t i = 0; i < RT_RET_PARK; i++)
		if (s->park[i].sp && s->park[i].stub == v)
			return 1;
	return 0;
}

/* Is v the stub of an entry with slot sp?  Its ret then, down a chain. */
static uint64_t rt_ret_real(const struct rt_ret_stack *s, uint64_t sp, uint64_t v)
{
	const struct rt_ret_entry *e;
	for (int k = 0; k < RT_RET_DEPTH + RT_RET_PARK && (e = rt_ret_find(s, sp, v)); k++)
		v = e->ret;
	return v;
}

/*
 * libgcc's unwinder (C++ exceptions, backtrace(), _Unwind_Backtrace,
 * pthread_exit and cancellation) keeps the frame it steps to in a struct
 * _Unwind_Context on its own stack and calls
 * _Unwind_Find_FDE(ra - 1, &context->bases) for each frame, after it read
 * the frame's return address from its slot:
 *
 *   struct _Unwind_Context { reg[18]; cfa; ra; lsda; bases; ... }
 *                                     -24  -16         ^ rsi
 *
 * A hijacked slot gives ra = stub and cfa = the slot + 8.  This entry
 * handler puts the caller's address into context->ra and the lookup's pc
 * instead, so the unwinder goes on exactly as without the probe: the
 * personality routine, the CFI, a backtrace all see the real caller; the
 * slot keeps its stub, so a frame the unwinder only walked through (the
 * catch block's own frame, a backtrace()'s callers) still fires its
 * return probe when it returns.  The context is found only where it
 * must be: above this handler's frame on this stack, with both words
 * matching an entry, read without faulting.
 */
void rt_ret_unwind_fde(struct rt_regs *regs) RT_API;
void rt_ret_unwind_fde(struct rt_regs *regs)
{
	struct rt_shm_header *h = rt_hdr();
	struct rt_ret_stack *s = rt_ret_stack(h, 0);
	uint64_t pc = regs->rdi, bases = regs->rsi, cfa, ra;
	uint64_t own = (uint64_t)&regs->ret;

	if (!s || s->busy || bases < own + 24 || bases - own > (1u << 20) || (bases & 7))
		return;
	if (!rt_ret_is_stub(s, pc + 1)) /* the common case: a frame with its own address */
		return;
	if (rt_ret_peek(s, bases - 16, &ra) || rt_ret_peek(s, bases - 24, &cfa))
		return;
	if (ra != pc + 1 || cfa < 8 || !rt_ret_find(s, cfa - 8, ra))
		return;
	ra = rt_ret_real(s, cfa - 8, ra);
	*(uint64_t *)(bases - 16) = ra;
	regs->rdi = ra - 1;
	__atomic_fetch_add(&h->ret_unwound, 1, __ATOMIC_RELAXED);
}

/*
 * The fallback where _Unwind_Find_FDE could not be hooked (h->ret_precise
 * 0: a libgcc ubt did not find): entry handler on glibc's
 * _dl_find_object(), which libgcc calls for each frame it unwinds.  Every
 * hijacked slot above the unwinder's frame gets the caller's return
 * address back, so the unwinder walks the frames an unprobed run has; a
 * frame that returns before the next probed call then loses its return
 * probe (counted in ret_restored).
 */
void rt_ret_unwind(struct rt_regs *regs) RT_API;
void rt_ret_unwind(struct rt_regs *regs)
{
	struct rt_shm_header *h = rt_hdr();
	struct rt_ret_stack *s;
	uint64_t cur = (uint64_t)&regs->ret;

	if (h->ret_precise || !(s = rt_ret_stack(h, 0)) || !s->top || s->busy)
		return;
	rt_ret_lock(s);
	uint32_t n = s->top < RT_RET_DEPTH ? s->top : RT_RET_DEPTH;
	for (uint32_t i = n; i > 0; i--) { /* from the top: a chain's top stub is in the slot */
		struct rt_ret_entry *e = &s->e[i - 1];
		if ((e->sp & 1) || e->sp <= cur)
			continue;
		uint64_t *slot = (uint64_t *)e->sp;
		uint64_t v;
		if (rt_ret_peek(s, e->sp, &v) || v != e->stub)
			continue;
		*slot = e->ret;
		e->sp |= 1;
		s->nrestored++;
		__atomic_fetch_add(&h->ret_restored, 1, __ATOMIC_RELAXED);
	}
	rt_ret_unlock(s);
}
