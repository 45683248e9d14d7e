/*
 * output.c - draining the event rings and printing maps (see output.h).
 *
 * Events: every thread has its own ring, so a thread's events are in order;
 * one drain collects what every ring holds, sorts it by timestamp (stable,
 * so equal stamps keep ring order) and prints it, which interleaves threads
 * the way they happened.
 *
 * Maps print in name order.  Inside a map, entries are ordered as bpftrace
 * orders them: integer values ascending (signed), strings by key; ties by
 * key so the output is stable.
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
	if (h->type != RT_EV_PRINTF)
		return;
	uint32_t id;
	memcpy(&id, rec + sizeof(*h), 4);
	if (id >= (uint32_t)o->info->nprintfs)
		return;
	struct buf b = {0};
	out_format(&b, o->info->printfs[id], rec + sizeof(*h) + 8);
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
		fprintf(o->f, "Lost %llu events\n", (unsigned long long)(lost - o->lost_reported));
		o->lost_reported = lost;
	}
}

/* ---- maps ------------------------------------------------------------- */

struct entry {
	const uint64_t *key;
	int64_t ival;
	const char *sval;
};

static int nkeys_cmp;
static const struct sema_map *cmp_map;

static int key_cmp(const struct entry *a, const struct entry *b)
{
	for (int k = 0; k < nkeys_cmp; k++) {
		bool sgn = cmp_map->keys[k].is_signed;
		uint64_t x = a->key[k], y = b->key[k];
		if (x == y)
			continue;
		if (sgn)
			return (int64_t)x < (int64_t)y ? -1 : 1;
		return x < y ? -1 : 1;
	}
	return 0;
}

static int entry_cmp_int(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if (a->ival != b->ival)
		return a->ival < b->ival ? -1 : 1;
	return key_cmp(a, b);
}

static int entry_cmp_key(const void *pa, const void *pb)
{
	return key_cmp(pa, pb);
}

static int64_t read_int(const struct cg_layout *l, const struct rt_map *h, const uint8_t *vals,
			uint32_t idx)
{
	if (!cg_map_percpu(h)) {
		int64_t v;
		memcpy(&v, vals + (uint64_t)idx * h->val_size, 8);
		return v;
	}
	int64_t sum = 0;
	for (uint32_t cpu = 0; cpu <= l->ncpu; cpu++) {
		int64_t v;
		memcpy(&v, vals + cpu * h->cpu_stride + (uint64_t)idx * h->val_size, 8);
		sum += v;
	}
	return sum;
}

static void print_key(FILE *f, const struct sema_map *m, const uint64_t *key)
{
	fputc('[', f);
	for (int k = 0; k < m->nkeys; k++) {
		if (k)
			fputs(", ", f);
		if (m->keys[k].kind == TY_USYM) { /* usym(), func (issue 7, sym.c) */
			char *s = out_sym_text(key[k], false);
			fputs(s, f);
			free(s);
		} else if (m->keys[k].is_signed)
			fprintf(f, "%lld", (long long)key[k]);
		else
			fprintf(f, "%llu", (unsigned long long)key[k]);
	}
	fputc(']', f);
}

static void print_value(FILE *f, const struct rt_map *h, const struct entry *e)
{
	if (h->kind == RT_MAP_STR)
		fprintf(f, "%.*s\n", (int)h->val_size, e->sval);
	else if (h->kind == RT_MAP_COUNT)
		fprintf(f, "%llu\n", (unsigned long long)e->ival);
	else
		fprintf(f, "%lld\n", (long long)e->ival);
}

static void print_map(struct out *o, const struct cg_map_layout *ml)
{
	const struct sema_map *m = ml->map;
	const struct rt_map *h = (const struct rt_map *)(o->data + ml->off);
	const uint8_t *base = o->data + ml->off;
	const uint8_t *vals = base + h->vals_off;
	FILE *f = o->f;

	if (m->nkeys == 0) {
		if (h->kind != RT_MAP_COUNT && !h->written) {
			fputc('\n', f);
			return;
		}
		struct entry e = {.ival = read_int(o->layout, h, vals, 0), .sval = (const char *)vals};
		fprintf(f, "%s: ", m->name);
		print_value(f, h, &e);
		return;
	}
	uint32_t used = __atomic_load_n(&h->used, __ATOMIC_ACQUIRE);
	if (used > h->cap)
		used = h->cap;
	struct entry *es = xcalloc(used ? used : 1, sizeof(*es));
	for (uint32_t i = 0; i < used; i++) {
		es[i].key = (const uint64_t *)(base + h->keys_off + (uint64_t)i * h->key_size);
		if (h->kind == RT_MAP_STR)
			es[i].sval = (const char *)vals + (uint64_t)i * h->val_size;
		else
			es[i].ival = read_int(o->layout, h, vals, i);
	}
	nkeys_cmp = m->nkeys;
	cmp_map = m;
	qsort(es, used, sizeof(*es), h->kind == RT_MAP_STR ? entry_cmp_key : entry_cmp_int);
	for (uint32_t i = 0; i < used; i++) {
		fputs(m->name, f);
		print_key(f, m, es[i].key);
		fputs(": ", f);
		print_value(f, h, &es[i]);
	}
	/* bpftrace ends a map of non-integer values with a blank line */
	if (h->kind == RT_MAP_STR)
		fputc('\n', f);
	free(es);
}


static int map_name_cmp(const void *a, const void *b)
{
	const struct cg_map_layout *x = *(const struct cg_map_layout *const *)a;
	const struct cg_map_layout *y = *(const struct cg_map_layout *const *)b;
	return strcmp(x->map->name, y->map->name);
}

void out_print_maps(struct out *o)
{
	int n = o->layout->nmaps;
	const struct cg_map_layout **order = xcalloc(n ? n : 1, sizeof(*order));
	for (int i = 0; i < n; i++)
		order[i] = &o->layout->maps[i];
	qsort(order, n, sizeof(*order), map_name_cmp);
	for (int i = 0; i < n; i++)
		print_map(o, order[i]);
	free(order);
	fflush(o->f);
}
