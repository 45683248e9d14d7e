/*
 * rt_map.c - key lookup in the shared-memory hash maps (layout in abi.h).
 *
 * Lookups are lock-free: slots are insert-only and published with a
 * release store after their key is written.  Inserting a new key takes the
 * map's try-lock; a thread that cannot get it within a bounded spin drops
 * the update and counts it, so a thread preempted while holding the lock
 * can slow other threads down but never hang them.  A full map (cap
 * entries) drops the update and counts it too, like bpftrace.
 */
#include "rt.h"

#define RT_LOCK_SPINS 4096

static inline uint64_t rt_hash_key(const uint64_t *key, uint32_t words)
{
	uint64_t h = 0x84222325cbf29ce4ull;
	for (uint32_t i = 0; i < words; i++) {
		h ^= key[i];
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h;
}

static inline int rt_key_eq(const uint64_t *a, const uint64_t *b, uint32_t words)
{
	for (uint32_t i = 0; i < words; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int rt_map_trylock(struct rt_map *m)
{
	for (int i = 0; i < RT_LOCK_SPINS; i++) {
		if (!m->lock && !__atomic_exchange_n(&m->lock, 1, __ATOMIC_ACQUIRE))
			return 1;
		__asm__ volatile("pause");
	}
	return 0;
}

/*
 * Returns the entry index of key, inserting it when insert is set, or -1
 * (absent, or not insertable: the drop is counted).
 */
int64_t rt_map_lookup(struct rt_map *m, const uint64_t *key, int insert)
{
	uint32_t words = m->key_size / 8;
	uint64_t hv = rt_hash_key(key, words);
	uint32_t h32 = (uint32_t)(hv >> 32);
	uint64_t *slots = (uint64_t *)((char *)m + m->slots_off);
	char *keys = (char *)m + m->keys_off;
	uint32_t mask = m->nslots - 1;
	uint32_t i = (uint32_t)hv & mask;
	uint32_t n;

	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t s = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
		if (!s)
			break;
		if ((uint32_t)(s >> 32) == h32) {
			uint32_t idx = (uint32_t)s - 1;
			if (rt_key_eq((const uint64_t *)(keys + (uint64_t)idx * m->key_size), key,
				      words))
				return idx;
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
		if ((uint32_t)(s >> 32) == h32 &&
		    rt_key_eq((const uint64_t *)(keys + (uint64_t)idx * m->key_size), key, words)) {
			__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
			return idx;
		}
	}
	if (n > mask || m->used >= m->cap) {
		__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
		goto drop;
	}
	uint32_t idx = m->used;
	uint64_t *dst = (uint64_t *)(keys + (uint64_t)idx * m->key_size);
	for (uint32_t w = 0; w < words; w++)
		dst[w] = key[w];
	__atomic_store_n(&slots[i], ((uint64_t)h32 << 32) | (idx + 1), __ATOMIC_RELEASE);
	__atomic_store_n(&m->used, idx + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
	return idx;
drop:
	__atomic_fetch_add(&m->drops, 1, __ATOMIC_RELAXED);
	return -1;
}
