/*
 * writer.h - the one code writer of the x86-64 arch layer: every byte a
 * trampoline, a relocated copy or a patch is made of goes through it.
 *
 * A writer appends machine code to a bounded buffer that will run at a
 * known target address (`at`), so a rel32 to any absolute address can be
 * computed as the bytes are written.  It also keeps what can only be
 * settled at the end: forward references to labels (rel8 or rel32 fields
 * resolved by x86w_finish) and a literal pool of 64-bit constants that
 * instructions reach as [rip + disp32] (placed 8-aligned after the code,
 * in the order they were referenced, the gap filled with int3).
 *
 * Errors do not stop the writing: the first one is kept in `err` and
 * x86w_finish returns it, so an emitter is a straight list of calls.
 * Past `cap` the writer only counts (err = -ENOSPC), and a writer made
 * with buf == NULL is a dry run that counts without error: that is how
 * a layout's length is known before its address (mid.c's head, the
 * return stub's address in tramp_ret.c, the pc maps in tramp.c).
 *
 * Instruction helpers live here only when more than one emitter needs
 * them; an emitter's own instructions stay in its file.
 */
#ifndef UBT_ARCH_X86_WRITER_H
#define UBT_ARCH_X86_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86.h"

#define X86W_LABELS 16
#define X86W_FIXUPS 32
/* entry and return handlers, rt_ret_enter and _leave, a relocated copy's */
#define X86W_LITS (2 * ARCH_MAX_HANDLERS + 2 + X86_RELOC_LIT_MAX)

struct x86_writer {
	uint8_t *buf; /* NULL: a dry run, only counts */
	size_t cap;
	size_t len;  /* bytes written, or counted */
	uint64_t at; /* target address of buf[0] */
	int err;     /* the first error, 0 if none */
	size_t label[X86W_LABELS];
	struct {
		/* offset of the rel8 / rel32 field; the instruction ends right after it */
		size_t field;
		uint8_t label;
		bool rel8;
	} fix[X86W_FIXUPS];
	int nfix;
	struct {
		size_t disp; /* offset of the disp32; the instruction ends right after */
		uint64_t value;
	} lit[X86W_LITS];
	int nlit;
};

void x86w_init(struct x86_writer *w, uint8_t *buf, size_t cap, uint64_t at);

void x86w_put(struct x86_writer *w, const void *bytes, size_t n);
/* a string literal of bytes, e.g. X86W_PUT(w, "\x41\x53") for push %r11 */
#define X86W_PUT(w, s) x86w_put(w, s, sizeof(s) - 1)
void x86w_u8(struct x86_writer *w, uint8_t v);
void x86w_u32(struct x86_writer *w, uint32_t v);
void x86w_u64(struct x86_writer *w, uint64_t v);

/* The target address of the next byte. */
static inline uint64_t x86w_pc(const struct x86_writer *w) { return w->at + w->len; }

/* Label l (0 .. X86W_LABELS-1) is here. */
void x86w_label(struct x86_writer *w, int l);
/* op (n bytes: jmp e9, jcc 0f 8x, call e8 ...) then a rel32 to label l */
void x86w_rel32_label(struct x86_writer *w, const void *op, size_t n, int l);
/* op (jcc 7x, jmp eb) then a rel8 to label l; -ERANGE at finish if it does not reach */
void x86w_rel8_label(struct x86_writer *w, const void *op, size_t n, int l);
/* op then a rel32 to the address `to` (lea to(%rip), jmp, call); -ERANGE if out of reach */
void x86w_rel32_to(struct x86_writer *w, const void *op, size_t n, uint64_t to);
/* op (ModRM [rip + disp32]) then the disp32 of a literal holding value */
void x86w_lit(struct x86_writer *w, const void *op, size_t n, uint64_t value);

/* Six bytes that call `to`: nop; call rel32 in reach, else call *lit(%rip). */
void x86w_call6(struct x86_writer *w, uint64_t to);
/*
 * A handler call: x86w_call6, then, where the site passes ids
 * (arch_site_plan.call_ids), `nopl id(%rax)` (0f 1f 80 id32), which the
 * handler reads at its return address + 3 (abi.h, "Site ids").
 */
#define X86_CALL_ID_LEN 7
void x86w_call_handler(struct x86_writer *w, uint64_t to, bool with_id, uint32_t id);
/* jmp to: e9 rel32 in reach, else jmp *lit(%rip) (6 bytes) */
void x86w_jmp(struct x86_writer *w, uint64_t to);

/*
 * Resolves the label references, places the literal pool after the code
 * (8-aligned) and sets *len to the whole length.  Returns the first error
 * met while writing, or 0.
 */
int x86w_finish(struct x86_writer *w, size_t *len);

#endif
