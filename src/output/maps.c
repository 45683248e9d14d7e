/*
 * maps.c - printing maps as bpftrace 0.17 does, in text and JSON, and the
 * map operations ubt performs itself (clear, zero).
 *
 * Pipeline position: output, reading the data part through ubt's mapping
 * with the layout cg_layout() chose.  Per-CPU values are summed (or, for
 * min/max, combined) here.  Entries whose live flag is clear were deleted
 * and are skipped.
 *
 * The layout of a map (kind, sizes, capacity, offsets) is ubt's own copy
 * (cg_map_layout.hdr); from the shared header only `used`, `written` and
 * `drops` are read, and `used` is bounded by the capacity (trust.c).
 * Keys are copied out before they are sorted, so a target rewriting them
 * meanwhile cannot make the comparison inconsistent under qsort.
 *
 * Order inside a map, as bpftrace: count/sum/int/min/max by value
 * ascending (signed), avg/stats by average, hist/lhist by total count,
 * strings by key; ties by key (bpftrace leaves them unordered).
 *
 *   @m[k1, k2]: 5          @h[read]:                 @s: count 2, average 3, total 6
 *                          [4, 8)    2 |@@@@@...|
 */
#include "output.h"
#include "stack.h"
#include "sym.h"
#include "output_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	const uint8_t *key;
	int64_t v;        /* the value, or the sort value (average, total count) */
	int64_t count;    /* avg, stats */
	int64_t total;    /* avg, stats */
	uint64_t *bkt;    /* hist, lhist: summed buckets (malloc'ed) */
	const char *s;    /* string value */
	uint8_t *own_key; /* ustack keys: a copy with canonical ids (merge_stacks) */
};

/* The map's header in shared memory: only its counters are read from there. */
static const struct rt_map *map_shm(const struct out *o, const struct cg_map_layout *ml)
{
	return (const struct rt_map *)(o->data + ml->off);
}

/* Entry idx's value on CPU cpu (idx < the map's places, cpu <= ncpu). */
static const uint8_t *val_ptr(const struct out *o, const struct cg_map_layout *ml, uint32_t idx,
			      uint32_t cpu)
{
	const struct rt_map *h = &ml->hdr;
	return o->data + ml->off + h->vals_off + cpu * h->cpu_stride + (uint64_t)idx * h->val_size;
}

/* Entries allocated, as the target says, at most the capacity. */
static uint32_t map_used(const struct out *o, const struct cg_map_layout *ml)
{
	uint32_t used = __atomic_load_n(&map_shm(o, ml)->used, __ATOMIC_ACQUIRE);
	if (used > ml->hdr.cap) {
		out_bad("map used", "%s: %u entries used of %u; the first %u are read",
			ml->map->name, used, ml->hdr.cap, ml->hdr.cap);
		used = ml->hdr.cap;
	}
	return used;
}

static int64_t ld64(const uint8_t *p)
{
	int64_t v;
	memcpy(&v, p, 8);
	return v;
}

/*
 * Sums and quotients of values as the target wrote them: they wrap instead
 * of overflowing (C's signed overflow is undefined, and INT64_MIN / -1
 * traps), so a value the target corrupted is a wrong number, never a crash.
 */
