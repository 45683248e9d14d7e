/*
 * printf.c - formatting printf() events like bpftrace.
 *
 * The format string was checked by sema; here each conversion is handed to
 * the C library with the argument converted as its length modifier says,
 * as bpftrace (0.17 and today's) passes its 64-bit value through snprintf:
 * l, ll, j, z and t take the full value, no modifier the low 32 bits (an
 * int), h and hh 16 and 8 bits.  `%%` prints one `%`.
 *
 * Speed matters here: ubt must format at least 3 M events/s (DESIGN.md).
 * A format is therefore split once into pieces (literal text, then one
 * conversion) and cached; plain %d %u %x %X and %s without flags, width or
 * precision are formatted by hand, everything else by one snprintf.
 */
#include "output.h"
#include "output_internal.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

#include "stack.h"
#include "sym.h"

struct piece {
	const char *lit; /* literal text before the conversion (into the format) */
	size_t litlen;
	char spec[48];   /* "%-5ll" + conv: the conversion for snprintf */
	char conv;       /* d u x X o c s p, or 0: no conversion (trailing text) */
	int bits;        /* 32, 64 for l ll j z t, 16 / 8 for h / hh */
	bool simple;     /* no flags, width or precision */
	bool r;          /* %r %rx %rh (buf): conv is 's', 'x' or 'h' */
};

struct fmt {
	const struct sema_printf *pf;
	char *text;  /* copy of pf->fmt, to detect a reused pf */
	int npieces;
	struct piece *pieces;
};

/* Splits a format into pieces; the last piece may be text only. */
static struct fmt *compile(const struct sema_printf *pf)
{
	struct fmt *f = xcalloc(1, sizeof(*f));
	f->pf = pf;
	f->text = xstrdup(pf->fmt);
	size_t cap = 4;
	f->pieces = xcalloc(cap, sizeof(*f->pieces));
	const char *p = f->text;
	int argi = 0;
	struct buf lit = {0};
	for (;;) {
		struct piece *pc;
		if ((size_t)f->npieces == cap) {
			cap *= 2;
			f->pieces = xrealloc(f->pieces, cap * sizeof(*f->pieces));
		}
		pc = &f->pieces[f->npieces];
		memset(pc, 0, sizeof(*pc));
		lit.len = 0;
		/* literal text up to a conversion; %% becomes % */
		while (*p) {
			if (p[0] == '%' && p[1] == '%') {
				buf_append(&lit, "%", 1);
				p += 2;
			} else if (p[0] == '%' && argi < pf->nargs) {
				break;
			} else {
				buf_append(&lit, p, 1);
				p++;
			}
		}
		pc->litlen = lit.len;
		pc->lit = lit.len ? xstrndup(lit.data, lit.len) : "";
		f->npieces++;
		if (!*p)
			break;
		/* a conversion */
		size_t n = 0;
		pc->spec[n++] = *p++;
		pc->simple = true;
		/* every flag and digit is read; a run too long for spec keeps its
		 * first characters (`%0000...05d`) */
		for (; *p && strchr("-+ #0", *p); p++, pc->simple = false)
			if (n < 20)
				pc->spec[n++] = *p;
		for (; *p >= '0' && *p <= '9'; p++, pc->simple = false)
			if (n < 30)
				pc->spec[n++] = *p;
		if (*p == '.') {
			pc->simple = false;
			pc->spec[n++] = *p++;
			for (; *p >= '0' && *p <= '9'; p++)
				if (n < 40)
					pc->spec[n++] = *p;
		}
		/* C's width of the argument, as bpftrace prints a 64-bit value
		 * through snprintf: none is an int (32 bits), h a short, hh a
		 * char, l ll j z t 64 bits */
		pc->bits = 32;
		if (p[0] == 'h' && p[1] == 'h') {
			pc->bits = 8;
			p += 2;
		} else if (p[0] == 'h') {
			pc->bits = 16;
			p++;
		} else {
			while (*p && strchr("lljzt", *p)) {
				pc->bits = 64;
				p++;
			}
		}
		pc->conv = *p ? *p++ : 'd';
		if (pc->conv == 'i')
			pc->conv = 'd';
		if (pc->conv == 'p')
			pc->bits = 64; /* a pointer is never narrowed (%hp) */
		if (pc->conv == 'r') {
			pc->r = true;
			pc->conv = (*p == 'x' || *p == 'h') ? *p++ : 's';
		}
		pc->spec[n] = 0;
		argi++;
	}
	buf_free(&lit);
	return f;
}

