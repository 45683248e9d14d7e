/*
 * values.c - one value of any script type as bpftrace prints it: integers,
 * strings, tuples `(1, two, 3)`, buf() bytes, symbols.  Used by printf's
 * %s of non-strings, print(value), and tuple map keys and values.
 *
 * Layout of a value's bytes (what probe code stores): integers in their
 * type's size, little-endian; strings NUL-padded to their size; tuples
 * packed as ast_tuple_of() lays them out; buf() values a u8 length and the
 * bytes.
 */
#include "output.h"
#include "output_internal.h"
#include "sym.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

int64_t out_int_at(const struct ast_type *t, const uint8_t *p)
{
	int size = t->size > 0 && t->size <= 8 ? t->size : 8;
	uint64_t v = 0;
	memcpy(&v, p, (size_t)size);
	if (size < 8 && t->is_signed && (v >> (size * 8 - 1)) & 1)
		v |= ~0ull << (size * 8);
	return (int64_t)v;
}

/*
 * buf() as bpftrace 0.17 prints it (its hex_format_buffer): %r (kind 's')
 * keeps printable ASCII (32..126) and writes every other byte as \xNN;
 * %rx writes every byte as \xNN; %rh as two hex digits, space separated:
 * "48 65 6c".
 */
void out_buf_text(struct buf *b, char kind, const uint8_t *v, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (kind == 'x') {
			buf_printf(b, "\\x%02x", v[i]);
		} else if (kind == 'h') {
			buf_printf(b, i ? " %02x" : "%02x", v[i]);
		} else if (v[i] >= 32 && v[i] <= 126) {
			buf_append(b, (const char *)&v[i], 1);
		} else {
			buf_printf(b, "\\x%02x", v[i]);
		}
	}
}

/*
 * Records and arrays, as bpftrace 0.17 prints them: a value
 * `{ .m = 2, .n = 3 }` (JSON `{ "m": 2, "n": 3 }`), as a map key
 * `{.m=2,.n=3}`; arrays `[1,2,3]` everywhere, nested alike
 * (`{ .y = { .m = [2] } }`, `[[5,6],[7,8]]`).  A bitfield member prints
 * its bits (0.17 prints the bytes of its whole unit).
 */
enum vmode { VM_TEXT, VM_JSON, VM_KEY };

static void value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, enum vmode m);

static void member_text(struct buf *b, const struct ast_member *f, const uint8_t *p, enum vmode m)
{
	if (!f->bit_width) {
		value_text(b, &f->type, p + f->offset, m);
		return;
	}
	uint64_t v = 0;
	size_t bytes = ((size_t)f->bit_off + (size_t)f->bit_width + 7) / 8;
	memcpy(&v, p + f->offset, bytes > 8 ? 8 : bytes);
	v >>= f->bit_off;
	if (f->bit_width < 64)
		v &= (1ull << f->bit_width) - 1;
	buf_printf(b, "%" PRIu64, v);
}

static void record_text(struct buf *b, const struct ast_type *t, const uint8_t *p, enum vmode m)
{
	const struct ast_record *r = t->rec;
	buf_append(b, m == VM_KEY ? "{" : "{ ", m == VM_KEY ? 1 : 2);
	for (int i = 0; r && i < r->nmembers; i++) {
		const struct ast_member *f = &r->members[i];
		if (i)
			buf_append(b, m == VM_KEY ? "," : ", ", m == VM_KEY ? 1 : 2);
		if (m == VM_JSON)
			buf_printf(b, "\"%s\": ", f->name);
		else
			buf_printf(b, m == VM_KEY ? ".%s=" : ".%s = ", f->name);
		member_text(b, f, p, m);
	}
	buf_append(b, m == VM_KEY ? "}" : " }", m == VM_KEY ? 1 : 2);
}

void out_value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, bool json)
{
	value_text(b, t, p, json ? VM_JSON : VM_TEXT);
}

