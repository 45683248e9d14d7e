/*
 * output.c - draining the event rings and printing maps (see output.h).
 *
 * Events: every thread has its own ring, so a thread's events are in order;
 * one drain collects what every ring holds, sorts it by timestamp (stable,
 * so equal stamps keep ring order) and prints it, which interleaves threads
 * the way they happened.
 *
 * Maps are printed by maps.c.  Events that act on maps (print, clear,
 * zero) are carried out here, in event order.
 */
#include "output.h"
#include "output_internal.h"
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
}

/* ---- events ----------------------------------------------------------- */

struct event {
	uint64_t tsc;
	uint32_t seq;
	uint32_t len;
	uint8_t *rec;
};

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void print_event(struct out *o, const uint8_t *rec)
{
	const struct rt_event_hdr *h = (const struct rt_event_hdr *)rec;
	if (h->type == RT_EV_MAP) {
		struct rt_ev_map mo;
		memcpy(&mo, rec + sizeof(*h), sizeof(mo));
		if (mo.map_id >= (uint32_t)o->layout->nmaps)
			return;
		if (mo.op == RT_MOP_PRINT)
			out_print_map(o, &o->layout->maps[mo.map_id], mo.top, mo.div);
		else
			out_map_op(o, &o->layout->maps[mo.map_id], mo.op);
		return;
	}
	if (h->type != RT_EV_PRINTF)
		return;
	uint32_t id;
	memcpy(&id, rec + sizeof(*h), 4);
	if (id >= (uint32_t)o->info->nprintfs)
		return;
	struct buf b = {0};
	out_format(&b, o->info->printfs[id], rec + sizeof(*h) + 8);
	if (o->json) {
		struct buf j = {0};
		buf_printf(&j, "{\"type\": \"printf\", \"data\": ");
		out_json_str(&j, b.data ? b.data : "", b.len);
		buf_printf(&j, "}\n");
		buf_free(&b);
		b = j;
	}
	if (b.len)
		fwrite(b.data, 1, b.len, o->f);
	buf_free(&b);
}

int out_drain(struct out *o)
{
	const struct cg_layout *l = o->layout;
	struct rt_thread *tab = (struct rt_thread *)(o->data + l->threads_off);
	struct event *ev = NULL;
	size_t nev = 0, cap = 0;
	uint64_t *new_tail = xcalloc(l->nthreads, sizeof(uint64_t));

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
			if (h->len < 8 || h->len > l->ring_size)
				break; /* corrupt: stop reading this ring */
			if (h->type != RT_EV_PAD) {
				if (nev == cap) {
					cap = cap ? cap * 2 : 256;
					ev = xrealloc(ev, cap * sizeof(*ev));
				}
				ev[nev].tsc = h->tsc;
				ev[nev].seq = (uint32_t)nev;
				ev[nev].len = h->len;
				ev[nev].rec = xmalloc(h->len);
				memcpy(ev[nev].rec, rec, h->len);
				nev++;
			}
			tail += h->len;
		}
		new_tail[i] = tail;
	}
	/* hand the space back only after copying */
	for (uint32_t i = 0; i < l->nthreads; i++)
		if (tab[i].tp && new_tail[i] > tab[i].ring_tail)
			__atomic_store_n(&tab[i].ring_tail, new_tail[i], __ATOMIC_RELEASE);
	if (nev)
		qsort(ev, nev, sizeof(*ev), event_cmp);
	for (size_t i = 0; i < nev; i++) {
		print_event(o, ev[i].rec);
		free(ev[i].rec);
	}
	free(ev);
	free(new_tail);
	if (nev)
		fflush(o->f);
	return (int)nev;
}

void out_report_lost(struct out *o)
{
	const struct cg_layout *l = o->layout;
	struct rt_thread *tab = (struct rt_thread *)(o->data + l->threads_off);
	uint64_t lost = 0;
	for (uint32_t i = 0; i < l->nthreads; i++)
		lost += tab[i].lost;
	if (lost > o->lost_reported) {
		if (o->json)
			fprintf(o->f, "{\"type\": \"lost_events\", \"data\": {\"events\": %llu}}\n",
				(unsigned long long)(lost - o->lost_reported));
		else
			fprintf(o->f, "Lost %llu events\n", (unsigned long long)(lost - o->lost_reported));
		o->lost_reported = lost;
	}
}