static void fmt_free(struct fmt *f)
{
	for (int i = 0; i < f->npieces; i++)
		if (f->pieces[i].litlen)
			free((char *)f->pieces[i].lit);
	free(f->pieces);
	free(f->text);
	free(f);
}

/* Compiled formats by sema_printf address; a reused address with another text recompiles. */
#define CACHE_SIZE 256
static struct fmt *cache[CACHE_SIZE];

static struct fmt *lookup(const struct sema_printf *pf)
{
	size_t h = ((uintptr_t)pf >> 4) % CACHE_SIZE;
	for (size_t n = 0; n < CACHE_SIZE; n++, h = (h + 1) % CACHE_SIZE) {
		struct fmt *f = cache[h];
		if (!f) {
			return cache[h] = compile(pf);
		}
		if (f->pf == pf) {
			if (!strcmp(f->text, pf->fmt))
				return f;
			fmt_free(f);
			return cache[h] = compile(pf);
		}
	}
	return NULL; /* full: the caller compiles and frees */
}

static void put_u64(struct buf *b, uint64_t v, unsigned base, bool upper)
{
	char tmp[24];
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int n = sizeof(tmp);
	do {
		tmp[--n] = digits[v % base];
		v /= base;
	} while (v);
	buf_append(b, tmp + n, sizeof(tmp) - n);
}

/* A conversion through snprintf (flags, width, precision, %c, %p, %o). */
static void put_spec(struct buf *b, const char *spec, char conv, uint64_t v, bool sgn)
{
	char full[56], tmp[128];
	int n;
	if (conv == 'c' || conv == 'p') {
		snprintf(full, sizeof(full), "%s%c", spec, conv);
		if (conv == 'c')
			n = snprintf(tmp, sizeof(tmp), full, (int)(unsigned char)v);
		else
			n = snprintf(tmp, sizeof(tmp), full, (void *)(uintptr_t)v);
	} else {
		snprintf(full, sizeof(full), "%sll%c", spec, conv);
		n = sgn ? snprintf(tmp, sizeof(tmp), full, (long long)v)
			: snprintf(tmp, sizeof(tmp), full, (unsigned long long)v);
	}
	if (n < (int)sizeof(tmp)) {
		buf_append(b, tmp, n > 0 ? (size_t)n : 0);
	} else {
		char *big = xmalloc((size_t)n + 1);
		snprintf(big, (size_t)n + 1, full, v);
		buf_append(b, big, (size_t)n);
		free(big);
	}
}

/* %s of a string argument of size bytes (at most, up to its NUL) */
static void put_str(struct buf *b, const struct piece *pc, const char *s, size_t size)
{
	size_t len = strnlen(s, size);
	if (pc->simple) {
		buf_append(b, s, len);
		return;
	}
	char *z = xstrndup(s, len), full[56];
	snprintf(full, sizeof(full), "%ss", pc->spec);
	buf_printf(b, full, z);
	free(z);
}

/* %r %rx %rh: bytes of a buf() value (u8 length, then the bytes) as bpftrace prints them */
static void put_buf(struct buf *b, char kind, const uint8_t *v, size_t size)
{
	size_t len = size ? v[0] : 0;
	if (len > size - 1)
		len = size - 1;
	out_buf_text(b, kind, v + 1, len);
}

