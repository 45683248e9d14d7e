/*
 * scribble.c - a hostile e2e target: it writes into ubt's shared memory
 * (its own `memfd:ubt` mapping) while ubt traces it, to check that ubt
 * treats everything it reads back from there as untrusted input
 * (docs/safety.md, "A hostile target"; tests/e2e/hostile.test and the
 * fuzzer tests/fuzz/shm_fuzz.py).
 *
 *   prog_scribble MODE SEED ROUNDS
 *
 * Two worker threads call f() (tests/progs/f.c) through three different
 * callers (so that ustack keys differ) until main is done, with a short
 * sleep every 64 calls.  main waits until ubt's data part is mapped and a
 * keyed map has an entry or a ring an event (probes run), 30 ms more (at
 * most 5 s in all), then corrupts it ROUNDS
 * times, 0-2 ms apart, with
 * a PRNG seeded with SEED, lets the workers run 50 ms more, prints
 * `scribbled N` and exits 0.
 *
 * MODE picks what is written:
 *   fuzz      each round picks a part (header, thread table, ring records,
 *             map headers, hash slots, keys, live flags, values, stack
 *             table header, stack entries, anything) and a field in it at
 *             random, and stores a random or boundary value of 1-8 bytes
 *   ff        every byte of the data part becomes 0xff, once
 *   ring      every ring's next record gets the length 0x10008, then
 *             ring_head runs 1 GiB ahead
 *   maphdr    every map's header fields become 0xffffffff / 2^62
 *   slots     every used hash slot points at entry 0xfffffff0
 *   stack     every stack table entry in use gets 0xffffffff frames and
 *             a stack copy of 2^31 bytes (the table's own header is left
 *             alone: this process's probes keep running)
 *   header    every field of the shared header becomes 0xff bytes
 *   truncate  the memfd is opened through /proc/self/map_files (root
 *             may) and truncated to 0 bytes; prints `truncate: <errno
 *             text>` (ubt seals its size: "Operation not permitted")
 *
 * The layout is found the way anyone could: the header at the start of
 * the mapping (runtime/abi.h), map headers by their size field at page
 * starts after the rings.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"
#include "runtime/abi.h"

static volatile int stop;

__attribute__((noinline)) static int call_a(int x)
{
	return f(x) + 1;
}

__attribute__((noinline)) static int call_b(int x)
{
	return call_a(x) + f(x + 1);
}

__attribute__((noinline)) static int call_c(int x)
{
	return call_b(x) * 2;
}

static void nap_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	unsigned long sum = 0;
	(void)arg;
	for (int i = 0; !stop; i++) {
		switch (i % 3) {
		case 0: sum += (unsigned)f(i); break;
		case 1: sum += (unsigned)call_a(i); break;
		default: sum += (unsigned)call_c(i); break;
		}
		if (i % 64 == 63)
			nap_us(200);
	}
	return (void *)sum;
}

/* ---- finding ubt's data part ------------------------------------------ */

static uint8_t *data;
static uint64_t data_len;

static int find_data(void)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];
	while (m && fgets(line, sizeof(line), m)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && strstr(line, "memfd:ubt") &&
		    perms[1] == 'w') {
			data = (uint8_t *)lo;
			data_len = hi - lo;
		}
	}
	if (m)
		fclose(m);
	return data ? 0 : -1;
}

static struct rt_shm_header *hdr(void)
{
	return (struct rt_shm_header *)data;
}

/* the maps: struct rt_map at page starts after the rings (cg_layout.c) */
#define MAX_MAPS 64
static struct rt_map *maps[MAX_MAPS];
static int nmaps;

static void find_maps(void)
{
	uint64_t at = hdr()->rings_off + (uint64_t)hdr()->nthreads * hdr()->ring_size;
	at = (at + 4095) & ~4095ull;
	for (; at + 4096 <= data_len && nmaps < MAX_MAPS; at += 4096) {
		struct rt_map *mp = (struct rt_map *)(data + at);
		if (mp->size == sizeof(struct rt_map) && mp->kind >= RT_MAP_COUNT &&
		    mp->kind <= RT_MAP_LHIST && mp->slots_off == 128)
			maps[nmaps++] = mp;
	}
}

