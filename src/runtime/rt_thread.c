/*
 * rt_thread.c - per-thread state of the target's threads, found without
 * the target's TLS.
 *
 * A probe that needs per-thread state (its event ring, the re-entrancy
 * guard) calls rt_thread_enter().  The thread is identified by its thread
 * pointer (%fs:0, which points to itself under the x86-64 TLS ABI for any
 * libc), hashed into an open-addressing table of struct rt_thread in
 * shared memory.  The first hit of a thread claims a free slot with a
 * compare-and-swap; later hits find it with one load and compare.
 *
 * A thread pointer can be reused by a new thread after the old one exits
 * (glibc caches thread stacks).  When ubt knows where the kernel tid lives
 * in the TCB (RT_F_TID), a tid mismatch detects the reuse and the slot is
 * taken over: its ring keeps flowing, the guard is reset, the cached
 * comm/uid/gid (struct rt_ids) dropped.
 *
 * rt_thread_find() alone (no guard) serves comm/uid/gid (rt_builtin.c),
 * whose cache a re-entered probe may share with the probe it interrupted.
 */
#include "rt.h"

static inline uint32_t rt_hash_tp(uint64_t tp, uint32_t mask)
{
	return (uint32_t)((tp * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

uint32_t rt_gettid(void)
{
	const struct rt_shm_header *h = rt_lay();
	if (h->flags & RT_F_TID) {
		uint32_t tid;
		__asm__ volatile("movl %%fs:(%1), %0" : "=r"(tid) : "r"((int64_t)h->tid_off));
		return tid;
	}
	return (uint32_t)rt_syscall0(186 /* gettid */);
}

struct rt_thread *rt_thread_find(void)
{
	const struct rt_shm_header *h = rt_lay(); /* the table's place and size (rt.h) */
	struct rt_thread *tab = (struct rt_thread *)(ubt_shm + h->threads_off);
	uint64_t tp = rt_thread_pointer();
	uint32_t mask = h->nthreads - 1;
	uint32_t i = rt_hash_tp(tp, mask);

	for (uint32_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		struct rt_thread *t = &tab[i];
		uint64_t cur = t->tp;
		if (cur == tp) {
			if ((h->flags & RT_F_TID) && t->tid != rt_gettid()) {
				/* a new thread reusing a dead thread's TCB */
				t->tid = rt_gettid();
				t->busy = 0;
				t->ids.gen = 0; /* the old thread's comm/uid/gid */
			}
			return t;
		}
		if (cur == 0) {
			uint64_t expect = 0;
			if (__atomic_compare_exchange_n(&t->tp, &expect, tp, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				t->tid = rt_gettid();
				return t;
			}
			if (expect == tp) /* cannot happen: only this thread claims tp */
				return t;
		}
	}
	__atomic_fetch_add(&rt_hdr()->threads_full, 1, __ATOMIC_RELAXED);
	return 0;
}

struct rt_thread *rt_thread_enter(void)
{
	struct rt_thread *t = rt_thread_find();
	if (!t)
		return 0;
	if (t->busy) {
		/* a signal handler (or a probed function called from probe
		 * code) re-entered: skip rather than corrupt the ring */
		__atomic_fetch_add(&rt_hdr()->reentered, 1, __ATOMIC_RELAXED);
		return 0;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return t;
}

void rt_thread_exit(struct rt_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/*
 * vfork/posix_spawn (attach/forks.c): ubt's entry probe marks the calling
 * thread; its child, on the same TCB, then reads pid and tid from the
 * kernel (probe code calls rt_vfork_id when priv->vfork_tp is its %fs:0).
 * The parent thread itself runs again only once the child has exec'd or
 * exited: when the kernel's tid is the TCB's, the mark is dropped.
 */
extern struct rt_priv ubt_priv RT_API;

void rt_on_vfork(void *regs) RT_API;
void rt_on_vfork(void *regs)
{
	(void)regs;
	__atomic_store_n(&ubt_priv.vfork_tp, rt_thread_pointer(), __ATOMIC_RELAXED);
}

uint64_t rt_vfork_id(uint32_t want_tid) RT_API;
uint64_t rt_vfork_id(uint32_t want_tid)
{
	struct rt_priv *p = &ubt_priv;
	uint64_t tid = (uint64_t)rt_syscall0(186 /* gettid */);
	uint64_t tp = rt_thread_pointer();
	if ((rt_hdr()->flags & RT_F_TID) && tid == rt_gettid())
		__atomic_compare_exchange_n(&p->vfork_tp, &tp, 0, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	return want_tid ? tid : (uint64_t)rt_syscall0(39 /* getpid */);
}