/* The name enum `tag` has for value v, or NULL (bpftrace prints the number). */
static const char *enum_name(const char *tag, uint64_t v)
{
	const struct ast_program *p = out_fmt_info ? out_fmt_info->prog : NULL;
	for (int i = 0; p && i < p->nconsts; i++) {
		const struct ast_const *c = &p->consts[i];
		if (c->is_enum && c->enum_tag && !strcmp(c->enum_tag, tag) &&
		    (uint64_t)c->value == v)
			return c->name;
	}
	return NULL;
}

static void one(struct buf *b, const struct piece *pc, const uint8_t **args,
		const struct ast_type *type)
{
	if (pc->r) {
		size_t size = (size_t)(type->size > 0 ? type->size : 1);
		put_buf(b, pc->conv, *args, size);
		*args += ALIGN_UP((uint32_t)size, 8u);
		return;
	}
	if (pc->conv == 's' && type->kind != TY_USYM && type->kind != TY_INT &&
	    type->kind != TY_PTR && type->kind != TY_USTACK) {
		int size = type->size > 0 ? type->size : 1;
		if (type->kind == TY_STR) {
			put_str(b, pc, (const char *)*args, (size_t)size);
		} else {
			struct buf v = {0};
			out_value_text(&v, type, *args, false);
			put_str(b, pc, v.data ? v.data : "", v.len);
			buf_free(&v);
		}
		*args += ALIGN_UP((uint32_t)size, 8u);
		return;
	}
	uint64_t v;
	memcpy(&v, *args, 8);
	*args += 8;
	if (pc->conv == 's' && type->kind == TY_USTACK) { /* ustack: issue 7, stack.c */
		char *s = out_stack_text(v, type, 8);
		put_str(b, pc, s, strlen(s));
		free(s);
		return;
	}
	if (pc->conv == 's') {
		/* usym(), func; an enum's value its enumerator's name; an integer
		 * as %s prints its value */
		const char *en = type->enum_tag ? enum_name(type->enum_tag, v) : NULL;
		char *s = type->kind == TY_USYM ? out_sym_text(v, false)
			  : en			? xstrdup(en)
						: xasprintf("%lld", (long long)v);
		put_str(b, pc, s, strlen(s));
		free(s);
		return;
	}
	bool sgn = pc->conv == 'd';
	if (pc->conv == 'c' && !(uint8_t)v)
		return; /* a NUL: bpftrace's text ends there, the piece's padding too */
	if (pc->bits == 8)
		v = sgn ? (uint64_t)(int64_t)(int8_t)v : (uint8_t)v;
	else if (pc->bits == 16)
		v = sgn ? (uint64_t)(int64_t)(int16_t)v : (uint16_t)v;
	else if (pc->bits == 32)
		v = sgn ? (uint64_t)(int64_t)(int32_t)v : (uint32_t)v;
	if (pc->simple && (pc->conv == 'd' || pc->conv == 'u' || pc->conv == 'x' ||
			   pc->conv == 'X')) {
		if (sgn && (int64_t)v < 0) {
			buf_append(b, "-", 1);
			v = -v;
		}
		put_u64(b, v, pc->conv == 'd' || pc->conv == 'u' ? 10 : 16, pc->conv == 'X');
		return;
	}
	put_spec(b, pc->spec, pc->conv, v, sgn);
}

void out_format(struct buf *b, const struct sema_printf *pf, const uint8_t *args)
{
	struct fmt *f = lookup(pf), *own = NULL;
	if (!f)
		f = own = compile(pf);
	for (int i = 0, argi = 0; i < f->npieces; i++) {
		const struct piece *pc = &f->pieces[i];
		if (pc->litlen)
			buf_append(b, pc->lit, pc->litlen);
		if (pc->conv && argi < pf->nargs)
			one(b, pc, &args, &pf->args[argi++]);
	}
	if (own)
		fmt_free(own);
}
