/*
 * rt_ret.c - shadow stacks for return probes, running in the target.
 *
 * A return trampoline (attach/arch/x86_64/tramp_ret.c) calls
 * rt_ret_enter() at the probed function's entry: the caller's return
 * address is saved here and the trampoline then `call`s the function's
 * relocated body, so that the body returns into the trampoline's stub,
 * which calls rt_ret_leave() to get the caller's address back, runs the
 * return handlers and returns to the caller.  rt_ret_unwind() is the
 * handler of ubt's own entry probe on glibc's _dl_find_object(), which
 * libgcc's unwinder calls for every frame it steps through: it hands the
 * real return addresses back to the stack for the unwinder.
 * docs/ARCHITECTURE.md ("Return probes") has the whole picture; the
 * memory layout is drawn in abi.h.
 *
 * The common push and pop are done inline by the trampolines
 * (tramp_ret.c); rt_ret_enter and rt_ret_leave are their slow paths.
 * All three functions here run with the thread's slot marked busy, so
 * that a signal handler entering a probed function in between sees a
 * consistent stack (it runs that call without a return probe instead;
 * the inline paths test busy too).
 */
#include "rt.h"

extern struct rt_priv ubt_priv RT_API;

static inline uint32_t rt_ret_hash(uint64_t tp, uint32_t mask)
{
	return (uint32_t)((tp * RT_TP_HASH_MUL) >> RT_TP_HASH_SHIFT) & mask;
}

static inline long rt_getpid(void)
{
	return rt_syscall0(39 /* getpid */);
}

/* This thread's shadow stack; claim a free slot when `claim` is set. */
static struct rt_ret_stack *rt_ret_stack(struct rt_shm_header *h, int claim)
{
	struct rt_ret_stack *tab = (struct rt_ret_stack *)h->rets_addr;
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

/*
 * A thread pointer seen with a new tid: either a new thread reusing a dead
 * thread's TCB (same process: its entries are dead) or the child of a
 * fork() (another process: its entries are its own frames, keep them).
 */
static void rt_ret_check_tid(struct rt_shm_header *h, struct rt_ret_stack *s)
{
	uint32_t tid = rt_gettid();
	if (s->tid == tid)
		return;
	if ((uint32_t)rt_getpid() == h->pid) {
		s->top = 0;
		s->nrestored = 0;
	}
	s->tid = tid;
}

static void rt_ret_drop(struct rt_shm_header *h, struct rt_ret_stack *s, const struct rt_ret_entry *e)
{
	s->grave[s->grave_next++ % RT_RET_GRAVE] = *e;
	__atomic_fetch_add(&h->ret_dropped, 1, __ATOMIC_RELAXED);
}

/* Slots an unwinder was given back whose frames are still live get the stub again. */
static void rt_ret_rehijack(struct rt_ret_stack *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct rt_ret_entry *e = &s->e[i];
		if (!(e->sp & 1) || e->sp == RT_RET_PENDING)
			continue;
		e->sp &= ~1ull;
		uint64_t *slot = (uint64_t *)e->sp;
		if (*slot == e->ret)
			*slot = e->stub;
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
	uint64_t sp = (uint64_t)slot;
	uint32_t n;

	if (!ubt_priv.enabled) /* detached, or a forked child (abi.h, struct rt_priv) */
		return 0;
	s = rt_ret_stack(h, 1);
	if (!s || s->busy)
		goto skip;
	s->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (h->flags & RT_F_TID)
		rt_ret_check_tid(h, s);
	n = s->top;
	/* frames at or below this one were abandoned (longjmp, exception) */
	while (n && (s->e[n - 1].sp & ~1ull) <= sp) {
		rt_ret_drop(h, s, &s->e[n - 1]);
		n--;
	}
	if (s->nrestored)
		rt_ret_rehijack(s, n);
	if (n == RT_RET_DEPTH) {
		s->top = n;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->busy = 0;
		goto skip;
	}
	s->e[n].sp = sp;
	s->e[n].ret = *slot;
	s->e[n].stub = stub;
	s->top = n + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->busy = 0;
	return 1;
skip:
	__atomic_fetch_add(&h->ret_skipped, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * In the stub, after the body returned: slot is the one the entry saved
 * (the stub moved %rsp back onto it).  Writes the caller's return address
 * to *slot, where the stub's final `ret` takes it.
 */
void rt_ret_leave(uint64_t *slot) RT_API;
void rt_ret_leave(uint64_t *slot)
{
	struct rt_shm_header *h = rt_hdr();
	struct rt_ret_stack *s = rt_ret_stack(h, 0);
	uint64_t sp = (uint64_t)slot;
	uint32_t i, n;

	if (!s)
		goto lost;
	n = s->top;
	for (i = n; i > 0; i--)
		if ((s->e[i - 1].sp & ~1ull) == sp)
			break;
	if (i > 0) {
		*slot = s->e[i - 1].ret;
		if (s->busy) /* a signal interrupted this thread's own rt_ret_*: read only */
			return;
		s->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* entries above it: frames longjmp'ed over */
		for (uint32_t j = n; j > i; j--)
			rt_ret_drop(h, s, &s->e[j - 1]);
		s->top = i - 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->busy = 0;
		return;
	}
	/* dropped by mistake (a frame on another stack): the grave has it */
	for (i = 0; i < RT_RET_GRAVE; i++) {
		if ((s->grave[i].sp & ~1ull) == sp && s->grave[i].stub) {
			*slot = s->grave[i].ret;
			s->grave[i].sp = 0;
			return;
		}
	}
lost:
	/* Nothing knows where this call came from: there is no right thing
	 * left to do.  Counted so that ubt can say so, then a clean fault. */
	__atomic_fetch_add(&h->ret_lost, 1, __ATOMIC_RELAXED);
	__asm__ volatile("ud2");
}

/*
 * Entry handler on glibc's _dl_find_object(), which libgcc calls for each
 * frame it unwinds (C++ exceptions, backtrace(), pthread_exit/cancel):
 * every hijacked slot above the unwinder's frame gets the caller's return
 * address back, so the unwinder walks the frames an unprobed run has.
 */
void rt_ret_unwind(struct rt_regs *regs) RT_API;
void rt_ret_unwind(struct rt_regs *regs)
{
	struct rt_shm_header *h = rt_hdr();
	struct rt_ret_stack *s = rt_ret_stack(h, 0);
	uint64_t cur = (uint64_t)&regs->ret;

	if (!s || !s->top || s->busy)
		return;
	s->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < s->top; i++) {
		struct rt_ret_entry *e = &s->e[i];
		if ((e->sp & 1) || e->sp <= cur)
			continue;
		uint64_t *slot = (uint64_t *)e->sp;
		if (*slot != e->stub)
			continue;
		*slot = e->ret;
		e->sp |= 1;
		s->nrestored++;
		__atomic_fetch_add(&h->ret_restored, 1, __ATOMIC_RELAXED);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->busy = 0;
}
