/*
 * test_output.c - printf formatting and map printing against the text
 * bpftrace 0.17 prints (captured from bpftrace itself on the same input).
 */
#include "output/output.h"
#include "output/output_internal.h"
#include "runtime/abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static struct ast_type t_int(bool sgn) { return (struct ast_type){TY_INT, 8, sgn}; }
static struct ast_type t_str(int n) { return (struct ast_type){TY_STR, n, false}; }

/* Formats fmt with packed 8-byte args (strings occupy their size rounded to 8). */
static void check_fmt(const char *name, const char *fmt, int nargs, const struct ast_type *types,
		      const void *args, const char *want)
{
	struct sema_printf pf = {.fmt = (char *)fmt, .nargs = nargs};
	memcpy(pf.args, types, nargs * sizeof(*types));
	struct buf b = {0};
	out_format(&b, &pf, args);
	CHECK_STR(b.data ? b.data : "", want, "%s", name);
	buf_free(&b);
}

static void test_printf(void)
{
	struct ast_type ti[] = {t_int(true), t_int(false), t_int(true)};
	int64_t a[] = {-5, 255, 42};
	check_fmt("d u x", "x %d %u %x\n", 3, ti, a, "x -5 255 2a\n");
	check_fmt("width", "[%5d] [%-5d] [%05d]", 3, (struct ast_type[]){t_int(true), t_int(true), t_int(true)},
		  (int64_t[]){42, 42, 42}, "[   42] [42   ] [00042]");
	/* bpftrace hands its 64-bit value to snprintf: no modifier reads an int */
	check_fmt("64-bit %d is an int's 32 bits", "%d", 1, ti, (int64_t[]){5000000000LL}, "705032704");
	check_fmt("64-bit %ld whole", "%ld", 1, ti, (int64_t[]){5000000000LL}, "5000000000");
	check_fmt("%u %x %o of -3: 32 bits", "%u %x %o", 3, ti, (int64_t[]){-3, -3, -3},
		  "4294967293 fffffffd 37777777775");
	check_fmt("%lu %llx %jd: 64 bits", "%lu %llx %jd", 3, ti, (int64_t[]){-3, -3, -3},
		  "18446744073709551613 fffffffffffffffd -3");
	/* as bpftrace 0.17 prints them: a NUL char ends its piece, %hp is a
	 * whole pointer, a flag run longer than ubt's spec is read whole */
	check_fmt("%c of a NUL byte", "[%c][%-3c]", 2, ti, (int64_t[]){0, 256}, "[][]");
	check_fmt("%hp", "[%hp]", 1, ti, (int64_t[]){-1}, "[0xffffffffffffffff]");
	check_fmt("a long flag run", "[%0000000000000000000000000000000005d]", 1, ti,
		  (int64_t[]){7}, "[00007]");
	check_fmt("%hhd narrows", "%hhd %hu", 2, (struct ast_type[]){t_int(true), t_int(false)},
		  (int64_t[]){0x1ff, 0x10001}, "-1 1");
	check_fmt("%%", "100%% %d", 1, ti, (int64_t[]){7}, "100% 7");
	check_fmt("%lu %llx %X", "%lu %llx %X", 3, ti, (int64_t[]){3, 255, 255}, "3 ff FF");
	struct {
		char s[8];
		int64_t v;
	} sa = {"hi", 3};
	struct ast_type ts[] = {t_str(3), t_int(true)};
	check_fmt("%s then %d", "%s=%d", 2, ts, &sa, "hi=3");
	check_fmt("%p", "%p", 1, ti, (int64_t[]){0x1000}, "0x1000");
	check_fmt("%c", "%c%c", 2, ti, (int64_t[]){'o', 'k'}, "ok");
}

/* A zeroed data part for info's maps (8 keys each), their headers written as attach does. */
static uint8_t *data_part(const struct sema_info *info, struct cg_layout *l)
{
	struct cg_options co = {.map_keys_max = 8, .ring_size = 4096, .nthreads = 4, .ncpu = 2};
	cg_layout(info, &co, l);
	uint8_t *data = calloc(1, l->data_size);
	for (int i = 0; i < l->nmaps; i++)
		memcpy(data + l->maps[i].off, &l->maps[i].hdr, sizeof(struct rt_map));
	return data;
}