static int64_t add_s(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t div_s(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}

/* Reads entry idx's value, combining the per-CPU copies. */
static void read_entry(const struct out *o, const struct cg_map_layout *ml, uint32_t idx,
		       struct entry *e)
{
	const struct rt_map *h = &ml->hdr;
	uint32_t copies = cg_map_percpu(h) ? o->layout->ncpu + 1 : 1;
	switch (h->kind) {
	case RT_MAP_STR:
		e->s = (const char *)val_ptr(o, ml, idx, 0);
		break;
	case RT_MAP_INT:
		e->v = ld64(val_ptr(o, ml, idx, 0));
		break;
	case RT_MAP_MIN:
	case RT_MAP_MAX: {
		uint64_t best = 0;
		for (uint32_t c = 0; c < copies; c++) {
			uint64_t x = (uint64_t)ld64(val_ptr(o, ml, idx, c));
			if (x > best)
				best = x;
		}
		/* no copy holds a value (0 is "none": zero() just cleared them):
		 * 0, as bpftrace prints a zeroed min or max */
		e->v = best ? (int64_t)(best ^ (h->kind == RT_MAP_MIN ? (uint64_t)INT64_MAX : 1ull << 63))
			    : 0;
		break;
	}
	case RT_MAP_AVG:
	case RT_MAP_STATS:
		for (uint32_t c = 0; c < copies; c++) {
			e->count = add_s(e->count, ld64(val_ptr(o, ml, idx, c)));
			e->total = add_s(e->total, ld64(val_ptr(o, ml, idx, c) + 8));
		}
		e->v = div_s(e->total, e->count);
		break;
	case RT_MAP_HIST:
	case RT_MAP_LHIST:
		e->bkt = xcalloc(h->nbuckets, sizeof(uint64_t));
		for (uint32_t c = 0; c < copies; c++)
			for (uint32_t b = 0; b < h->nbuckets; b++)
				e->bkt[b] += (uint64_t)ld64(val_ptr(o, ml, idx, c) + 8 * b);
		for (uint32_t b = 0; b < h->nbuckets; b++)
			e->v = add_s(e->v, (int64_t)e->bkt[b]);
		break;
	default: /* count, sum */
		for (uint32_t c = 0; c < copies; c++)
			e->v = add_s(e->v, ld64(val_ptr(o, ml, idx, c)));
		break;
	}
}

/* ---- ordering ----------------------------------------------------------- */

static const struct sema_map *cmp_map;

static bool value_signed(const struct sema_map *m)
{
	switch (m->value.kind) {
	case TY_COUNT:
	case TY_HIST:
	case TY_LHIST:
		return false;
	case TY_SUM:
	case TY_INT:
		return m->value.is_signed;
	default:
		return true;
	}
}

static int key_cmp(const struct entry *a, const struct entry *b)
{
	const uint8_t *x = a->key, *y = b->key;
	for (int k = 0; k < cmp_map->nkeys; k++) {
		const struct ast_type *t = &cmp_map->keys[k];
		uint32_t kb = cg_key_bytes(t);
		int r;
		if (t->kind == TY_STR) {
			r = strncmp((const char *)x, (const char *)y, kb);
		} else if (ast_type_is_blob(t->kind)) {
			r = memcmp(x, y, kb);
		} else {
			uint64_t p, q;
			memcpy(&p, x, 8);
			memcpy(&q, y, 8);
			r = p < q ? -1 : p > q;
		}
		if (r)
			return r;
		x += kb;
		y += kb;
	}
	return 0;
}

/* by value, signed or unsigned as the map's value type (count is unsigned) */
static int entry_cmp_val(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if (a->v != b->v) {
		if (value_signed(cmp_map))
			return a->v < b->v ? -1 : 1;
		return (uint64_t)a->v < (uint64_t)b->v ? -1 : 1;
	}
	return key_cmp(a, b);
}

static int entry_cmp_key(const void *pa, const void *pb)
{
	return key_cmp(pa, pb);
}

/* bpftrace sorts numbers and aggregations by value, everything else
 * (strings, records, pointers, usym) by key. */
static bool by_value(const struct sema_map *m)
{
	switch (m->value.kind) {
	case TY_COUNT: case TY_SUM: case TY_INT: case TY_MIN: case TY_MAX: case TY_AVG:
	case TY_STATS: case TY_HIST: case TY_LHIST:
		return true;
	default:
		return false;
	}
}

/* A usym() value: the symbol, or the address in hex (bpftrace 0.17). */
static void usym_value(struct buf *b, const struct entry *e, bool json)
{
	char *s = out_sym_text((uint64_t)e->v, false);
	if (json)
		out_json_str(b, s, strlen(s));
	else
		buf_printf(b, "%s", s);
	free(s);
}

/*
 * ustack keys (issue 7): a stack recorded through code without frame
 * pointers can have several ids that unwind to the same frames
 * (output/stack.c); such entries become one, their values combined.
 */
static void merge_stacks(const struct cg_map_layout *ml, const struct rt_map *h,
			 struct entry *es, uint32_t *n)
{
	const struct sema_map *m = ml->map;
	bool any = false;
	for (int k = 0; k < m->nkeys; k++)
		any |= m->keys[k].kind == TY_USTACK;
	if (!any)
		return;
	for (uint32_t i = 0; i < *n; i++) {
		uint8_t *key = es[i].own_key; /* collect()'s copy */
		for (int k = 0; k < m->nkeys; k++) {
			if (m->keys[k].kind == TY_USTACK) {
				uint64_t id;
				memcpy(&id, key, 8);
				id = out_stack_canon(id, &m->keys[k]);
				memcpy(key, &id, 8);
			}
			key += cg_key_bytes(&m->keys[k]);
		}
	}
	uint32_t out = 0;
	for (uint32_t i = 0; i < *n; i++) {
		uint32_t j = 0;
		while (j < out && memcmp(es[j].key, es[i].key, h->key_size))
			j++;
		if (j == out) {
			es[out++] = es[i];
			continue;
		}
		struct entry *d = &es[j], *s = &es[i];
		switch (h->kind) {
		case RT_MAP_MIN:
			d->v = s->v < d->v ? s->v : d->v;
			break;
		case RT_MAP_MAX:
		case RT_MAP_INT:
		case RT_MAP_STR:
			d->v = s->v > d->v ? s->v : d->v;
			break;
		case RT_MAP_AVG:
		case RT_MAP_STATS:
			d->count = add_s(d->count, s->count);
			d->total = add_s(d->total, s->total);
			d->v = div_s(d->total, d->count);
			break;
		case RT_MAP_HIST:
		case RT_MAP_LHIST:
			for (uint32_t b = 0; b < h->nbuckets; b++)
				d->bkt[b] += s->bkt[b];
			d->v = add_s(d->v, s->v);
			break;
		default:
			d->v = add_s(d->v, s->v);
			break;
		}
		free(s->bkt), free(s->own_key);
	}
	*n = out;
}

/* Live entries of a keyed map, in bpftrace's order; keys copied out. */
static struct entry *collect(const struct out *o, const struct cg_map_layout *ml, uint32_t *n)
{
	const struct rt_map *h = &ml->hdr;
	uint32_t used = map_used(o, ml);
	const uint32_t *live = (const uint32_t *)(o->data + ml->off + h->live_off);
	struct entry *es = xcalloc(used ? used : 1, sizeof(*es));
	uint32_t k = 0;
	for (uint32_t n = 0; n < used; n++) {
		uint32_t i = rt_map_nth(h->rows, n);
		if (!__atomic_load_n(&live[i], __ATOMIC_ACQUIRE))
			continue;
		es[k].own_key = xmalloc(h->key_size ? h->key_size : 1);
		memcpy(es[k].own_key, o->data + ml->off + h->keys_off + (uint64_t)i * h->key_size,
		       h->key_size);
		es[k].key = es[k].own_key;
		read_entry(o, ml, i, &es[k]);
		k++;
	}
	cmp_map = ml->map;
	merge_stacks(ml, h, es, &k);
	qsort(es, k, sizeof(*es), by_value(ml->map) ? entry_cmp_val : entry_cmp_key);
	*n = k;
	return es;
}

static void free_entries(struct entry *es, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(es[i].bkt), free(es[i].own_key);
	free(es);
}

/* ---- text --------------------------------------------------------------- */

static void key_text(struct buf *b, const struct sema_map *m, const uint8_t *key, bool json)
{
	for (int k = 0; k < m->nkeys; k++) {
		const struct ast_type *t = &m->keys[k];
		if (k)
			buf_append(b, json ? "," : ", ", json ? 1 : 2);
		if (t->kind == TY_STR) {
			buf_printf(b, "%.*s", (int)cg_key_bytes(t), (const char *)key);
		} else if (ast_type_is_blob(t->kind)) {
			out_key_text(b, t, key);
		} else if (t->kind == TY_USTACK) { /* ustack: frames by stack.c */
			uint64_t id;
			memcpy(&id, key, 8);
			char *s = out_stack_text(id, t, 4);
			buf_printf(b, "%s", s);
			free(s);
		} else if (t->kind == TY_USYM) { /* usym(), func: named by sym.c */
			uint64_t addr;
			memcpy(&addr, key, 8);
			char *name = out_sym_text(addr, false);
			buf_printf(b, "%s", name);
			free(name);
		} else if (t->kind == TY_PTR) { /* bpftrace: hex, also in JSON */
			uint64_t addr;
			memcpy(&addr, key, 8);
			buf_printf(b, "0x%" PRIx64, addr);
		} else {
			/* bpftrace prints 8-byte integer keys as int64, whatever their sign */
			int64_t v;
			memcpy(&v, key, 8);
			if (t->kind == TY_INT && t->is_bool)
				buf_printf(b, "%s", (v & 0xff) ? "true" : "false");
			else
				buf_printf(b, "%" PRId64, v);
		}
		key += cg_key_bytes(t);
	}
}

/* bpftrace's hist labels: 1, 2, ... 512, 1K, ... 512K, 1M, ..., 1T, 1P, 1E */
static void pow2_label(struct buf *b, int power)
{
	static const char suffix[] = " KMGTPE";
	int s = power / 10;
	buf_printf(b, "%llu", 1ull << (power - 10 * s));
	if (s)
		buf_printf(b, "%c", suffix[s]);
}

static void lin_label(struct buf *b, int64_t v)
{
	if (v != 0 && v % 1048576 == 0)
		buf_printf(b, "%" PRId64 "M", v / 1048576);
	else if (v != 0 && v % 1024 == 0)
		buf_printf(b, "%" PRId64 "K", v / 1024);
	else
		buf_printf(b, "%" PRId64, v);
}

/*
 * hist(v, k)'s bucket i from its value: the 2^k buckets of one power of 2
 * (i >> k) each hold 2^(power - 1) values, starting at 2^(power - 1) * 2^k;
 * the low k bits of i say which of them.  Suffixes as pow2_label's.
 */
static void bits_label(struct buf *b, uint32_t i, int k)
{
	static const char suffix[] = " KMGTPE";
	uint32_t n = 1u << k, power = (i >> k) - 1, s = power / 10;
	buf_printf(b, "%llu", (1ull << (power - 10 * s)) * (n + (i & (n - 1))));
	if (s)
		buf_printf(b, "%c", suffix[s]);
}

static void bucket_label(struct buf *b, const struct rt_map *h, const struct sema_map *m,
			 uint32_t i)
{
	if (h->kind == RT_MAP_HIST && m->hist_bits) {
		if (i == 0)
			buf_printf(b, "(..., 0)");
		else if (i <= 2u << m->hist_bits)
			buf_printf(b, "[%u]", i - 1);
		else {
			buf_printf(b, "[");
			bits_label(b, i - 1, m->hist_bits);
			buf_printf(b, ", ");
			bits_label(b, i, m->hist_bits);
			buf_printf(b, ")");
		}
		return;
	}
	if (h->kind == RT_MAP_HIST) {
		if (i == 0)
			buf_printf(b, "(..., 0)");
		else if (i == 1)
			buf_printf(b, "[0]");
		else if (i == 2)
			buf_printf(b, "[1]");
		else {
			buf_printf(b, "[");
			pow2_label(b, (int)i - 2);
			buf_printf(b, ", ");
			pow2_label(b, (int)i - 1);
			buf_printf(b, ")");
		}
		return;
	}
	if (i == 0) {
		buf_printf(b, "(..., ");
		lin_label(b, m->lhist_min);
		buf_printf(b, ")");
	} else if (i == h->nbuckets - 1) {
		buf_printf(b, "[");
		lin_label(b, m->lhist_max);
		buf_printf(b, ", ...)");
	} else {
		buf_printf(b, "[");
		lin_label(b, m->lhist_min + (int64_t)(i - 1) * m->lhist_step);
		buf_printf(b, ", ");
		lin_label(b, m->lhist_min + (int64_t)i * m->lhist_step);
		buf_printf(b, ")");
	}
}

/* The rows from the first to the last non-zero bucket; *lo > *hi if none. */
static void bucket_range(const struct rt_map *h, const uint64_t *bkt, uint32_t *lo, uint32_t *hi)
{
	*lo = 1;
	*hi = 0;
	for (uint32_t i = 0; i < h->nbuckets; i++)
		if (bkt[i]) {
			if (*lo > *hi)
				*lo = i;
			*hi = i;
		}
}

static void hist_text(struct buf *b, const struct rt_map *h, const struct sema_map *m,
		      const uint64_t *bkt, uint64_t div)
{
	uint32_t lo, hi;
	uint64_t max = 0;
	bucket_range(h, bkt, &lo, &hi);
	for (uint32_t i = lo; i <= hi && i < h->nbuckets; i++)
		if (bkt[i] > max)
			max = bkt[i];
	for (uint32_t i = lo; i <= hi && i < h->nbuckets; i++) {
		struct buf l = {0};
		bucket_label(&l, h, m, i);
		int bar = max ? (int)((double)bkt[i] / (double)max * 52) : 0;
		buf_printf(b, "%-16s%8" PRIu64 " |", l.data ? l.data : "", bkt[i] / (div ? div : 1));
		for (int k = 0; k < 52; k++)
			buf_append(b, k < bar ? "@" : " ", 1);
		buf_append(b, "|\n", 2);
		buf_free(&l);
	}
}

static void value_text(struct buf *b, const struct rt_map *h, const struct sema_map *m,
		       const struct entry *e, uint64_t div)
{
	int64_t d = div ? (int64_t)div : 1;
	if (m->value.kind == TY_USYM) {
		usym_value(b, e, false);
		buf_append(b, "\n", 1);
		return;
	}
	if (m->value.kind == TY_USTACK) { /* `@y = ustack`: its frames, as bpftrace 0.17 */
		char *st = out_stack_text((uint64_t)e->v, &m->value, 8);
		buf_printf(b, "%s\n", st);
		free(st);
		return;
	}
	switch (h->kind) {
	case RT_MAP_STR:
		if (ast_type_is_blob(m->value.kind))
			out_value_text(b, &m->value, (const uint8_t *)e->s, false);
		else
			buf_printf(b, "%.*s", (int)h->val_size, e->s);
		buf_append(b, "\n", 1);
		break;
	case RT_MAP_COUNT:
		buf_printf(b, "%" PRIu64 "\n", (uint64_t)e->v / (uint64_t)d);
		break;
	case RT_MAP_STATS:
		buf_printf(b, "count %" PRId64 ", average %" PRId64 ", total %" PRId64 "\n",
			   div_s(e->count, d), div_s(e->v, d), div_s(e->total, d));
		break;
	case RT_MAP_HIST:
	case RT_MAP_LHIST:
		buf_append(b, "\n", 1);
		hist_text(b, h, m, e->bkt, div);
		break;
	default:
		if (m->value.kind == TY_INT && m->value.is_bool)
			buf_printf(b, "%s\n", (e->v & 0xff) ? "true" : "false");
		else if (value_signed(m))
			buf_printf(b, "%" PRId64 "\n", div_s(e->v, d));
		else
			buf_printf(b, "%" PRIu64 "\n", (uint64_t)e->v / (uint64_t)d);
		break;
	}
}

/* bpftrace ends avg and stats maps with a blank line, even empty ones
 * (and every hist element, see map_text). */
static bool blank_after_map(const struct rt_map *h)
{
	return h->kind == RT_MAP_AVG || h->kind == RT_MAP_STATS;
}

static void map_text(struct out *o, struct buf *b, const struct cg_map_layout *ml, uint64_t top,
		     uint64_t div)
{
	const struct sema_map *m = ml->map;
	const struct rt_map *h = &ml->hdr;
	bool hist = h->kind == RT_MAP_HIST || h->kind == RT_MAP_LHIST;
	if (m->nkeys == 0) {
		struct entry e = {0};
		if (h->kind != RT_MAP_COUNT && !map_shm(o, ml)->written) {
			buf_append(b, blank_after_map(h) ? "\n\n" : "\n", blank_after_map(h) ? 2 : 1);
			return;
		}
		read_entry(o, ml, 0, &e);
		buf_printf(b, "%s: ", m->name);
		value_text(b, h, m, &e, div);
		if (hist || blank_after_map(h))
			buf_append(b, "\n", 1);
		free(e.bkt);
		return;
	}
	uint32_t n;
	struct entry *es = collect(o, ml, &n);
	uint32_t first = top && top < n ? n - (uint32_t)top : 0;
	for (uint32_t i = first; i < n; i++) {
		buf_printf(b, "%s[", m->name);
		key_text(b, m, es[i].key, false);
		buf_printf(b, "]: ");
		value_text(b, h, m, &es[i], div);
		if (hist)
			buf_append(b, "\n", 1);
	}
	if (n == 0)
		buf_append(b, "\n", 1);
	if (blank_after_map(h))
		buf_append(b, "\n", 1);
	free_entries(es, n);
}

/* ---- JSON --------------------------------------------------------------- */

void out_json_str(struct buf *b, const char *s, size_t max)
{
	buf_append(b, "\"", 1);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			buf_printf(b, "\\%c", ch);
		else if (ch == '\n')
			buf_printf(b, "\\n");
		else if (ch == '\t')
			buf_printf(b, "\\t");
		else if (ch == '\r')
			buf_printf(b, "\\r");
		else if (ch < 0x20)
			buf_printf(b, "\\u%04x", ch);
		else
			buf_append(b, (const char *)&ch, 1);
	}
	buf_append(b, "\"", 1);
}

