/*
 * rt_ring.c - the per-thread event rings (printf, exit) in shared memory.
 *
 * Single producer (the owning thread) and single consumer (ubt).  The
 * producer reserves with rt_ring_reserve(), fills the record, and publishes
 * with rt_ring_commit(): a release store of ring_head, so ubt never sees a
 * half-written record.  A full ring drops the record and counts it in
 * `lost` (not once exit() was called: events are not printed after it);
 * ubt reports the count.  Record layout: runtime/abi.h.
 *
 * A probe can run inside another probe of the same thread (in a signal
 * handler).  It runs to its end before the interrupted one goes on, so it
 * may use the ring unless it interrupted a write: `writing` is 1 from
 * before ring_head is read to after the record is published (a few stores,
 * in probe code's inline copy too, cg_call.c).  An event that finds it set
 * is dropped and counted (header `reentered`); ubt reports the count.
 */
#include "../rt.h"

/* The reservation, with t->writing already 1 (cleared again on failure). */
static void *ring_reserve(struct rt_thread *t, uint32_t len)
{
	const struct rt_shm_header *h = rt_lay(); /* sizes and offsets: never the shared copy's */
	struct rt_thread *tab = (struct rt_thread *)(ubt_shm + h->threads_off);
	uint64_t size = h->ring_size;
	char *ring = ubt_shm + h->rings_off + (uint64_t)(t - tab) * size;
	uint64_t head = t->ring_head;
	uint64_t tail = __atomic_load_n(&t->ring_tail, __ATOMIC_ACQUIRE);
	t->tail_seen = tail;
	uint64_t pos = head & (size - 1);
	uint64_t to_end = size - pos;

	len = (len + 7) & ~7u;
	uint64_t need = len <= to_end ? len : to_end + len;
	if (len > size / 2 || head + need - tail > size) {
		/* after exit() ubt prints no further event: a full ring then
		 * drops what nobody will read, and loses nothing */
		if (!rt_hdr()->exit_req)
			t->lost++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->writing = 0;
		return 0;
	}
	if (len > to_end) {
		struct rt_event_hdr *pad = (struct rt_event_hdr *)(ring + pos);
		pad->len = (uint32_t)to_end;
		pad->type = RT_EV_PAD;
		head += to_end;
		pos = 0;
	}
	t->ring_resv = head + len;
	return ring + pos;
}

void *rt_ring_reserve(struct rt_thread *t, uint32_t len)
{
	if (t->writing) {
		__atomic_fetch_add(&rt_hdr()->reentered, 1, __ATOMIC_RELAXED);
		return 0;
	}
	t->writing = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return ring_reserve(t, len);
}

/* Probe code's slow path: its inline code has set `writing` already. */
void *rt_ring_reserve_slow(struct rt_thread *t, uint32_t len) RT_API;
void *rt_ring_reserve_slow(struct rt_thread *t, uint32_t len)
{
	return ring_reserve(t, len);
}

void rt_ring_commit(struct rt_thread *t)
{
	__atomic_store_n(&t->ring_head, t->ring_resv, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->writing = 0;
}
