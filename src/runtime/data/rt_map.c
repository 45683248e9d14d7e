/*
 * rt_map.c - key lookup in the shared-memory hash maps (layout in abi.h).
 *
 * Lookups are lock-free: slots are insert-only and published with a
 * release store after their key is written.  Inserting a new key takes the
 * map's try-lock; a thread that cannot get it within a bounded spin drops
 * the update and counts it, so a thread preempted while holding the lock
 * can slow other threads down but never hang them.  A full map (cap
 * entries) drops the update and counts it too, like bpftrace.
 *
 * delete() never removes a key from the hash (a reader could be comparing
 * it): it clears the entry's live flag.  Lookups treat a dead entry as
 * absent; an insert of the same key revives it under the lock after
 * zeroing its values on every CPU.  An insert for an assignment that
 * overwrites the whole value (`@m[k] = v` of an integer or string map:
 * RT_INS_OVERWRITE) takes a dead entry without the lock and without
 * zeroing: the caller writes the value, then sets live with a release
 * store (cg_map_assign).  That is the latency idiom's `@s[tid] = nsecs`
 * after a `delete(@s[tid])`: no atomic instruction at all.
 *
 * Sizes and offsets come from the map's layout (rt_map_lay, rt.h), never
 * from the shared header, and an entry index read from a hash slot or
 * `used` is checked against the layout before it addresses anything: in
 * ubt, whose END and interval probes run this code too, the shared memory
 * is the target's to scribble on.  A bad index is a miss (or a drop).
 */
#include "../rt.h"

#define RT_LOCK_SPINS 4096