/* a keyed map has an entry or a ring an event: probes have run */
static int any_entry(void)
{
	struct rt_shm_header *h = hdr();
	struct rt_thread *tab = (struct rt_thread *)(data + h->threads_off);
	for (int i = 0; i < nmaps; i++)
		if (maps[i]->key_size && maps[i]->used)
			return 1;
	for (uint32_t i = 0; i < h->nthreads; i++)
		if (tab[i].ring_head)
			return 1;
	return 0;
}

/* ---- random values ------------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* a value a careless reader would trip on */
static uint64_t nasty(uint64_t old)
{
	static const uint64_t v[] = {0,          1,           2,           7,
				     8,          64,          4095,        4096,
				     0x7fff,     0xffff,      0x7fffffff,  0x80000000,
				     0xffffffff, 0x100000000, 1ull << 40,  1ull << 62,
				     1ull << 63, ~0ull,       ~0ull - 7,   0x8000000000000000 - 8};
	switch (below(4)) {
	case 0: return v[below(sizeof(v) / sizeof(v[0]))];
	case 1: return old + 1 + below(64);
	case 2: return old - 1 - below(64);
	default: return rnd();
	}
}

/* stores a value of 1, 2, 4 or 8 bytes at p (unaligned is fine here) */
static void poke(uint8_t *p, unsigned size)
{
	uint64_t old = 0;
	if (p < data || p + size > data + data_len)
		return;
	memcpy(&old, p, size);
	uint64_t v = nasty(old);
	memcpy(p, &v, size);
}

static unsigned width(void)
{
	static const unsigned w[] = {1, 2, 4, 8};
	return w[below(4)];
}

/* ---- the parts ------------------------------------------------------------ */

/* a field of a struct, for picking one at random: F(name) in each table */
struct field {
	unsigned off, size;
};

static void fuzz_header(void)
{
	/* the fields ubt or the runtime read, and anything else in the page */
	static const struct field f[] = {
#define F(x) {offsetof(struct rt_shm_header, x), sizeof(((struct rt_shm_header *)0)->x)}
		F(size),        F(version),      F(magic),       F(data_size),   F(ncpu),
		F(nthreads),    F(ring_size),    F(flags),       F(threads_off), F(rings_off),
		F(rseq_off),    F(tid_off),      F(pid),         F(exit_req),    F(exit_code),
		F(threads_full), F(reentered),   F(trap_hits),   F(ntraps),      F(rets_addr),
		F(ret_lost),    F(tsc_base),     F(ns_base),     F(tsc_mult),    F(start_ns),
		F(rd_min_addr), F(read_faults),  F(stk.table_off), F(stk.main_lo), F(stk.main_hi),
		F(stk.code_lo), F(stk.code_hi),  F(stk.nranges), F(dl_events),   F(dl_rstate),
		F(dl_ack),      F(prof_sig),     F(nprof),       F(cgroup_id),   F(ids_gen),
#undef F
	};
	if (below(4) == 0) {
		poke(data + below(4096), width());
		return;
	}
	unsigned i = (unsigned)below(sizeof(f) / sizeof(f[0]));
	poke(data + f[i].off, f[i].size);
}

static struct rt_thread *some_thread(void)
{
	struct rt_shm_header *h = hdr();
	uint32_t n = h->nthreads;
	if (!n || n > 65536 || h->threads_off >= data_len)
		return NULL;
	struct rt_thread *tab = (struct rt_thread *)(data + h->threads_off);
	for (uint32_t k = 0, i = (uint32_t)below(n); k < n; k++, i = (i + 1) % n)
		if (tab[i].tp && (uint8_t *)&tab[i + 1] <= data + data_len)
			return &tab[i];
	return NULL;
}

static void fuzz_thread(void)
{
	static const struct field f[] = {
#define F(x) {offsetof(struct rt_thread, x), sizeof(((struct rt_thread *)0)->x)}
		F(tp), F(tid), F(busy), F(ring_head), F(lost), F(ring_resv), F(tail_seen), F(ring_tail),
		F(ids.gen), F(ids.uid), F(ids.comm),
#undef F
	};
	struct rt_thread *t = some_thread();
	if (!t)
		return;
	unsigned i = (unsigned)below(sizeof(f) / sizeof(f[0]));
	poke((uint8_t *)t + f[i].off, f[i].size);
}

