/*
 * rt_thread.c - per-thread state of the target's threads, found without
 * the target's TLS.
 *
 * A probe that needs per-thread state (its event ring, cached comm/uid/gid,
 * the state of fault-tolerant reads) calls rt_thread_enter().  The thread is
 * identified by its thread pointer (%fs:0, which points to itself under the
 * x86-64 TLS ABI for any libc), hashed into an open-addressing table of
 * struct rt_thread in shared memory.  The first hit of a thread claims a
 * free slot; later hits find it with one load and compare (probe code does
 * that inline, cg_call.c).
 *
 * Threads come and go; slots are never freed, but the slot of a thread that
 * exited is taken over by a thread that needs one (the owner, {tp, tid},
 * changes by one cmpxchg16b, so two threads never both win a slot):
 *   - the same thread pointer with another tid: glibc reused the dead
 *     thread's stack and TCB for a new thread; the new one takes the slot
 *     found at its own place (tid_off known: RT_F_TID, else the tid is read
 *     with gettid, and probe code cannot tell the two apart: harmless, the
 *     old thread is gone);
 *   - the table is full: a slot whose tid no longer exists in the process
 *     (tgkill(pid, tid, 0) fails with ESRCH), looking at most
 *     RT_RECYCLE_TRIES slots from the thread's own place; after a look that
 *     found none, no thread looks again for RT_RECYCLE_NS (each look is a
 *     system call, a few us: a thread without a slot would otherwise pay
 *     that on every hit).
 * A slot taken over keeps its ring (ubt drains it in order) and drops the
 * cached comm/uid/gid and read state.  A thread that still finds no slot
 * skips the hit, counted in threads_full, and ubt reports it at exit.
 *
 * Probes nest: a signal handler that runs a probe can interrupt another
 * probe of the same thread.  `depth` counts the probes running; the inner
 * one runs (its counts and maps are exact) but its events are dropped and
 * counted (rt_ring.c): the outer one may be writing the ring.  A plain
 * increment is enough: a handler that interrupts it restores the value
 * before the interrupted code goes on.
 *
 * rt_thread_find() alone (no depth) serves comm/uid/gid (rt_builtin.c).
 */
#include "../rt.h"

#define RT_RECYCLE_TRIES 64
#define RT_RECYCLE_NS 10000000ull

extern struct rt_priv ubt_priv RT_API; /* this process's private page (abi.h) */
uint64_t rt_nsecs(void) RT_API RT_PRESERVING; /* rt_time.c */

static inline uint32_t rt_hash_tp(uint64_t tp, uint32_t mask)
{
	return (uint32_t)((tp * RT_TP_HASH_MUL) >> RT_TP_HASH_SHIFT) & mask;
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

/*
 * Replaces the owner {tp, tid and depth} of slot t, if it is still
 * {tp0, td0}, by {tp1, td1}; 1 if it was.  One instruction, so a thread
 * that compares the owner sees the old one or the new one, never a mix.
 */
static int rt_owner_cas(struct rt_thread *t, uint64_t tp0, uint64_t td0, uint64_t tp1,
			uint64_t td1)
{
	uint8_t ok;
	__asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
			 : "=q"(ok), "+m"(*(volatile uint64_t(*)[2])t), "+a"(tp0), "+d"(td0)
			 : "b"(tp1), "c"(td1)
			 : "memory", "cc");
	return ok;
}

/*
 * The lowest page of slot t's probe stack made inaccessible, once per slot
 * (rt_pstack.c): a probe stack that overflows faults there instead of
 * writing into the next slot's.
 */
static void rt_guard(struct rt_thread *t, const struct rt_shm_header *h)
{
	if (t->pstack || !ubt_priv.pstack_base)
		return;
	uint64_t i = (uint64_t)((char *)t - (ubt_shm + h->threads_off)) >> RT_THREAD_SHIFT;
	rt_syscall4(10 /* mprotect */, (long)(ubt_priv.pstack_base + i * ubt_priv.pstack_size),
		    RT_PSTACK_GUARD, 0 /* PROT_NONE */, 0);
	t->pstack = 1;
}

/*
 * The thread tid exists nowhere any more (tkill: in any process, so that
 * the threads of fork children, which share the table, count too).  A
 * tid without the kernel's (no RT_F_TID: gettid's own) is this thread's.
 */