/* Builds a data part with one keyed count map holding the given entries. */
static void test_maps(void)
{
	struct sema_map m = {.name = "@m", .id = 0, .nkeys = 2};
	m.keys[0] = t_int(false);
	m.keys[1] = t_int(false);
	m.value.kind = TY_COUNT;
	struct sema_map s = {.name = "@", .id = 1, .nkeys = 0};
	s.value.kind = TY_SUM;
	struct sema_map x = {.name = "@x", .id = 2, .nkeys = 0};
	x.value.kind = TY_INT;
	struct sema_map *maps[] = {&m, &s, &x};
	struct sema_info info = {.maps = maps, .nmaps = 3};
	struct cg_layout l;
	uint8_t *data = data_part(&info, &l);
	/* @m: keys (1,7) -> 1, (2,7) -> 2 split across CPUs, (0,7) -> 3 in the fallback slot */
	struct rt_map *h = (struct rt_map *)(data + l.maps[0].off);
	uint64_t keys[3][2] = {{1, 7}, {2, 7}, {0, 7}};
	memcpy(data + l.maps[0].off + h->keys_off, keys, sizeof(keys));
	h->used = 3;
	uint32_t *live = (uint32_t *)(data + l.maps[0].off + h->live_off);
	live[0] = live[1] = live[2] = 1;
	uint64_t *v = (uint64_t *)(data + l.maps[0].off + h->vals_off);
	v[0] = 1;
	v[1] = 1;
	v[h->cpu_stride / 8 + 1] = 1;
	v[2 * h->cpu_stride / 8 + 2] = 3;
	/* @ (scalar sum) = 10 on CPU 1; @x never written */
	struct rt_map *hs = (struct rt_map *)(data + l.maps[1].off);
	hs->written = 1;
	((uint64_t *)(data + l.maps[1].off + hs->vals_off))[hs->cpu_stride / 8] = 10;

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct out o;
	out_init(&o, f, &info, &l, data);
	out_print_maps(&o);
	fclose(f);
	CHECK_STR(text, "@: 10\n@m[1, 7]: 1\n@m[2, 7]: 2\n@m[0, 7]: 3\n\n", "maps");
	free(text);
	out_fini(&o);
	free(data);
	cg_layout_free(&l);
}

/* ---- shared memory the target wrote nonsense into (output/trust.c) ---- */

/* Appends a record (len bytes, header then payload) to ring 0. */
static void put_rec(uint8_t *data, const struct cg_layout *l, uint64_t *head, uint32_t len,
		    uint16_t type, uint16_t id, const void *payload, size_t plen)
{
	uint8_t *ring = data + l->rings_off;
	struct rt_event_hdr h = {len, type, id};
	memcpy(ring + (*head & (l->ring_size - 1)), &h, sizeof(h));
	if (plen)
		memcpy(ring + (*head & (l->ring_size - 1)) + sizeof(h), payload, plen);
	*head += len;
}

/* Drains ring 0 with ring_head = head; returns stdout's text (malloc'ed). */
static char *drain(struct out *o, uint8_t *data, const struct cg_layout *l, uint64_t head)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	o->f = f;
	((struct rt_thread *)(data + l->threads_off))->ring_head = head;
	out_drain(o);
	fclose(f);
	return text;
}