/* a record header between the tail and the head, or any byte of the ring */
static void fuzz_ring(void)
{
	struct rt_shm_header *h = hdr();
	struct rt_thread *t = some_thread();
	if (!t || !h->ring_size || (h->ring_size & (h->ring_size - 1)))
		return;
	struct rt_thread *tab = (struct rt_thread *)(data + h->threads_off);
	uint8_t *ring = data + h->rings_off + (uint64_t)(t - tab) * h->ring_size;
	if (ring + h->ring_size > data + data_len)
		return;
	uint64_t mask = h->ring_size - 1;
	if (below(3) == 0) {
		poke(ring + below(h->ring_size), width());
		return;
	}
	/* the record at the tail, or a later one: its length, type, id or payload */
	uint64_t at = t->ring_tail, head = t->ring_head;
	for (uint64_t k = below(8); k && at < head; k--) {
		uint32_t len;
		memcpy(&len, ring + (at & mask), 4);
		if (len < 8 || len > h->ring_size)
			break;
		at += len;
	}
	uint8_t *rec = ring + (at & mask);
	switch (below(4)) {
	case 0: poke(rec, 4); break;     /* len */
	case 1: poke(rec + 4, 2); break; /* type */
	case 2: poke(rec + 6, 2); break; /* id */
	default: poke(rec + 8 + 8 * below(8), width()); break;
	}
}

static void fuzz_map(void)
{
	static const struct field f[] = {
#define F(x) {offsetof(struct rt_map, x), sizeof(((struct rt_map *)0)->x)}
		F(size),     F(kind),     F(key_size), F(val_size), F(cap),      F(nslots),
		F(used),     F(lock),     F(drops),    F(written),  F(slots_off), F(keys_off),
		F(vals_off), F(cpu_stride), F(live_off), F(nbuckets), F(rows),
#undef F
	};
	if (!nmaps)
		return;
	struct rt_map *m = maps[below(nmaps)];
	uint8_t *base = (uint8_t *)m;
	uint64_t room = data + data_len - base;
	switch (below(6)) {
	case 0:
	case 1: { /* header field */
		unsigned i = (unsigned)below(sizeof(f) / sizeof(f[0]));
		poke(base + f[i].off, f[i].size);
		break;
	}
	case 2: /* a hash slot */
		if (m->slots_off < room && m->nslots)
			poke(base + m->slots_off + 8 * below(m->nslots < 64 ? m->nslots : 64) +
				     4 * below(2),
			     below(2) ? 4 : 8);
		break;
	case 3: /* a key */
		if (m->keys_off < room)
			poke(base + m->keys_off + below(256), width());
		break;
	case 4: /* a live flag */
		if (m->live_off < room)
			poke(base + m->live_off + 4 * below(64), 4);
		break;
	default: /* a value */
		if (m->vals_off < room)
			poke(base + m->vals_off + 8 * below(128), 8);
		break;
	}
}

static struct rt_stack_table *stack_table(void)
{
	uint64_t off = hdr()->stk.table_off;
	if (!off || off + sizeof(struct rt_stack_table) > data_len)
		return NULL;
	return (struct rt_stack_table *)(data + off);
}

static void fuzz_stack(void)
{
	static const struct field tf[] = {
#define F(x) {offsetof(struct rt_stack_table, x), sizeof(((struct rt_stack_table *)0)->x)}
		F(size), F(max_frames), F(cap), F(copy_size), F(entry_size), F(entries_off),
		F(used), F(drops),
#undef F
	}, ef[] = {
#define F(x) {offsetof(struct rt_stack_entry, x), sizeof(((struct rt_stack_entry *)0)->x)}
		F(id), F(ready), F(nframes), F(flags), F(copy_len), F(pc), F(sp), F(rbp),
#undef F
	};
	struct rt_stack_table *t = stack_table();
	if (!t)
		return;
	if (below(4) == 0) {
		unsigned i = (unsigned)below(sizeof(tf) / sizeof(tf[0]));
		poke((uint8_t *)t + tf[i].off, tf[i].size);
		return;
	}
	/* an entry in use */
	if (!t->cap || (t->cap & (t->cap - 1)) || t->entry_size < sizeof(struct rt_stack_entry))
		return;
	for (uint32_t k = 0, i = (uint32_t)below(t->cap); k < t->cap; k++, i = (i + 1) % t->cap) {
		uint8_t *e = (uint8_t *)t + t->entries_off + (uint64_t)i * t->entry_size;
		if (e + t->entry_size > data + data_len)
			return;
		if (!((struct rt_stack_entry *)e)->id)
			continue;
		if (below(3) == 0) {
			poke(e + offsetof(struct rt_stack_entry, frames) + 8 * below(16), 8);
		} else {
			unsigned j = (unsigned)below(sizeof(ef) / sizeof(ef[0]));
			poke(e + ef[j].off, ef[j].size);
		}
		return;
	}
}