static void hist_json(struct buf *b, const struct rt_map *h, const struct sema_map *m,
		      const uint64_t *bkt, uint64_t div)
{
	uint32_t lo, hi;
	bucket_range(h, bkt, &lo, &hi);
	uint64_t d = div ? div : 1;
	buf_append(b, "[", 1);
	for (uint32_t i = lo; i <= hi && i < h->nbuckets; i++) {
		if (i > lo)
			buf_append(b, ", ", 2);
		buf_append(b, "{", 1);
		if (h->kind == RT_MAP_HIST) {
			if (i == 0)
				buf_printf(b, "\"max\": -1, ");
			else if (i == 1)
				buf_printf(b, "\"min\": 0, \"max\": 0, ");
			else
				buf_printf(b, "\"min\": %llu, \"max\": %llu, ", 1ull << (i - 2),
					   (i - 1 < 64 ? 1ull << (i - 1) : 0) - 1);
		} else {
			int64_t a = m->lhist_min + (int64_t)(i - 1) * m->lhist_step;
			if (i == 0)
				buf_printf(b, "\"max\": %" PRId64 ", ", m->lhist_min - 1);
			else if (i == h->nbuckets - 1)
				buf_printf(b, "\"min\": %" PRId64 ", ", m->lhist_max);
			else
				buf_printf(b, "\"min\": %" PRId64 ", \"max\": %" PRId64 ", ", a,
					   a + m->lhist_step - 1);
		}
		buf_printf(b, "\"count\": %" PRIu64 "}", bkt[i] / d);
	}
	buf_append(b, "]", 1);
}

