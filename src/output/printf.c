/*
 * printf.c - formatting printf() events like bpftrace.
 *
 * The format string was checked by sema; here each conversion is handed to
 * the C library with the argument converted as its length modifier says:
 * no modifier, l, ll, j, z and t take the full 64-bit value (bpftrace 0.17
 * truncates %d to 32 bits; see docs/compat.md), h and hh narrow to 16 and
 * 8 bits as C does.  `%%` prints one `%`.
 */
#include "output.h"
#include "output_internal.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

#include "stack.h"
#include "sym.h"

/* Consumes one conversion at *pp (just after '%'); writes it to b. */
static void one_spec(struct buf *b, const char **pp, const uint8_t **args,
		     const struct ast_type *type)
{
	const char *p = *pp;
	char spec[64];
	size_t n = 0;
	spec[n++] = '%';
	while (*p && strchr("-+ #0", *p) && n < 20)
		spec[n++] = *p++;
	while (*p >= '0' && *p <= '9' && n < 30)
		spec[n++] = *p++;
	if (*p == '.') {
		spec[n++] = *p++;
		while (*p >= '0' && *p <= '9' && n < 40)
			spec[n++] = *p++;
	}
	int bits = 64;
	if (p[0] == 'h' && p[1] == 'h') {
		bits = 8;
		p += 2;
	} else if (p[0] == 'h') {
		bits = 16;
		p++;
	} else {
		while (*p && strchr("lljzt", *p))
			p++;
	}
	char conv = *p ? *p++ : 'd';
	*pp = p;
	if (conv == 's' && type->kind == TY_USTACK) { /* ustack: issue 7, stack.c */
		spec[n++] = 's';
		spec[n] = 0;
		uint64_t id;
		memcpy(&id, *args, 8);
		*args += 8;
		char *s = out_stack_text(id, type, 8);
		buf_printf(b, spec, s);
		free(s);
		return;
	}
	if (conv == 's' && type->kind == TY_USYM) { /* usym(), func: issue 7 */
		spec[n++] = 's';
		spec[n] = 0;
		uint64_t addr;
		memcpy(&addr, *args, 8);
		*args += 8;
		char *s = out_sym_text(addr, false);
		buf_printf(b, spec, s);
		free(s);
		return;
	}
	if (conv == 's') {
		spec[n++] = 's';
		spec[n] = 0;
		int size = type->size > 0 ? type->size : 1;
		char *s = xstrndup((const char *)*args, size);
		buf_printf(b, spec, s);
		free(s);
		*args += ALIGN_UP((uint32_t)size, 8u);
		return;
	}
	uint64_t v;
	memcpy(&v, *args, 8);
	*args += 8;
	if (conv == 'p') {
		spec[n++] = 'p';
		spec[n] = 0;
		buf_printf(b, spec, (void *)(uintptr_t)v);
		return;
	}
	if (conv == 'c') {
		spec[n++] = 'c';
		spec[n] = 0;
		buf_printf(b, spec, (int)(unsigned char)v);
		return;
	}
	bool sgn = conv == 'd' || conv == 'i';
	if (bits == 8)
		v = sgn ? (uint64_t)(int64_t)(int8_t)v : (uint8_t)v;
	else if (bits == 16)
		v = sgn ? (uint64_t)(int64_t)(int16_t)v : (uint16_t)v;
	spec[n++] = 'l';
	spec[n++] = 'l';
	spec[n++] = conv;
	spec[n] = 0;
	if (sgn)
		buf_printf(b, spec, (long long)v);
	else
		buf_printf(b, spec, (unsigned long long)v);
}

void out_format(struct buf *b, const struct sema_printf *pf, const uint8_t *args)
{
	const char *p = pf->fmt;
	int argi = 0;
	while (*p) {
		const char *pct = strchr(p, '%');
		if (!pct) {
			buf_append(b, p, strlen(p));
			break;
		}
		buf_append(b, p, pct - p);
		p = pct + 1;
		if (*p == '%') {
			buf_append(b, "%", 1);
			p++;
			continue;
		}
		if (argi >= pf->nargs) {
			buf_append(b, "%", 1);
			continue;
		}
		one_spec(b, &p, &args, &pf->args[argi]);
		argi++;
	}
}
