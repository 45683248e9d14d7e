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
 *
 * The rings are in memory the target can write (trust.c): ubt keeps its
 * own tail per ring, reads at most one ring's worth per drain, copies each
 * record out before checking and printing it, and prints only record types
 * and ids some probe of the script sends.
 */
#include "output.h"
#include "output_internal.h"
#include "stack.h"
#include "sym.h"

#include <stdlib.h>
#include <string.h>

/* The most bytes of payload formatting a record of pf can read (printf.c,
 * calls.c): each argument its size rounded up to 8, at least 8. */
static size_t payload_max(const struct sema_printf *pf)
{
	size_t n = 0;
	for (int i = 0; i < pf->nargs && i < (int)ARRAY_SIZE(pf->args); i++) {
		size_t size = pf->args[i].size > 0 ? (size_t)pf->args[i].size : 1;
		n += size > 8 ? ALIGN_UP(size, 8) : 8;
	}
	return n;
}

void out_init(struct out *o, FILE *f, const struct sema_info *info, const struct cg_layout *layout,
	      uint8_t *data)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->info = info;
	o->layout = layout;
	o->data = data;
	out_fmt_info = info; /* strftime() values name their format by id (values.c) */
	o->tails = xcalloc(layout->nthreads ? layout->nthreads : 1, sizeof(*o->tails));
	/* a record is copied out of its ring before it is read; beyond the
	 * record, zeros up to the most any record type reads (a record shorter
	 * than its type says prints zeros, never ubt's heap) */
	size_t most = sizeof(struct rt_ev_map) + sizeof(struct rt_ev_warn);
	o->ids = xcalloc(info->nprintfs ? info->nprintfs : 1, sizeof(*o->ids));
	for (int i = 0; i < info->nprintfs; i++) {
		const struct sema_printf *pf = info->printfs[i];
		const char *fn = pf->call && pf->call->str ? pf->call->str : "";
		o->ids[i].type = !strcmp(fn, "printf") ? RT_EV_PRINTF
				 : !strcmp(fn, "print") ? (pf->nargs ? RT_EV_VALUE : 0)
							: RT_EV_CALL;
		o->ids[i].need = payload_max(pf);
		if (o->ids[i].need > most)
			most = o->ids[i].need;
	}
	o->rec_size = (size_t)layout->ring_size + sizeof(struct rt_event_hdr) + most;
	o->rec = xcalloc(1, o->rec_size);
	out_stack_bind(data, layout);
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
	free(o->tails);
	free(o->rec);
	free(o->map_ops);
	free(o->ids);
	o->ids = NULL;
	o->tails = NULL;
	o->rec = NULL;
	o->map_ops = NULL;
}

/* An RT_EV_MAP record: the script has this operation on this map. */
static bool map_op_ok(const struct out *o, const struct rt_ev_map *mo)
{
	if (mo->map_id >= (uint32_t)o->layout->nmaps || mo->op < RT_MOP_PRINT ||
	    mo->op > RT_MOP_ZERO)
		return false;
	return !o->map_ops || (o->map_ops[mo->map_id] & (1u << mo->op));
}

/*
 * One record, copied out of its ring (len bytes, checked against the
 * ring; zeros follow it).  printf text goes to o->ob, map actions flush it
 * first.  A record of no type or id the script can send is reported and
 * skipped: nothing in it decides where ubt reads.
 */
static void print_event(struct out *o, uint8_t *rec, uint32_t len, uint32_t slot)
{
	const struct rt_event_hdr *h = (const struct rt_event_hdr *)rec;
	/* an id is good for the one record type its call sends */
	const struct sema_printf *pf = h->id < (uint32_t)o->info->nprintfs &&
						       o->ids[h->id].type == h->type
					       ? o->info->printfs[h->id]
					       : NULL;
	size_t need = sizeof(*h) + (h->type == RT_EV_MAP    ? sizeof(struct rt_ev_map)
				    : h->type == RT_EV_WARN ? sizeof(struct rt_ev_warn)
				    : pf                    ? o->ids[h->id].need
							    : 0);
	if (len < need) /* short: what the type reads beyond it is zero */
		memset(rec + len, 0, need - len);
	switch (h->type) {
	case RT_EV_MAP: {
		struct rt_ev_map mo;
		memcpy(&mo, rec + sizeof(*h), sizeof(mo));
		if (!map_op_ok(o, &mo))
			break;
		flush_buf(o);
		if (mo.op == RT_MOP_PRINT)
			out_print_map(o, &o->layout->maps[mo.map_id], mo.top, mo.div);
		else
			out_map_op(o, &o->layout->maps[mo.map_id], mo.op);
		return;
	}
	case RT_EV_WARN: /* -k, -kk (warn.c) */
		if (!o->layout->helper_checks)
			break;
		flush_buf(o);
		out_print_warn(o, rec);
		return;
	case RT_EV_VALUE:
	case RT_EV_CALL:
		if (!pf)
			break;
		flush_buf(o);
		out_event_call(o, h->type, h->id, rec + sizeof(*h), len - sizeof(*h));
		return;
	case RT_EV_PRINTF:
		if (!pf)
			break;
		if (o->json) {
			struct buf b = {0};
			out_format(&b, pf, rec + sizeof(*h));
			buf_printf(&o->ob, "{\"type\": \"printf\", \"data\": ");
			out_json_str(&o->ob, b.data ? b.data : "", b.len);
			buf_append(&o->ob, "}\n", 2);
			buf_free(&b);
		} else {
			out_format(&o->ob, pf, rec + sizeof(*h));
		}
		if (o->ob.len >= 65536)
			flush_buf(o);
		return;
	case RT_EV_EXIT:
		return;
	}
	out_bad("record", "ring of thread slot %u: a record of type %u, id %u, that no probe sends",
		slot, h->type, h->id);
}

