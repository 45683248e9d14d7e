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

#include <inttypes.h>
#include <string.h>

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
 * buf() as %r prints it: printable ASCII as is, everything else \xNN;
 * %rx: every byte as two hex digits, space separated (bpftrace 0.17:
 * "\x01\x02"-style for %rx? it prints hex bytes); %rh: the same, with
 * upper-case... (see out_buf_text's cases).
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

void out_value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, bool json)
{
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
			out_value_text(b, &tu->types[i], p + tu->offsets[i], json);
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
	case TY_PTR: { /* bpftrace prints a pointer value in decimal (`(4198512, 1)`);
			* only map keys are hex (maps.c) */
		uint64_t a;
		memcpy(&a, p, 8);
		buf_printf(b, "%" PRIu64, a);
		return;
	}
	default: {
		int64_t v = out_int_at(t, p);
		if (t->is_signed || t->kind != TY_INT)
			buf_printf(b, "%" PRId64, v);
		else
			buf_printf(b, "%" PRIu64, (uint64_t)v);
		return;
	}
	}
}