static void value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, enum vmode m)
{
	bool json = m == VM_JSON;
	if (t->kind == TY_ARRAY && t->elem) {
		/* bpftrace's array_to_str: [1,2,3] */
		buf_append(b, "[", 1);
		for (int i = 0; i < t->count; i++) {
			if (i)
				buf_append(b, ",", 1);
			value_text(b, t->elem, p + (size_t)i * (size_t)t->elem->size, m);
		}
		buf_append(b, "]", 1);
		return;
	}
	if (t->kind == TY_STRUCT) {
		record_text(b, t, p, m);
		return;
	}
	if (m == VM_KEY && t->kind == TY_BUF) {
		/* a buf() key prints all its bytes, whatever its length byte (bpftrace 0.17) */
		out_buf_text(b, 's', p + 1, t->size > 0 ? (size_t)t->size - 1 : 0);
		return;
	}
	if (out_fmt_value_text(b, t, p, json))
		return;
	switch (t->kind) {
	case TY_STR: {
		size_t len = strnlen((const char *)p, (size_t)(t->size > 0 ? t->size : 1));
		if (json)
			out_json_str(b, (const char *)p, len);
		else
			buf_append(b, p, len);
		return;
	}
	case TY_TUPLE: {
		const struct ast_tuple *tu = t->tup;
		buf_append(b, json ? "[" : "(", 1);
		for (int i = 0; tu && i < tu->count; i++) {
			if (i)
				buf_append(b, json ? "," : ", ", json ? 1 : 2);
			value_text(b, &tu->types[i], p + tu->offsets[i], m);
		}
		buf_append(b, json ? "]" : ")", 1);
		return;
	}
	case TY_USYM: {
		uint64_t a;
		memcpy(&a, p, 8);
		char *s = out_sym_text(a, false);
		if (json)
			out_json_str(b, s, strlen(s));
		else
			buf_append(b, s, strlen(s));
		free(s);
		return;
	}
	case TY_PTR: { /* bpftrace prints a pointer value as a signed decimal
			* (`(4198512, 1)`, `@p: -6`); only map keys are hex (maps.c) */
		int64_t a;
		memcpy(&a, p, 8);
		buf_printf(b, "%" PRId64, a);
		return;
	}
	default: {
		int64_t v = out_int_at(t, p);
		if (t->kind == TY_INT && t->is_bool) {
			buf_printf(b, "%s", (v & 0xff) ? "true" : "false");
			return;
		}
		/* map keys print integers signed, whatever their type (bpftrace's
		 * MapKey::argument_value) */
		if (t->is_signed || t->kind != TY_INT || m == VM_KEY)
			buf_printf(b, "%" PRId64, v);
		else
			buf_printf(b, "%" PRIu64, (uint64_t)v);
		return;
	}
	}
}


/* ---- formatted values (issue 4) ------------------------------------------ */

const struct sema_info *out_fmt_info;

/* The wall-clock time of boot, CLOCK_REALTIME - CLOCK_BOOTTIME, read once
 * (bpftrace reads it at start): strftime()'s base for nsecs values. */
static struct timespec boot_time(void)
{
	static struct timespec bt;
	static bool known;
	if (!known) {
		struct timespec rt, bo;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_BOOTTIME, &bo);
		int64_t ns = (rt.tv_sec - bo.tv_sec) * 1000000000LL + (rt.tv_nsec - bo.tv_nsec);
		bt.tv_sec = ns / 1000000000LL;
		bt.tv_nsec = ns % 1000000000LL;
		known = true;
	}
	return bt;
}

void out_strftime(struct buf *b, const char *fmt, uint64_t ns)
{
	struct timespec bt = boot_time();
	if (fmt[0] == OUT_FMT_EPOCH) { /* nsecs(tai): from the epoch, not from boot */
		bt = (struct timespec){0};
		fmt++;
	}
	/* as bpftrace 0.17: seconds through a double, %f the microseconds */
	time_t secs = bt.tv_sec + (time_t)((double)((uint64_t)bt.tv_nsec + ns) / 1e9);
	uint64_t us = (((uint64_t)bt.tv_nsec + ns) % 1000000000ULL) / 1000;
	struct buf f = {0};
	for (const char *q = fmt; *q; q++) {
		if (q[0] == '%' && q[1] == 'f') {
			buf_printf(&f, "%06llu", (unsigned long long)us);
			q++;
		} else {
			buf_append(&f, q, 1);
		}
	}
	buf_append(&f, "", 1);
	struct tm tm;
	char text[1024]; /* bpftrace: STRING_SIZE */
	size_t n = 0;
	if (localtime_r(&secs, &tm))
		n = strftime(text, sizeof(text), f.data, &tm);
	if (n)
		buf_append(b, text, n);
	else
		buf_append(b, "(?)", 3);
	buf_free(&f);
}

