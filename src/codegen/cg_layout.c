/*
 * cg_layout.c - where everything lives in the shared data part.
 *
 * Decided once per program from the maps sema found and the options, and
 * used by codegen (offsets become constants in probe code), by attach (it
 * writes the headers) and by output (it reads the values).  Drawn in
 * runtime/abi.h.
 */
#include "codegen.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define CG_PAGE 4096u
#define CG_STACK_TABLE_MAX (256ull << 20) /* bytes of the ustack table at most */

_Static_assert(sizeof(struct rt_shm_header) <= CG_PAGE, "the shared header must fit in a page");

static uint32_t pow2_at_least(uint64_t n)
{
	uint32_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

static void map_kind(const struct sema_map *m, struct rt_map *h)
{
	h->val_size = 8;
	switch (m->value.kind) {
	case TY_COUNT: h->kind = RT_MAP_COUNT; break;
	case TY_SUM: h->kind = RT_MAP_SUM; break;
	case TY_MIN: h->kind = RT_MAP_MIN; break;
	case TY_MAX: h->kind = RT_MAP_MAX; break;
	case TY_AVG:
		h->kind = RT_MAP_AVG;
		h->val_size = 16;
		break;
	case TY_STATS:
		h->kind = RT_MAP_STATS;
		h->val_size = 16;
		break;
	case TY_HIST:
		h->kind = RT_MAP_HIST;
		/* bucket 0 below 0, 2^k for 0..2^k-1, 2^k per power of 2 above:
		 * (64 - k) * 2^k + 1 (k = 0: RT_HIST_BUCKETS) */
		h->nbuckets = (uint32_t)((64 - m->hist_bits) << m->hist_bits) + 1;
		h->val_size = 8 * h->nbuckets;
		break;
	case TY_LHIST:
		h->kind = RT_MAP_LHIST;
		h->nbuckets = cg_lhist_buckets(m);
		h->val_size = 8 * h->nbuckets;
		break;
	case TY_STR:
	case TY_TUPLE: /* a buffer, printed by its type (output/values.c) */
	case TY_STRUCT: case TY_ARRAY:
	case TY_BUF: case TY_TSTAMP: case TY_INET: case TY_STRERROR: case TY_USERNAME:
	case TY_MACADDR: case TY_CGPATH:
		h->kind = RT_MAP_STR;
		h->val_size = ALIGN_UP((uint32_t)m->value.size, 8u);
		break;
	default:
		h->kind = RT_MAP_INT;
		break;
	}
}

/* lhist(v, min, max, step): below min, (max - min) / step steps, the rest */
uint32_t cg_lhist_buckets(const struct sema_map *m)
{
	int64_t step = m->lhist_step > 0 ? m->lhist_step : 1;
	return (uint32_t)((m->lhist_max - m->lhist_min) / step) + 2;
}

bool cg_map_percpu(const struct rt_map *h)
{
	return h->kind != RT_MAP_INT && h->kind != RT_MAP_STR;
}

/* Bytes of key k of map m in the key buffer: 8 for an integer, the string
 * or tuple size rounded up to 8 for a string or a tuple (zero-padded, so
 * keys compare as words). */
uint32_t cg_key_bytes(const struct ast_type *t)
{
	return t->kind == TY_STR || ast_type_is_blob(t->kind) ? ALIGN_UP((uint32_t)t->size, 8u) : 8;
}

static uint64_t layout_map(const struct sema_map *m, const struct cg_options *opt,
			   struct cg_map_layout *ml)
{
	struct rt_map *h = &ml->hdr;
	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	map_kind(m, h);
	h->key_size = 0;
	for (int k = 0; k < m->nkeys; k++)
		h->key_size += cg_key_bytes(&m->keys[k]);
	h->cap = !m->nkeys ? 1 : m->max_keys ? m->max_keys : opt->map_keys_max;
	h->nslots = m->nkeys ? pow2_at_least(2ull * h->cap) : 0;
	/* entries spread over rows * RT_MAP_SPREAD places (abi.h, rt_map_nth) */
	h->rows = m->nkeys && h->cap > RT_MAP_SPREAD ? (h->cap + RT_MAP_SPREAD - 1) / RT_MAP_SPREAD : 0;
	uint64_t places = h->rows ? (uint64_t)h->rows * RT_MAP_SPREAD : h->cap;
	uint64_t off = ALIGN_UP((uint64_t)sizeof(*h), 64);
	h->slots_off = off;
	off = ALIGN_UP(off + (uint64_t)h->nslots * 8, 64);
	h->keys_off = off;
	off = ALIGN_UP(off + places * h->key_size, 64);
	h->live_off = off;
	off = ALIGN_UP(off + places * 4, 64);
	h->vals_off = off;
	uint64_t one = ALIGN_UP(places * h->val_size, 64);
	if (cg_map_percpu(h)) {
		/* a small per-CPU array (a scalar hist: 520 bytes) gets a
		 * power-of-two stride, so probes scale the CPU number with a
		 * shift instead of a multiply (cg_percpu_op) */
		if (one <= 4096)
			one = pow2_at_least(one);
		h->cpu_stride = one;
		off += one * (opt->ncpu + 1);
	} else {
		off += one;
	}
	ml->map = m;
	ml->bytes = ALIGN_UP(off, 64);
	return ml->bytes;
}

void cg_layout(const struct sema_info *info, const struct cg_options *opt, struct cg_layout *out)
{
	memset(out, 0, sizeof(*out));
	out->ncpu = opt->ncpu;
	out->helper_checks = opt->helper_checks;
	out->nthreads = pow2_at_least(opt->nthreads);
	out->ring_size = pow2_at_least(opt->ring_size);
	uint64_t off = CG_PAGE; /* struct rt_shm_header */
	out->threads_off = off;
	off += (uint64_t)out->nthreads * sizeof(struct rt_thread);
	off = ALIGN_UP(off, (uint64_t)CG_PAGE);
	out->rings_off = off;
	off += (uint64_t)out->nthreads * out->ring_size;
	out->nmaps = info->nmaps;
	out->maps = xcalloc(info->nmaps ? info->nmaps : 1, sizeof(*out->maps));
	for (int i = 0; i < info->nmaps; i++) {
		off = ALIGN_UP(off, (uint64_t)CG_PAGE);
		out->maps[i].off = off;
		off += layout_map(info->maps[i], opt, &out->maps[i]);
	}
	if (info->stack_frames) {
		/* ustack: the stack table (runtime/mem/rt_stack.c), one entry per distinct stack */
		struct rt_stack_table *t = &out->stacks;
		t->size = sizeof(*t);
		t->max_frames = (uint32_t)info->stack_frames;
		t->copy_size = RT_STACK_COPY;
		t->entry_size = ALIGN_UP(sizeof(struct rt_stack_entry) + 8ull * t->max_frames +
						 t->copy_size, 64);
		/*
		 * Room for twice BPFTRACE_MAP_KEYS_MAX stacks (a map keyed by
		 * ustack holds that many keys; open addressing wants slack), in
		 * at most CG_STACK_TABLE_MAX bytes of address space: the memfd is
		 * sparse, an entry's pages exist once a stack is recorded there.
		 * A full table drops stacks and ubt says so at exit.
		 */
		uint64_t want = 2ull * (opt->map_keys_max ? opt->map_keys_max : 1);
		t->cap = pow2_at_least(want < (1u << 30) ? want : (1u << 30));
		while (t->cap > 1024 && (uint64_t)t->cap * t->entry_size > CG_STACK_TABLE_MAX)
			t->cap >>= 1;
		t->entries_off = 64;
		off = ALIGN_UP(off, (uint64_t)CG_PAGE);
		out->stacks_off = off;
		off += t->entries_off + (uint64_t)t->cap * t->entry_size;
	}
	out->data_size = ALIGN_UP(off, (uint64_t)CG_PAGE);
}

void cg_layout_free(struct cg_layout *l)
{
	free(l->maps);
	memset(l, 0, sizeof(*l));
}