static void value_json(struct buf *b, const struct rt_map *h, const struct sema_map *m,
		       const struct entry *e, uint64_t div)
{
	int64_t d = div ? (int64_t)div : 1;
	if (m->value.kind == TY_USYM) {
		usym_value(b, e, true);
		return;
	}
	switch (h->kind) {
	case RT_MAP_STR:
		if (ast_type_is_blob(m->value.kind))
			out_value_text(b, &m->value, (const uint8_t *)e->s, true);
		else
			out_json_str(b, e->s, h->val_size);
		break;
	case RT_MAP_COUNT:
		buf_printf(b, "%" PRIu64, (uint64_t)e->v / (uint64_t)d);
		break;
	case RT_MAP_STATS:
		buf_printf(b, "{\"count\": %" PRId64 ", \"average\": %" PRId64 ", \"total\": %" PRId64 "}",
			   div_s(e->count, d), div_s(e->v, d), div_s(e->total, d));
		break;
	case RT_MAP_HIST:
	case RT_MAP_LHIST:
		hist_json(b, h, m, e->bkt, div);
		break;
	default:
		if (value_signed(m))
			buf_printf(b, "%" PRId64, div_s(e->v, d));
		else
			buf_printf(b, "%" PRIu64, (uint64_t)e->v / (uint64_t)d);
		break;
	}
}

