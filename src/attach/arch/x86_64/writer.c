/*
 * writer.c - the x86-64 code writer (see writer.h): a bounded buffer,
 * labels with rel8/rel32 fixups and a pool of 64-bit literals.
 *
 * Why one writer: each trampoline kind (tramp.c, mid.c, tramp_ret.c) and
 * the relocator (reloc.c) used to carry its own byte emitter, with its own
 * idea of how a far call goes through the literal pool and where the pool
 * goes.  Those choices are part of the layout the pc mapping relies on, so
 * they are made once, here.
 */
#include <errno.h>
#include <string.h>

#include "writer.h"

#define NO_LABEL ((size_t)-1)

void x86w_init(struct x86_writer *w, uint8_t *buf, size_t cap, uint64_t at)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->len = 0;
	w->at = at;
	w->err = 0;
	w->nfix = 0;
	w->nlit = 0;
	for (int i = 0; i < X86W_LABELS; i++)
		w->label[i] = NO_LABEL;
}

static void fail(struct x86_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

void x86w_put(struct x86_writer *w, const void *bytes, size_t n)
{
	if (w->buf && w->len + n <= w->cap)
		memcpy(w->buf + w->len, bytes, n);
	else if (w->buf)
		fail(w, -ENOSPC);
	w->len += n;
}

void x86w_u8(struct x86_writer *w, uint8_t v) { x86w_put(w, &v, 1); }

void x86w_u32(struct x86_writer *w, uint32_t v)
{
	x86w_put(w, &v, 4); /* x86-64 is little-endian */
}

void x86w_u64(struct x86_writer *w, uint64_t v) { x86w_put(w, &v, 8); }

void x86w_label(struct x86_writer *w, int l) { w->label[l] = w->len; }

static void fixup(struct x86_writer *w, const void *op, size_t n, int l, bool rel8)
{
	x86w_put(w, op, n);
	if (w->nfix == X86W_FIXUPS) {
		fail(w, -ENOSPC);
		return;
	}
	w->fix[w->nfix].field = w->len;
	w->fix[w->nfix].label = (uint8_t)l;
	w->fix[w->nfix].rel8 = rel8;
	w->nfix++;
	if (rel8)
		x86w_u8(w, 0);
	else
		x86w_u32(w, 0);
}

void x86w_rel32_label(struct x86_writer *w, const void *op, size_t n, int l)
{
	fixup(w, op, n, l, false);
}

void x86w_rel8_label(struct x86_writer *w, const void *op, size_t n, int l)
{
	fixup(w, op, n, l, true);
}

void x86w_rel32_to(struct x86_writer *w, const void *op, size_t n, uint64_t to)
{
	int32_t rel = 0;

	x86w_put(w, op, n);
	if (!x86_rel32(x86w_pc(w) + 4, to, &rel))
		fail(w, -ERANGE);
	x86w_u32(w, (uint32_t)rel);
}

void x86w_lit(struct x86_writer *w, const void *op, size_t n, uint64_t value)
{
	x86w_put(w, op, n);
	if (w->nlit == X86W_LITS)
		fail(w, -ENOSPC);
	else
		w->lit[w->nlit].disp = w->len, w->lit[w->nlit++].value = value;
	x86w_u32(w, 0); /* set by x86w_finish */
}

void x86w_call6(struct x86_writer *w, uint64_t to)
{
	if (x86_rel32(x86w_pc(w) + 6, to, NULL))
		x86w_rel32_to(w, "\x90\xe8", 2, to);
	else
		x86w_lit(w, "\xff\x15", 2, to); /* call *lit(%rip) */
}

void x86w_call_handler(struct x86_writer *w, uint64_t to, bool with_id, uint32_t id)
{
	x86w_call6(w, to);
	if (with_id) {
		X86W_PUT(w, "\x0f\x1f\x80"); /* nopl id(%rax): executed, does nothing */
		x86w_u32(w, id);
	}
}

void x86w_jmp(struct x86_writer *w, uint64_t to)
{
	if (x86_rel32(x86w_pc(w) + 5, to, NULL))
		x86w_rel32_to(w, "\xe9", 1, to);
	else
		x86w_lit(w, "\xff\x25", 2, to); /* jmp *lit(%rip) */
}

/* Overwrites 4 bytes at off (already written or counted). */
static void set32(struct x86_writer *w, size_t off, int32_t v)
{
	if (w->buf && off + 4 <= w->cap)
		memcpy(w->buf + off, &v, 4); /* x86-64 is little-endian */
}

static int resolve(struct x86_writer *w)
{
	for (int i = 0; i < w->nfix; i++) {
		size_t f = w->fix[i].field, to = w->label[w->fix[i].label];
		int64_t d = (int64_t)to - (int64_t)(f + (w->fix[i].rel8 ? 1 : 4));

		if (to == NO_LABEL)
			return -EINVAL; /* an emitter bug: a label never placed */
		if (!w->fix[i].rel8)
			set32(w, f, (int32_t)d);
		else if (d < -128 || d > 127)
			return -ERANGE;
		else if (w->buf && f < w->cap)
			w->buf[f] = (uint8_t)(int8_t)d;
	}
	return 0;
}

int x86w_finish(struct x86_writer *w, size_t *len)
{
	int rc = resolve(w);

	if (rc)
		fail(w, rc);
	while (w->len & 7)
		x86w_u8(w, 0xcc);
	for (int i = 0; i < w->nlit; i++) {
		set32(w, w->lit[i].disp, (int32_t)(w->len - (w->lit[i].disp + 4)));
		x86w_u64(w, w->lit[i].value);
	}
	if (w->err)
		return w->err;
	*len = w->len;
	return 0;
}