static void test_hostile(void)
{
	struct sema_map m = {.name = "@m", .id = 0, .nkeys = 1};
	m.keys[0] = t_int(false);
	m.value.kind = TY_COUNT;
	struct sema_map *maps[] = {&m};
	struct ast_node call = {.kind = AST_CALL, .str = "printf"};
	struct sema_printf pf = {.id = 0, .fmt = "v %d %s|\n", .nargs = 2, .call = &call};
	pf.args[0] = t_int(true);
	pf.args[1] = t_str(16);
	struct sema_printf *pfs[] = {&pf};
	struct sema_info info = {.maps = maps, .nmaps = 1, .printfs = pfs, .nprintfs = 1};
	struct cg_layout l;
	uint8_t *data = data_part(&info, &l);
	out_bad_init(0);
	struct out o;
	out_init(&o, stdout, &info, &l, data);
	struct ast_node prog = {.kind = AST_PROGRAM};
	out_map_ops_from(&o, &prog); /* the script prints no map */
	struct {
		int64_t v;
		char s[16];
	} args = {-3, "ok"};
	uint64_t head = 0;

	put_rec(data, &l, &head, 32, RT_EV_PRINTF, 0, &args, sizeof(args));
	/* a record shorter than its arguments: what is missing reads as zeros */
	put_rec(data, &l, &head, 16, RT_EV_PRINTF, 0, &args, 8);
	/* a print(@m) the script does not have, an unknown printf id */
	struct rt_ev_map mo = {RT_MOP_PRINT, 0, 0, 0};
	put_rec(data, &l, &head, 32, RT_EV_MAP, 0, &mo, sizeof(mo));
	put_rec(data, &l, &head, 32, RT_EV_PRINTF, 7, &args, sizeof(args));
	char *t = drain(&o, data, &l, head);
	CHECK_STR(t, "v -3 ok|\nv -3 |\n", "short record, forged ids");
	free(t);
	CHECK_EQ(out_bad_count(), 2, "forged records reported");

	/* a record longer than what is pending, then one of length 0: the
	 * rest of the ring is skipped and reading resumes at the head */
	uint64_t start = head;
	put_rec(data, &l, &head, 4000, RT_EV_PRINTF, 0, &args, sizeof(args));
	t = drain(&o, data, &l, start + 64);
	CHECK_STR(t ? t : "", "", "record past the head");
	free(t);
	head = start + 64;
	start = head;
	put_rec(data, &l, &head, 0, RT_EV_PRINTF, 0, &args, sizeof(args));
	head = start + 32;
	t = drain(&o, data, &l, head);
	CHECK_STR(t ? t : "", "", "record of length 0");
	free(t);
	put_rec(data, &l, &head, 32, RT_EV_PRINTF, 0, &args, sizeof(args));
	t = drain(&o, data, &l, head);
	CHECK_STR(t, "v -3 ok|\n", "resumed at the head");
	free(t);
	/* a head far ahead (2^63) and one moved back: nothing read, the tail follows */
	t = drain(&o, data, &l, head + (1ull << 63));
	CHECK_STR(t ? t : "", "", "head far ahead");
	free(t);
	t = drain(&o, data, &l, 8);
	CHECK_STR(t ? t : "", "", "head moved back");
	free(t);
	head = 8;
	put_rec(data, &l, &head, 32, RT_EV_PRINTF, 0, &args, sizeof(args));
	t = drain(&o, data, &l, head);
	CHECK_STR(t, "v -3 ok|\n", "resumed after the head moved back");
	free(t);
	CHECK_EQ(((struct rt_thread *)(data + l.threads_off))->ring_tail, head,
		 "ring_tail put back to the head");

	/* the map's header rewritten: ubt reads with its own layout, used
	 * at most the capacity */
	struct rt_map *h = (struct rt_map *)(data + l.maps[0].off);
	uint64_t key = 5;
	memcpy(data + l.maps[0].off + l.maps[0].hdr.keys_off, &key, 8);
	((uint32_t *)(data + l.maps[0].off + l.maps[0].hdr.live_off))[0] = 1;
	((uint64_t *)(data + l.maps[0].off + l.maps[0].hdr.vals_off))[0] = 9;
	memset(h, 0xff, sizeof(*h));
	char *text = NULL;
	size_t len = 0;
	o.f = open_memstream(&text, &len);
	out_print_maps(&o);
	fclose(o.f);
	CHECK_STR(text, "@m[5]: 9\n", "map header rewritten");
	free(text);
	out_fini(&o);
	free(data);
	cg_layout_free(&l);

	/* values that overflow when summed or divided: wrong numbers, no trap
	 * (INT64_MIN / -1) and no undefined behaviour (UBSan in CI) */
	struct sema_map a = {.name = "@a", .id = 0, .nkeys = 0};
	a.value.kind = TY_AVG;
	struct sema_map c = {.name = "@c", .id = 1, .nkeys = 0};
	c.value.kind = TY_COUNT;
	struct sema_map *vmaps[] = {&a, &c};
	struct sema_info vinfo = {.maps = vmaps, .nmaps = 2};
	data = data_part(&vinfo, &l);
	const struct rt_map *ha = &l.maps[0].hdr, *hc = &l.maps[1].hdr;
	int64_t *av = (int64_t *)(data + l.maps[0].off + ha->vals_off);
	av[0] = -1;        /* count, CPU 0 */
	av[1] = INT64_MIN; /* total */
	((struct rt_map *)(data + l.maps[0].off))->written = 1;
	int64_t *cv = (int64_t *)(data + l.maps[1].off + hc->vals_off);
	cv[0] = INT64_MAX;
	cv[hc->cpu_stride / 8] = INT64_MAX;
	out_init(&o, NULL, &vinfo, &l, data);
	text = NULL;
	o.f = open_memstream(&text, &len);
	out_print_maps(&o);
	fclose(o.f);
	CHECK_STR(text, "@a: -9223372036854775808\n\n@c: 18446744073709551614\n", "overflowing values");
	free(text);
	out_fini(&o);
	free(data);
	cg_layout_free(&l);
}

int main(void)
{
	test_printf();
	test_maps();
	test_hostile();
	return check_summary("output");
}
