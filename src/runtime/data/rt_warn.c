/*
 * rt_warn.c - per-event helper warnings for -k / -kk, running in the target.
 *
 * Pipeline position: linked with the probe code.  Probe code compiled with
 * -k or -kk calls rt_warn() when an operation that bpftrace performs with a
 * BPF helper fails (a read of target memory, an update of a full map), the
 * way bpftrace's probes emit an error event when a helper returns an error.
 * The event (RT_EV_WARN, runtime/abi.h) carries the script location and
 * the error; ubt prints it in the thread's event order.  Without -k no code
 * calls this, so the common path pays nothing.  A full ring drops the
 * warning like any event (counted in `lost`).
 */
#include "../rt.h"

/*
 * where = line << 32 | col, to = end_line << 32 | end_col,
 * what = helper << 32 | (uint32_t)err: three integer arguments, so
 * codegen passes constants and nothing is built in memory.
 */
void rt_warn(struct rt_thread *t, uint64_t where, uint64_t to, uint64_t what) RT_API;
void rt_warn(struct rt_thread *t, uint64_t where, uint64_t to, uint64_t what)
{
	struct rt_thread *own = 0;
	if (!t) {
		/* a probe that needs no thread slot otherwise (map updates only) */
		own = t = rt_thread_enter();
		if (!t)
			return;
	}
	uint32_t len = sizeof(struct rt_event_hdr) + sizeof(struct rt_ev_warn);
	struct rt_event_hdr *h = rt_ring_reserve(t, len);
	if (!h) {
		if (own)
			rt_thread_exit(own);
		return;
	}
	struct rt_ev_warn *w = (struct rt_ev_warn *)(h + 1);
	w->line = (uint32_t)(where >> 32);
	w->col = (uint32_t)where;
	w->end_line = (uint32_t)(to >> 32);
	w->end_col = (uint32_t)to;
	w->helper = (uint32_t)(what >> 32);
	w->err = (int32_t)(uint32_t)what;
	h->len = (len + 7) & ~7u;
	h->type = RT_EV_WARN;
	h->id = 0;
	rt_ring_commit(t);
	if (own)
		rt_thread_exit(own);
}