static const char *json_type(const struct rt_map *h)
{
	switch (h->kind) {
	case RT_MAP_HIST:
	case RT_MAP_LHIST:
		return "hist";
	case RT_MAP_AVG:
	case RT_MAP_STATS:
		return "stats";
	default:
		return "map";
	}
}

static void map_json(struct out *o, struct buf *b, const struct cg_map_layout *ml, uint64_t top,
		     uint64_t div)
{
	const struct sema_map *m = ml->map;
	const struct rt_map *h = &ml->hdr;
	/* where the text format prints an empty line, JSON prints nothing */
	if (m->nkeys == 0 && h->kind != RT_MAP_COUNT && !map_shm(o, ml)->written)
		return;
	uint32_t n = 0;
	struct entry *es = m->nkeys ? collect(o, ml, &n) : NULL;
	if (m->nkeys && n == 0) {
		free_entries(es, n);
		return;
	}
	buf_printf(b, "{\"type\": \"%s\", \"data\": {", json_type(h));
	out_json_str(b, m->name, strlen(m->name));
	buf_append(b, ": ", 2);
	if (m->nkeys == 0) {
		struct entry e = {0};
		read_entry(o, ml, 0, &e);
		value_json(b, h, m, &e, div);
		free(e.bkt);
	} else {
		uint32_t first = top && top < n ? n - (uint32_t)top : 0;
		buf_append(b, "{", 1);
		for (uint32_t i = first; i < n; i++) {
			struct buf k = {0};
			if (i > first)
				buf_append(b, ", ", 2);
			key_text(&k, m, es[i].key, true);
			out_json_str(b, k.data ? k.data : "", k.len);
			buf_append(b, ": ", 2);
			value_json(b, h, m, &es[i], div);
			buf_free(&k);
		}
		buf_append(b, "}", 1);
		free_entries(es, n);
	}
	buf_append(b, "}}\n", 3);
}

