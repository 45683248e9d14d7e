/*
 * output.c - draining the event rings and printing maps (see output.h).
 *
 * Events: every thread has its own ring, so a thread's events are in order;
 * a drain prints one ring after the other.  Records carry no timestamp
 * (runtime/abi.h says why), so events of different threads follow drain
 * order, as with bpftrace's per-CPU perf buffers.
 *
 * Maps are printed by maps.c.  Events that act on maps (print, clear,
 * zero) are carried out here, in event order.
 */
#include "output.h"
#include "output_internal.h"
#include "stack.h"
#include "sym.h"

#include <stdlib.h>
#include <string.h>

void out_init(struct out *o, FILE *f, const struct sema_info *info, const struct cg_layout *layout,
	      uint8_t *data)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->info = info;
	o->layout = layout;
	o->data = data;
	out_fmt_info = info; /* strftime() values name their format by id (values.c) */
}

/* ---- events ----------------------------------------------------------- */

/* Writes what o->ob holds. */
static void flush_buf(struct out *o)
{
	if (o->ob.len)
		fwrite(o->ob.data, 1, o->ob.len, o->f);
	o->ob.len = 0;
}

void out_fini(struct out *o)
{
	flush_buf(o);
	buf_free(&o->ob);
}

/* One record; printf text goes to o->ob, map actions flush it first. */
static void print_event(struct out *o, const uint8_t *rec)
{
	const struct rt_event_hdr *h = (const struct rt_event_hdr *)rec;
	if (o->finalized)
		return;
	if (h->type == RT_EV_EXIT) {
		o->finalized = true;
		return;
	}
	if (h->type == RT_EV_MAP) {
		struct rt_ev_map mo;
		memcpy(&mo, rec + sizeof(*h), sizeof(mo));
		if (mo.map_id >= (uint32_t)o->layout->nmaps)
			return;
		flush_buf(o);
		if (mo.op == RT_MOP_PRINT)
			out_print_map(o, &o->layout->maps[mo.map_id], mo.top, mo.div);
		else
			out_map_op(o, &o->layout->maps[mo.map_id], mo.op);
		return;
	}
	if (h->type == RT_EV_WARN) { /* -k, -kk (warn.c) */
		flush_buf(o);
		out_print_warn(o, rec);
		return;
	}
	if (h->type == RT_EV_VALUE || h->type == RT_EV_CALL) {
		flush_buf(o);
		out_event_call(o, h->type, h->id, rec + sizeof(*h), h->len - sizeof(*h));
		return;
	}
	if (h->type != RT_EV_PRINTF || h->id >= (uint32_t)o->info->nprintfs)
		return;
	if (o->json) {
		struct buf b = {0};
		out_format(&b, o->info->printfs[h->id], rec + sizeof(*h));
		buf_printf(&o->ob, "{\"type\": \"printf\", \"data\": ");
		out_json_str(&o->ob, b.data ? b.data : "", b.len);
		buf_append(&o->ob, "}\n", 2);
		buf_free(&b);
	} else {
		out_format(&o->ob, o->info->printfs[h->id], rec + sizeof(*h));
	}
	if (o->ob.len >= 65536)
		flush_buf(o);
}

/*
 * Every ring in turn, each from its tail to its head as read at the start
 * (records are formatted straight from the ring, then the space is handed
 * back).  A thread's events stay in order; threads follow one another.
 */
int out_drain(struct out *o)
{
	const struct cg_layout *l = o->layout;
	struct rt_thread *tab = (struct rt_thread *)(o->data + l->threads_off);
	int nev = 0;

	for (uint32_t i = 0; i < l->nthreads; i++) {
		struct rt_thread *t = &tab[i];
		if (!t->tp)
			continue;
		uint64_t head = __atomic_load_n(&t->ring_head, __ATOMIC_ACQUIRE);
		uint64_t tail = t->ring_tail;
		uint8_t *ring = o->data + l->rings_off + (uint64_t)i * l->ring_size;
		while (tail < head) {
			uint8_t *rec = ring + (tail & (l->ring_size - 1));
			struct rt_event_hdr *h = (struct rt_event_hdr *)rec;
			if (h->len < 8 || h->len > l->ring_size || (h->len & 7))
				break; /* corrupt: stop reading this ring */
			if (h->type != RT_EV_PAD) {
				print_event(o, rec);
				nev++;
			}
			tail += h->len;
		}
		/* hand the space back only after formatting */
		if (tail > t->ring_tail)
			__atomic_store_n(&t->ring_tail, tail, __ATOMIC_RELEASE);
	}
	flush_buf(o);
	if (nev)
		fflush(o->f);
	return nev;
}

/*
 * Updates a map dropped: it was full (BPFTRACE_MAP_KEYS_MAX keys), or a new
 * key could not take the insert lock in bounded time.  Said once at the
 * end, on stderr, so that no count is silently short.
 */
void out_report_map_drops(struct out *o)
{
	for (int i = 0; i < o->layout->nmaps; i++) {
		const struct cg_map_layout *ml = &o->layout->maps[i];
		const struct rt_map *h = (const struct rt_map *)(o->data + ml->off);
		if (h->drops)
			fprintf(stderr,
				"WARNING: %llu update%s of %s dropped: the map was full (%u keys, "
				"BPFTRACE_MAP_KEYS_MAX) or busy\n",
				(unsigned long long)h->drops, h->drops == 1 ? "" : "s", ml->map->name,
				h->cap);
	}
	out_stack_report_drops(o->data); /* stack.c: stacks the stack table had no room for */
}

void out_report_lost(struct out *o)
{
	const struct cg_layout *l = o->layout;
	struct rt_thread *tab = (struct rt_thread *)(o->data + l->threads_off);
	uint64_t lost = 0;
	for (uint32_t i = 0; i < l->nthreads; i++)
		lost += tab[i].lost;
	/* events lost after exit() would not have been printed either */
	if (lost > o->lost_reported && !o->finalized) {
		if (o->json)
			fprintf(o->f, "{\"type\": \"lost_events\", \"data\": {\"events\": %llu}}\n",
				(unsigned long long)(lost - o->lost_reported));
		else
			fprintf(o->f, "Lost %llu events\n", (unsigned long long)(lost - o->lost_reported));
	}
	if (lost > o->lost_reported)
		o->lost_reported = lost;
}