static void put_text(struct buf *b, const char *s, size_t len, bool json)
{
	if (json)
		out_json_str(b, s, len);
	else
		buf_append(b, s, len);
}

static void fmt_text(struct buf *b, const struct ast_type *t, const uint8_t *p)
{
	uint64_t w;
	char tmp[64];
	switch (t->kind) {
	case TY_BUF: {
		size_t len = t->size > 0 ? p[0] : 0;
		if (len > (size_t)t->size - 1)
			len = (size_t)t->size - 1;
		out_buf_text(b, 's', p + 1, len);
		return;
	}
	case TY_TSTAMP: {
		memcpy(&w, p, 8);
		uint64_t ns;
		memcpy(&ns, p + 8, 8);
		const char *fmt = out_fmt_info && w < (uint64_t)out_fmt_info->nprintfs
					  ? out_fmt_info->printfs[w]->fmt : "";
		out_strftime(b, fmt, ns);
		return;
	}
	case TY_INET:
		memcpy(&w, p, 8);
		/* bpftrace prints nothing for another family */
		if ((w == AF_INET || w == AF_INET6) && inet_ntop((int)w, p + 8, tmp, sizeof(tmp)))
			buf_append(b, tmp, strlen(tmp));
		return;
	case TY_STRERROR: {
		memcpy(&w, p, 8);
		const char *e = strerror((int)w);
		buf_append(b, e, strlen(e));
		return;
	}
	case TY_USERNAME: {
		memcpy(&w, p, 8);
		const char *name = out_user_name((uint32_t)w);
		buf_append(b, name, strlen(name));
		return;
	}
	case TY_MACADDR:
		buf_printf(b, "%02X:%02X:%02X:%02X:%02X:%02X", p[0], p[1], p[2], p[3], p[4], p[5]);
		return;
	case TY_CGPATH: {
		uint64_t id;
		memcpy(&w, p, 8);
		memcpy(&id, p + 8, 8);
		out_cgroup_path(b, out_fmt_info && w < (uint64_t)out_fmt_info->nprintfs
				       ? out_fmt_info->printfs[w]->fmt : "*", id);
		return;
	}
	default:
		return;
	}
}

/*
 * username: the name of a uid in /etc/passwd (ubt's host, as bpftrace
 * reads its own), "" if it has none, as in bpftrace 0.17.  The file is
 * read once.
 */
const char *out_user_name(uint32_t uid)
{
	static struct {
		uint32_t uid;
		char *name;
	} *users;
	static int nusers = -1;
	if (nusers < 0) {
		nusers = 0;
		FILE *f = fopen("/etc/passwd", "r");
		char line[1024];
		while (f && fgets(line, sizeof(line), f)) {
			char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			char *end;
			if (!c2)
				continue;
			unsigned long u = strtoul(c2 + 1, &end, 10);
			if (end == c2 + 1 || *end != ':')
				continue;
			users = xrealloc(users, (size_t)(nusers + 1) * sizeof(*users));
			users[nusers].uid = (uint32_t)u;
			users[nusers++].name = xstrndup(line, (size_t)(c1 - line));
		}
		if (f)
			fclose(f);
	}
	for (int i = 0; i < nusers; i++)
		if (users[i].uid == uid)
			return users[i].name;
	return "";
}

bool out_fmt_value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, bool json)
{
	if (t->kind == TY_ARRAY || t->kind == TY_STRUCT) {
		out_value_text(b, t, p, json);
		return true;
	}
	if (t->kind < TY_BUF || t->kind > TY_CGPATH)
		return false;
	if (!json) {
		fmt_text(b, t, p);
		return true;
	}
	/* JSON: a string (bpftrace 0.17 leaves strftime, strerror and macaddr
	 * values unquoted, which is not JSON; docs/compat.md) */
	struct buf v = {0};
	fmt_text(&v, t, p);
	put_text(b, v.data ? v.data : "", v.len, true);
	buf_free(&v);
	return true;
}

void out_key_text(struct buf *b, const struct ast_type *t, const uint8_t *p)
{
	value_text(b, t, p, VM_KEY);
}