/* ---- entry points ------------------------------------------------------- */

void out_print_map(struct out *o, const struct cg_map_layout *ml, uint64_t top, uint64_t div)
{
	struct buf b = {0};
	if (o->json)
		map_json(o, &b, ml, top, div);
	else
		map_text(o, &b, ml, top, div);
	if (b.len)
		fwrite(b.data, 1, b.len, o->f);
	buf_free(&b);
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
		out_print_map(o, order[i], 0, 0);
	free(order);
	fflush(o->f);
}

/* clear(@m): every key deleted; zero(@m): every value zeroed.  Done by ubt
 * while probes may run: an update racing with it may survive it, as in
 * bpftrace, whose clear() is asynchronous too. */
void out_map_op(struct out *o, const struct cg_map_layout *ml, uint32_t op)
{
	const struct rt_map *h = &ml->hdr;
	uint32_t used = h->key_size ? map_used(o, ml) : 1;
	uint32_t copies = cg_map_percpu(h) ? o->layout->ncpu + 1 : 1;
	uint32_t *live = (uint32_t *)(o->data + ml->off + h->live_off);
	for (uint32_t n = 0; n < used; n++) {
		uint32_t i = rt_map_nth(h->rows, n);
		if (op == RT_MOP_CLEAR && h->key_size) {
			__atomic_store_n(&live[i], 0, __ATOMIC_RELEASE);
			continue;
		}
		for (uint32_t c = 0; c < copies; c++)
			memset((uint8_t *)val_ptr(o, ml, i, c), 0, h->val_size);
	}
	if (op == RT_MOP_CLEAR && !h->key_size)
		((struct rt_map *)(o->data + ml->off))->written = 0;
}