static int rt_tid_gone(uint32_t tid)
{
	tid &= ~RT_TID_HOST;
	return rt_syscall4(200 /* tkill */, tid, 0, 0, 0) == -3 /* ESRCH */;
}

/* Makes slot t, now {tp0, td0}, this thread's: 1 if it did. */
static int rt_take(struct rt_thread *t, uint64_t tp0, uint64_t td0, uint64_t tp, uint32_t tid)
{
	if (!rt_owner_cas(t, tp0, td0, tp, tid))
		return 0;
	if (tp0) { /* the old thread's state */
		t->ids.gen = 0;
		t->rd_state = 0;
		t->sys_nr = 0; /* not its system call (a clone child's first return) */
	}
	rt_guard(t, rt_lay());
	return 1;
}

/* The second word of the owner: tid, depth (a torn read only makes the CAS fail) */
static inline uint64_t rt_owner_td(const struct rt_thread *t)
{
	return (uint64_t)t->tid | (uint64_t)t->depth << 32;
}

struct rt_thread *rt_thread_find(void)
{
	const struct rt_shm_header *h = rt_lay(); /* the table's place and size (rt.h) */
	struct rt_thread *tab = (struct rt_thread *)(ubt_shm + h->threads_off);
	uint64_t tp = rt_thread_pointer();
	uint32_t mask = h->nthreads - 1, home = rt_hash_tp(tp, mask), i = home;
	/* ubt's own threads (BEGIN, END, interval) run with their own private
	 * page, the only one with a layout copy (a fork child's pid differs too) */
	int host = ubt_priv.layout != 0;
	/* a Go thread's identity is its tid already (rt_thread_pointer) */
	uint32_t tid = (tp >> 63 ? (uint32_t)tp : rt_gettid()) | (host ? RT_TID_HOST : 0);