/*
 * Ring i's records from ubt's own tail up to the head read once at the
 * start: at most ring_size bytes, so one drain is bounded whatever the
 * target writes.  The head is the producer's (shared memory); a head
 * behind the tail or more than a ring ahead, or a record that does not
 * fit where it sits, cannot come from the runtime: the pending bytes are
 * skipped (their events are lost, and said so once) and reading goes on
 * from the head, where the producer writes its next record.
 */
static int drain_ring(struct out *o, uint32_t i)
{
	const struct cg_layout *l = o->layout;
	struct rt_thread *t = (struct rt_thread *)(o->data + l->threads_off) + i;
	uint64_t head = __atomic_load_n(&t->ring_head, __ATOMIC_ACQUIRE);
	uint64_t tail = o->tails[i];
	uint8_t *ring = o->data + l->rings_off + (uint64_t)i * l->ring_size;
	int nev = 0;
	if (head - tail > l->ring_size) {
		out_bad("ring head",
			"ring of thread slot %u: head at byte %llu, %s the tail at %llu in a ring of "
			"%u bytes; its pending events are skipped",
			i, (unsigned long long)head, head < tail ? "behind" : "far ahead of",
			(unsigned long long)tail, l->ring_size);
		tail = head;
	}
	while (tail != head) {
		uint64_t pos = tail & (l->ring_size - 1);
		struct rt_event_hdr h;
		memcpy(&h, ring + pos, sizeof(h));
		if (h.len < sizeof(h) || (h.len & 7) || h.len > l->ring_size - pos ||
		    h.len > head - tail) {
			out_bad("ring record",
				"ring of thread slot %u: a record of %u bytes at byte %llu of %u, %llu "
				"bytes pending; the ring's pending events are skipped",
				i, h.len, (unsigned long long)pos, l->ring_size,
				(unsigned long long)(head - tail));
			tail = head;
			break;
		}
		if (h.type != RT_EV_PAD) {
			/* the producer may rewrite the record meanwhile: ubt reads its copy */
			memcpy(o->rec, ring + pos, h.len);
			memcpy(o->rec, &h, sizeof(h));
			print_event(o, o->rec, h.len, i);
			nev++;
		}
		tail += h.len;
	}
	o->tails[i] = tail;
	/* hand the space back only after formatting; a tail the target moved is put back */
	if (__atomic_load_n(&t->ring_tail, __ATOMIC_RELAXED) != tail)
		__atomic_store_n(&t->ring_tail, tail, __ATOMIC_RELEASE);
	return nev;
}

/*
 * Every ring in turn.  A thread's events stay in order; threads follow
 * one another.
 */
int out_drain(struct out *o)
{
	int nev = 0;
	for (uint32_t i = 0; i < o->layout->nthreads; i++)
		nev += drain_ring(o, i);
	flush_buf(o);
	if (nev)
		fflush(o->f);
	return nev;
}

/* Marks in ops the print/clear/zero calls under n. */
static void find_map_ops(const struct ast_node *n, uint8_t *ops, int nmaps)
{
	if (!n)
		return;
	if (n->kind == AST_CALL && n->nkids && n->kids[0] && n->kids[0]->map &&
	    n->kids[0]->map->id >= 0 && n->kids[0]->map->id < nmaps) {
		int op = !strcmp(n->str, "print") ? RT_MOP_PRINT
			 : !strcmp(n->str, "clear") ? RT_MOP_CLEAR
			 : !strcmp(n->str, "zero")  ? RT_MOP_ZERO
						    : 0;
		ops[n->kids[0]->map->id] |= (uint8_t)(op ? 1u << op : 0);
	}
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		find_map_ops(sub[i], ops, nmaps);
	for (int i = 0; i < n->nkids; i++)
		find_map_ops(n->kids[i], ops, nmaps);
}

/* A forged RT_EV_MAP record must not print a map the script never prints:
 * 32 bytes of ring would otherwise stand for a whole map of output. */
void out_map_ops_from(struct out *o, const struct ast_node *prog)
{
	free(o->map_ops);
	o->map_ops = xcalloc(o->layout->nmaps ? o->layout->nmaps : 1, 1);
	find_map_ops(prog, o->map_ops, o->layout->nmaps);
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
		uint64_t drops = __atomic_load_n(&h->drops, __ATOMIC_RELAXED);
		if (drops)
			fprintf(stderr,
				"WARNING: %llu update%s of %s dropped: the map was full (%u keys, "
				"BPFTRACE_MAP_KEYS_MAX) or busy\n",
				(unsigned long long)drops, drops == 1 ? "" : "s", ml->map->name,
				ml->hdr.cap);
	}
	out_stack_report_drops(); /* stack.c: stacks the stack table had no room for */
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