static void fuzz_round(void)
{
	switch (below(8)) {
	case 0: fuzz_header(); break;
	case 1: fuzz_thread(); break;
	case 2:
	case 3: fuzz_ring(); break;
	case 4:
	case 5: fuzz_map(); break;
	case 6: fuzz_stack(); break;
	default: poke(data + below(data_len), width()); break;
	}
}

/* ---- the fixed modes (deterministic, for tests/e2e/hostile.test) ------------ */

static void mode_ring(void)
{
	struct rt_shm_header *h = hdr();
	struct rt_thread *tab = (struct rt_thread *)(data + h->threads_off);
	for (uint32_t i = 0; i < h->nthreads; i++) {
		struct rt_thread *t = &tab[i];
		if (!t->tp)
			continue;
		uint8_t *ring = data + h->rings_off + (uint64_t)i * h->ring_size;
		uint32_t len = 0x10008;
		memcpy(ring + (t->ring_tail & (h->ring_size - 1)), &len, 4);
		t->ring_head += 1ull << 30;
	}
}

static void mode_maphdr(void)
{
	for (int i = 0; i < nmaps; i++) {
		struct rt_map *m = maps[i];
		m->key_size = m->val_size = m->cap = m->nslots = m->used = 0xffffffffu;
		m->nbuckets = m->rows = m->kind = 0xffffffffu;
		m->slots_off = m->keys_off = m->vals_off = m->live_off = m->cpu_stride = 1ull << 62;
	}
}

static void mode_slots(void)
{
	for (int i = 0; i < nmaps; i++) {
		struct rt_map *m = maps[i];
		uint64_t *slots = (uint64_t *)((uint8_t *)m + m->slots_off);
		for (uint32_t k = 0; k < m->nslots; k++)
			if (slots[k])
				slots[k] = (slots[k] & ~0xffffffffull) | 0xfffffff1u;
	}
}

static void mode_stack(void)
{
	struct rt_stack_table *t = stack_table();
	if (!t)
		return;
	for (uint32_t i = 0; i < t->cap; i++) {
		struct rt_stack_entry *e =
			(void *)((uint8_t *)t + t->entries_off + (uint64_t)i * t->entry_size);
		if (e->id) {
			e->nframes = 0xffffffffu;
			e->copy_len = 0x80000000u;
			e->flags = RT_STK_COPY;
		}
	}
}

static void mode_truncate(void)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)data,
		 (unsigned long)(data + data_len));
	int fd = open(path, O_RDWR);
	if (fd < 0 || ftruncate(fd, 0))
		printf("truncate: %s\n", strerror(errno));
	else
		printf("truncate: done\n");
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fuzz";
	rng = argc > 2 ? strtoull(argv[2], NULL, 0) * 0x9e3779b97f4a7c15ull + 1 : 1;
	long rounds = argc > 3 ? strtol(argv[3], NULL, 0) : 100;
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	/* ubt's data part, with the header written and probes running */
	for (int i = 0; i < 10000 && (find_data() || hdr()->magic != RT_SHM_MAGIC); i++)
		nap_us(1000);
	if (!data) {
		fprintf(stderr, "scribble: no memfd:ubt mapping: not traced by ubt?\n");
		stop = 1;
		return 2;
	}
	find_maps();
	for (int i = 0; i < 5000 && !any_entry(); i++)
		nap_us(1000);
	nap_us(30000);
	long n = 0;
	if (!strcmp(mode, "fuzz")) {
		for (; n < rounds; n++) {
			fuzz_round();
			nap_us((long)below(2000));
		}
	} else {
		n = 1;
		if (!strcmp(mode, "ff"))
			memset(data, 0xff, data_len);
		else if (!strcmp(mode, "ring"))
			mode_ring();
		else if (!strcmp(mode, "maphdr"))
			mode_maphdr();
		else if (!strcmp(mode, "slots"))
			mode_slots();
		else if (!strcmp(mode, "stack"))
			mode_stack();
		else if (!strcmp(mode, "header"))
			memset(data + 16, 0xff, sizeof(struct rt_shm_header) - 16);
		else if (!strcmp(mode, "truncate"))
			mode_truncate();
		else
			n = 0;
	}
	nap_us(50000);
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("scribbled %ld\n", n);
	return 0;
}
