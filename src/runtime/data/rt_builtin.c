/*
 * rt_builtin.c - runtime helpers behind builtins and string functions that
 * probe code calls (nsecs is in rt_time.c): rand, comm/uid/gid (a
 * per-thread cache, below), numaid/cpu where rseq does not tell (getcpu).
 * Reads of target memory, str() included, are in rt_read.c.
 *
 * comm, uid and gid are the kernel's view of the thread (bpftrace reads
 * current->comm and current's credentials).  Asking the kernel costs a
 * system call per use (~130 ns for prctl(PR_GET_NAME), ~75 ns for getuid
 * on a VM), so each thread keeps a copy in its slot (struct rt_ids), tagged
 * with the header's ids_gen when it was read.  Probe code (cg_call.c) uses
 * the copy while the tags match (one load and compare) and calls
 * rt_ids_load() otherwise.  ubt raises ids_gen when its poll of
 * /proc/PID/task sees a name or an id change (attach/target/ids.c), so a change
 * shows at the latest one poll later (docs/compat.md).
 *
 * Pipeline position: linked with the probe code and injected into the
 * target (see rt.h); the same object serves BEGIN/END inside ubt.
 */
#include "../rt.h"

/* rand: a 32-bit value from the TSC through splitmix64 (bpftrace's is
 * bpf_get_prandom_u32: not cryptographic either). */
uint32_t rt_rand(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t z = ((uint64_t)hi << 32 | lo) + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

/* comm: the thread's name (16 bytes, NUL-padded) via prctl(PR_GET_NAME). */
void rt_comm(char *dst)
{
	for (int i = 0; i < 16; i++)
		dst[i] = 0;
	rt_syscall6(157 /* prctl */, 16 /* PR_GET_NAME */, (long)dst, 0, 0, 0, 0);
}

/*
 * getuid (which 0) or getgid (1) as the host sees it: a thread in another
 * user namespace gets its namespace's id from the kernel; the header holds
 * that namespace's map (ubt read /proc/PID/uid_map), unmapped ids are the
 * kernel's overflow id.  The header is the target's to scribble on: at
 * worst its own ids come out wrong.
 */
static uint32_t rt_cred(int which)
{
	uint32_t id =
	    (uint32_t)rt_syscall6(which ? 104 /* getgid */ : 102 /* getuid */, 0, 0, 0, 0, 0, 0);
	const struct rt_shm_header *h = rt_hdr();
	uint32_t n = h->idmap_n[which];
	if (!n || ubt_priv.layout) /* BEGIN, END, interval: ubt's own ids, the host's */
		return id;
	for (uint32_t i = 0; i < n && i < RT_IDMAP_MAX; i++) {
		const struct rt_idmap *e = &h->idmap[which][i];
		if (id - e->first < e->count)
			return e->lower + (id - e->first);
	}
	return 65534;
}

/* Fills ids from the kernel (gen untouched). */
static void rt_ids_read(struct rt_ids *ids)
{
	rt_comm(ids->comm);
	ids->uid = rt_cred(0);
	ids->gid = rt_cred(1);
}

/*
 * The slow path of comm/uid/gid: the thread's cache is empty or older than
 * ids_gen (or probe code did not find the slot inline).  Refreshes the
 * cache and copies it to dst; a thread without a slot (table full) reads
 * into dst directly.  The generation is read before the values, so a
 * change ubt sees after that read raises it past what the cache holds.
 */
void rt_ids_load(struct rt_ids *dst)
{
	struct rt_thread *t = rt_thread_find();
	if (!t) {
		rt_ids_read(dst);
		return;
	}
	uint64_t gen = __atomic_load_n(&rt_hdr()->ids_gen, __ATOMIC_ACQUIRE);
	if (t->ids.gen != gen || !gen) {
		struct rt_ids fresh;
		rt_ids_read(&fresh);
		t->ids.gen = 0; /* a probe interrupting the copy refreshes on its own */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->ids.uid = fresh.uid;
		t->ids.gid = fresh.gid;
		for (int i = 0; i < 16; i++)
			t->ids.comm[i] = fresh.comm[i];
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->ids.gen = gen;
	}
	dst->uid = t->ids.uid;
	dst->gid = t->ids.gid;
	for (int i = 0; i < 16; i++)
		dst->comm[i] = t->ids.comm[i];
}

/* uid, gid, numaid: what = 0, 1, 2 */
uint64_t rt_ids(uint32_t what)
{
	if (what <= 1)
		return rt_cred((int)what);
	uint32_t cpu = 0, node = 0;
	rt_syscall6(309 /* getcpu */, (long)&cpu, (long)&node, 0, 0, 0, 0);
	return what == 2 ? node : cpu;
}

/*
 * signal(SIG) (--unsafe): SIG to the whole target process, as bpftrace's
 * bpf_send_signal() sends it to the current process: kill(2) on the pid
 * ubt wrote into the header.  Out of 1..64 (a computed value): nothing,
 * as the helper fails then.  If this thread takes the signal, its handler
 * runs as the system call returns, before the probed code goes on.
 */
void rt_signal(uint64_t sig)
{
	if (sig < 1 || sig > 64)
		return;
	/* the process the probe fired in (a fork child's own: rt_fork_enable) */
	rt_syscall6(62 /* kill */, (long)(ubt_priv.layout ? rt_lay()->pid : ubt_priv.pid),
		    (long)sig, 0, 0, 0, 0);
}