	/* slots are never freed, so this thread's is before the first free one
	 * (a free slot another thread claimed first is passed over) */
	for (uint32_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		struct rt_thread *t = &tab[i];
		uint64_t cur = t->tp, td = rt_owner_td(t);
		if (cur == tp && (uint32_t)td == tid)
			return t;
		/* the same TCB with another tid: that thread exited, this one reuses
		 * it (a thread of ubt and one of the target may have equal thread
		 * pointers, in two address spaces: neither takes the other's; nor
		 * does a fork child's first thread take its parent thread's, on
		 * the same TCB address in another process, while that one lives) */
		if ((cur == 0 ||
		     (cur == tp && ((uint32_t)td & RT_TID_HOST) == (tid & RT_TID_HOST) &&
		      rt_tid_gone((uint32_t)td))) &&
		    rt_take(t, cur, td, tp, tid))
			return t;
	}
	/* full: the slot of a thread that exited (ubt's threads never take one) */
	uint64_t now = rt_nsecs();
	int look = !host && now >= rt_hdr()->recycle_next;
	i = home;
	for (uint32_t n = 0; look && n < RT_RECYCLE_TRIES && n <= mask; n++, i = (i + 1) & mask) {
		struct rt_thread *t = &tab[i];
		uint64_t cur = t->tp, td = rt_owner_td(t);
		uint32_t old = (uint32_t)td;
		if (!cur || (old & RT_TID_HOST) || old == tid)
			continue;
		if (rt_tid_gone(old) && rt_take(t, cur, td, tp, tid))
			return t;
	}
	if (look)
		rt_hdr()->recycle_next = now + RT_RECYCLE_NS;
	__atomic_fetch_add(&rt_hdr()->threads_full, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * A fork child (attach/inject/forks.c) got its private page zeroed
 * (MADV_WIPEONFORK): its probes see enabled == 0 and return.  While ubt
 * traces the family (forks_on), the child's first hit fills the page as
 * its own (its pid; what the traced process's page holds of signal
 * actions and probe stacks, from the header) and turns its probes on, as
 * bpftrace's probes fire in a -p or -c target's children.  Not without the
 * kernel's tid in the TCB (RT_F_TID): the child's first thread has its
 * parent thread's TCB address, and only the tid tells their slots apart;
 * nor in another pid namespace (RT_F_PIDNS), where getpid is not the
 * host's pid `pid` must give.  1 if the probes are on now.
 */
uint32_t rt_fork_enable(void)
{
	const struct rt_shm_header *h = rt_hdr();
	uint32_t zero = 0;
	if (ubt_priv.layout || (h->flags & (RT_F_TID | RT_F_PIDNS)) != RT_F_TID ||
	    !__atomic_load_n(&h->forks_on, __ATOMIC_ACQUIRE))
		return 0;
	/* the traced process's page has its size: only a wiped one is filled,
	 * by one thread (another meeting it half filled skips its hit) */
	if (!__atomic_compare_exchange_n(&ubt_priv.size, &zero, (uint32_t)sizeof(struct rt_priv), 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	ubt_priv.pid = (uint32_t)rt_getpid();
	ubt_priv.rd_gen = h->fork_rd_gen;
	ubt_priv.pstack_base = h->fork_pstack_base;
	ubt_priv.pstack_size = h->fork_pstack_size;
	ubt_priv.pstack_seg = h->fork_pstack_seg;
	__atomic_store_n(&ubt_priv.enabled, 1, __ATOMIC_RELEASE);
	return 1;
}

struct rt_thread *rt_thread_enter(void)
{
	struct rt_thread *t = rt_thread_find();
	if (t) {
		t->depth = t->depth + 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	return t;
}

void rt_thread_exit(struct rt_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->depth = t->depth - 1;
}

/*
 * vfork/posix_spawn (attach/inject/forks.c): ubt's entry probe marks the calling
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
	uint32_t hpid, htid;
	if ((rt_hdr()->flags & RT_F_PIDNS) && !rt_host_ids(&hpid, &htid))
		return want_tid ? htid : hpid;
	return want_tid ? tid : (uint64_t)rt_syscall0(39 /* getpid */);
}

/*
 * Host ids (RT_F_PIDNS).  A thread in a pid namespace learns only its
 * namespace's ids from the kernel (gettid, %fs:tid_off), but bpftrace
 * prints the host's, and ps on the host shows those.  The kernel
 * translates ids for whoever looks through a procfs: ubt's, whose
 * descriptor attach put in the target (host_proc_fd), names this thread
 * in the host's namespace:
 *
 *   readlinkat(host_proc_fd, "thread-self") = "16206/task/16224"
 *                                               tgid       tid
 *
 * Two system calls (fstat checks that the descriptor is still that procfs:
 * the program may have closed it and opened something else under the
 * number), made once per thread (rt_host_tid keeps the answer in the
 * thread's slot) and in a vfork child.  0, or -errno with *pid, *tid
 * untouched.
 */
static long rt_parse_u32(const char *s, long n, long *i, uint32_t *out)
{
	uint64_t v = 0;
	long start = *i;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9' && v <= 0xffffffffull)
		v = v * 10 + (uint64_t)(s[(*i)++] - '0');
	if (*i == start || v > 0xffffffffull)
		return -22 /* EINVAL */;
	*out = (uint32_t)v;
	return 0;
}

int rt_host_ids(uint32_t *pid, uint32_t *tid)
{
	const struct rt_shm_header *h = rt_hdr();
	uint64_t st[18]; /* struct stat (144 bytes), st_dev first */
	char buf[48];
	long fd = h->host_proc_fd, i = 0;
	if (rt_syscall4(5 /* fstat */, fd, (long)st, 0, 0) || st[0] != h->host_proc_dev)
		return -9 /* EBADF */;
	long n = rt_syscall4(267 /* readlinkat */, fd, (long)"thread-self", (long)buf, sizeof(buf));
	uint32_t p, t;
	if (n <= 0 || rt_parse_u32(buf, n, &i, &p) || n - i < 6 || buf[i] != '/' ||
	    buf[i + 1] != 't' || buf[i + 5] != '/')
		return -22 /* EINVAL */;
	i += 6;
	if (rt_parse_u32(buf, n, &i, &t) || i != n)
		return -22;
	*pid = p;
	*tid = t;
	return 0;
}

/*
 * `tid` in a pid namespace, when probe code's inline check of the slot's
 * htid failed: the thread's first hit, or its slot taken over.  The
 * namespace's tid is returned if the host's cannot be had (the descriptor
 * gone): wrong ids are then what the kernel gave, never garbage.
 */
uint64_t rt_host_tid(void) RT_API;
uint64_t rt_host_tid(void)
{
	uint32_t ns = rt_gettid(), hpid, host;
	struct rt_thread *t = rt_thread_find();
	uint64_t w = t ? t->htid : 0;
	if (t && w && (uint32_t)w == ns)
		return w >> 32;
	if (rt_host_ids(&hpid, &host))
		return ns;
	if (t)
		t->htid = (uint64_t)ns | (uint64_t)host << 32;
	return host;
}