static inline int rt_key_eq(const uint64_t *a, const uint64_t *b, uint32_t words)
{
	for (uint32_t i = 0; i < words; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/*
 * The insert lock is held for a few dozen instructions, but its holder can
 * be preempted (three threads on two CPUs) for a whole time slice.  So:
 * spin a little, then yield the CPU a bounded number of times (a system
 * call, but only on this rare path: inserting a key), so a preempted holder
 * on our CPU can finish, and only then give up and count a drop.  Worst
 * case a few milliseconds for this one update; never unbounded.
 *
 * The lock word holds its holder's tid.  A probe run by a signal handler
 * that interrupted its own thread inside the lock would wait for a holder
 * that cannot run until it gives up: it drops the update at once instead.
 * Waiting those milliseconds in every handler livelocked a program whose
 * timer signal came more often (the handler never returned to the main
 * code, which held the lock).  Two threads of two namespaces may share a
 * tid; the worst that does is one update dropped without waiting.
 */
#define RT_LOCK_YIELDS 64

static int rt_map_trylock(struct rt_map *m)
{
	uint32_t me = rt_gettid() | 0x80000000u; /* never 0, the free lock */
	for (int y = 0; y <= RT_LOCK_YIELDS; y++) {
		for (int i = 0; i < RT_LOCK_SPINS; i++) {
			uint32_t holder = m->lock;
			if (!holder &&
			    __atomic_compare_exchange_n(&m->lock, &holder, me, 0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return 1;
			if (holder == me)
				return 0;
			__asm__ volatile("pause");
		}
		rt_syscall0(24 /* sched_yield */);
	}
	return 0;
}

static inline volatile uint32_t *rt_live(struct rt_map *m, uint32_t idx)
{
	return (volatile uint32_t *)((char *)m + rt_map_lay(m)->live_off) + idx;
}

/* Zeroes entry idx's values (every CPU's copy) and marks it live. */
static void rt_map_revive(struct rt_map *m, uint32_t idx)
{
	const struct rt_map *lay = rt_map_lay(m);
	char *vals = (char *)m + lay->vals_off + (uint64_t)idx * lay->val_size;
	uint32_t copies = lay->cpu_stride ? rt_lay()->ncpu + 1 : 1;
	for (uint32_t c = 0; c < copies; c++) {
		volatile uint64_t *v = (volatile uint64_t *)(vals + c * lay->cpu_stride);
		for (uint32_t w = 0; w < lay->val_size / 8; w++)
			v[w] = 0;
	}
	__atomic_store_n(rt_live(m, idx), 1, __ATOMIC_RELEASE);
}

/* A dead entry found by an insert: revive it under the lock. */
static int64_t rt_map_revive_locked(struct rt_map *m, uint32_t idx)
{
	if (!rt_map_trylock(m)) {
		__atomic_fetch_add(&m->drops, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (!*rt_live(m, idx))
		rt_map_revive(m, idx);
	__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
	return idx;
}

/*
 * Returns the entry index of key, or -1 (absent, or not insertable: the
 * drop is counted).  insert: 0 looks up only (a dead entry is absent);
 * RT_INS_REVIVE inserts a new key or revives a dead one with zero values;
 * RT_INS_OVERWRITE inserts a new key or returns a dead entry as it is
 * (see the top of this file).
 */
int64_t rt_map_lookup(struct rt_map *m, const uint64_t *key, int insert)
{
	const struct rt_map *lay = rt_map_lay(m);
	uint32_t words = lay->key_size / 8, places = rt_map_places(lay);
	uint64_t hv = rt_map_hash(key, words);
	uint32_t h32 = (uint32_t)hv;
	uint64_t *slots = (uint64_t *)((char *)m + lay->slots_off);
	char *keys = (char *)m + lay->keys_off;
	uint32_t mask = lay->nslots - 1;
	uint32_t i = rt_map_slot0(hv, lay->nslots);
	uint32_t n;

	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t s = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
		if (!s)
			break;
		if ((uint32_t)(s >> 32) == h32 && (uint32_t)s - 1 < places) {
			uint32_t idx = (uint32_t)s - 1;
			if (rt_key_eq((const uint64_t *)(keys + (uint64_t)idx * lay->key_size), key,
				      words)) {
				if (insert == RT_INS_OVERWRITE ||
				    __atomic_load_n(rt_live(m, idx), __ATOMIC_ACQUIRE))
					return idx;
				return insert ? rt_map_revive_locked(m, idx) : -1;
			}
		}
	}
	if (!insert)
		return -1;
	if (n > mask || !rt_map_trylock(m))
		goto drop;
	/* Slots before i were checked; a concurrent insert may have filled
	 * slot i or later ones (maybe with our key) before we got the lock. */
	for (; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t s = slots[i];
		if (!s)
			break;
		uint32_t idx = (uint32_t)s - 1;
		if ((uint32_t)(s >> 32) == h32 && idx < places &&
		    rt_key_eq((const uint64_t *)(keys + (uint64_t)idx * lay->key_size), key, words)) {
			if (!*rt_live(m, idx) && insert != RT_INS_OVERWRITE)
				rt_map_revive(m, idx);
			__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
			return idx;
		}
	}
	uint32_t used = m->used;
	if (n > mask || used >= lay->cap) {
		__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
		goto drop;
	}
	uint32_t idx = rt_map_nth(lay->rows, used);
	uint64_t *dst = (uint64_t *)(keys + (uint64_t)idx * lay->key_size);
	for (uint32_t w = 0; w < words; w++)
		dst[w] = key[w];
	*rt_live(m, idx) = 1; /* values of a never-used entry are still zero */
	__atomic_store_n(&slots[i], ((uint64_t)h32 << 32) | (idx + 1), __ATOMIC_RELEASE);
	__atomic_store_n(&m->used, used + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
	return idx;
drop:
	__atomic_fetch_add(&m->drops, 1, __ATOMIC_RELAXED);
	return -1;
}

/*
 * delete(@m[key]); delete(@m) of a scalar map forgets its value.  1 if
 * this call removed a value (bpftrace 0.24's delete() is true), 0 if there
 * was none or another thread's delete took it first.
 */
int64_t rt_map_delete(struct rt_map *m, const uint64_t *key)
{
	if (!rt_map_lay(m)->key_size) {
		/* assigned (written), or an aggregation with a value (count,
		 * sum, ...: they do not set written) */
		uint64_t was = __atomic_exchange_n(&m->written, 0, __ATOMIC_RELAXED);
		const struct rt_map *lay = rt_map_lay(m);
		const char *vals = (const char *)m + lay->vals_off;
		uint32_t copies = lay->cpu_stride ? rt_lay()->ncpu + 1 : 1;
		for (uint32_t c = 0; c < copies && !was; c++)
			for (uint32_t w = 0; w < lay->val_size / 8 && !was; w++)
				was = ((const volatile uint64_t *)(vals + c * lay->cpu_stride))[w];
		rt_map_revive(m, 0);
		return was != 0;
	}
	int64_t idx = rt_map_lookup(m, key, 0);
	return idx >= 0 && __atomic_exchange_n(rt_live(m, (uint32_t)idx), 0, __ATOMIC_RELEASE) != 0;
}

/*
 * rt_map_lookup as probe code calls it on the slow path of its inline
 * lookup (cg_map.c, slow_lookup): %r11 points at {struct rt_map *m;
 * uint64_t insert; uint64_t key[]} in the probe's frame and receives the
 * index; every other register is kept, so the probe's hot path sets up no
 * argument registers and its prologue saves none for this call.  The
 * lookup runs on the thread's probe stack (rt_pstack.c): the handlers that
 * call this one run on the target's stack, where a C call's frames would
 * not fit the bound.  Two words go there: the key's header for
 * rt_map_lookup_sw, and the index it returns (-1 if the hit could not
 * switch stacks: counted there, and the update is dropped, counted too).
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl rt_map_lookup_r11\n"
	".hidden rt_map_lookup_r11\n"
	"rt_map_lookup_r11:\n"
	"\tpush $-1\n"
	"\tpush %r11\n"
	"\tlea rt_map_lookup_sw(%rip), %r11\n"
	"\tcall rt_pstack_call\n"
	"\tpop %r11\n"
	"\tpop %r11\n"
	"\tret\n");

/* The body rt_pstack_call runs for rt_map_lookup_r11: F = {key header, index}. */
void rt_map_lookup_sw(long a, long b, long c, long d, long e, long f, uint64_t *F,
		      struct rt_thread *t) RT_API RT_PRESERVING;
void rt_map_lookup_sw(long a, long b, long c, long d, long e, long f, uint64_t *F,
		      struct rt_thread *t)
{
	const uint64_t *hdr = (const uint64_t *)F[0];
	F[1] = (uint64_t)rt_map_lookup((struct rt_map *)hdr[0], hdr + 2, (int)hdr[1]);
}

/*
 * The same two as probe code calls them for keys too long to look up
 * inline and for delete(@m) of a scalar map (cg_map.c): preserve_most
 * (abi.h, RT_PRESERVING_FUNCS), so the probe does not save and restore
 * the registers a C call may clobber; these save them only when called.
 */
int64_t rt_map_lookup_pm(struct rt_map *m, const uint64_t *key, int insert) RT_API RT_PRESERVING;
int64_t rt_map_lookup_pm(struct rt_map *m, const uint64_t *key, int insert)
{
	return rt_map_lookup(m, key, insert);
}

int64_t rt_map_delete_pm(struct rt_map *m, const uint64_t *key) RT_API RT_PRESERVING;
int64_t rt_map_delete_pm(struct rt_map *m, const uint64_t *key) { return rt_map_delete(m, key); }
