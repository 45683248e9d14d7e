/*
 * reloc.c - relocating the instructions a probe patch displaces.
 *
 * Where it sits: after decode.c planned a site, tramp.c builds the
 * trampoline and asks this file for the displaced instructions rewritten
 * to run at their new address, followed by the jmp back into the original
 * function.  The rewritten code does exactly what the original did at its
 * old address; every form below was chosen to keep the registers, the
 * flags and the stack identical:
 *
 *   original                         relocated
 *   position-independent insn        copied verbatim
 *   op [rip+d]  (any encoding:       same bytes, d rewritten so that the
 *   legacy, VEX, EVEX, with or       operand names the same address;
 *   without an immediate after d)    -ERANGE if it cannot reach
 *   jmp rel8 / rel32                 e9 rel32, or ff 25 [lit] (jmp *lit(%rip))
 *                                    when the target is out of rel32 reach
 *   jcc rel8 / rel32                 0f 8x rel32, or the inverse jcc over
 *                                    jmp *lit(%rip):  7y 06  ff 25 [lit]
 *   call rel32                       ff 35 [lit]  (push the ORIGINAL return
 *                                    address) then a jmp to the callee, so
 *                                    the callee returns into the original
 *                                    function and sees the return address
 *                                    it would have seen unprobed
 *   (end)                            jmp site + orig_len, rel32 or absolute
 *
 * [lit] is a disp32 to a 64-bit constant in the trampoline's literal pool;
 * tramp.c places the pool and fills the disp32s in.
 */
#include <errno.h>
#include <string.h>

#include "x86.h"

static void add_map(struct x86_reloc *r, int insn, uint64_t orig)
{
	struct x86_pc_map *m = &r->map[r->nmap++];

	m->off = r->len;
	m->insn = insn;
	m->orig = orig;
}

/* A [rip + disp32] reference to `value` whose disp32 is at code[disp_off]. */
static void add_lit(struct x86_reloc *r, int disp_off, int insn_end, uint64_t value)
{
	struct x86_lit_ref *l = &r->lit[r->nlit++];

	l->disp_off = disp_off;
	l->insn_end = insn_end;
	l->value = value;
	x86_put32(r->code + disp_off, 0); /* filled in by tramp.c */
}

/* ff /n with ModRM 00 n 101: [rip + disp32] to a literal holding `value`. */
static void emit_ff_lit(struct x86_reloc *r, uint8_t modrm, uint64_t value)
{
	uint8_t *p = r->code + r->len;

	p[0] = 0xff;
	p[1] = modrm;
	add_lit(r, r->len + 2, r->len + 6, value);
	r->len += 6;
}

/* jmp to `to` from code[len], running at `at`. */
static void emit_jmp(struct x86_reloc *r, uint64_t at, uint64_t to)
{
	uint8_t *p = r->code + r->len;
	int32_t rel;

	if (x86_rel32(at + r->len + 5, to, &rel)) {
		p[0] = 0xe9;
		x86_put32(p + 1, rel);
		r->len += 5;
		return;
	}
	emit_ff_lit(r, 0x25, to); /* jmp *lit(%rip) */
}

static void emit_jcc(struct x86_reloc *r, uint64_t at, int idx, const struct x86_insn *in)
{
	uint8_t *p = r->code + r->len;
	int32_t rel;

	add_map(r, idx, in->addr);
	if (x86_rel32(at + r->len + 6, in->target, &rel)) {
		p[0] = 0x0f;
		p[1] = 0x80 | in->cc;
		x86_put32(p + 2, rel);
		r->len += 6;
		return;
	}
	/* The inverse condition (cc ^ 1) skips the 6-byte absolute jmp. */
	p[0] = 0x70 | (in->cc ^ 1);
	p[1] = 6;
	r->len += 2;
	add_map(r, -1, in->target); /* here the branch is already taken */
	emit_ff_lit(r, 0x25, in->target);
}

static void emit_call(struct x86_reloc *r, uint64_t at, int idx, const struct x86_insn *in)
{
	add_map(r, idx, in->addr);
	emit_ff_lit(r, 0x35, in->addr + in->len); /* push lit(%rip): the original return address */
	add_map(r, -1, in->target);		  /* pushed: as good as inside the callee */
	emit_jmp(r, at, in->target);
}

static int emit_riprel(struct x86_reloc *r, uint64_t at, int idx, const struct x86_insn *in,
		       const uint8_t *bytes)
{
	int32_t disp;

	if (!x86_rel32(at + r->len + in->len, in->target, &disp))
		return -ERANGE;
	add_map(r, idx, in->addr);
	memcpy(r->code + r->len, bytes, in->len);
	x86_put32(r->code + r->len + in->disp_off, disp);
	r->len += in->len;
	return 0;
}

int x86_relocate(const struct arch_site_plan *plan, uint64_t at, struct x86_reloc *r)
{
	struct x86_insn in;
	int i, off, end, rc;

	memset(r, 0, sizeof(*r));
	if (plan->ninsns < 1 || plan->ninsns > ARCH_MAX_INSNS || plan->orig_len < 1 ||
	    plan->orig_len > ARCH_MAX_DISPLACED)
		return -EINVAL;
	for (i = 0; i < plan->ninsns; i++) {
		off = plan->insn_off[i];
		end = i + 1 < plan->ninsns ? plan->insn_off[i + 1] : plan->orig_len;
		if (off >= end || end > plan->orig_len)
			return -EINVAL;
		rc = x86_insn_decode(plan->orig + off, end - off, plan->site + off, &in);
		/* the last one may be followed by alignment fill (cover_with_fill) */
		if (rc < 0 || (in.len != end - off && (i + 1 < plan->ninsns || !in.ends_flow)))
			return -EINVAL;
		switch (in.kind) {
		case X86_PLAIN:
			add_map(r, i, in.addr);
			memcpy(r->code + r->len, plan->orig + off, in.len);
			r->len += in.len;
			break;
		case X86_RIPREL:
			rc = emit_riprel(r, at, i, &in, plan->orig + off);
			if (rc < 0)
				return rc;
			break;
		case X86_JMP:
			add_map(r, i, in.addr);
			emit_jmp(r, at, in.target);
			break;
		case X86_JCC:
			emit_jcc(r, at, i, &in);
			break;
		case X86_CALL:
			emit_call(r, at, i, &in);
			break;
		case X86_BAD:
			return -ENOTSUP;
		}
	}
	add_map(r, -1, plan->site + plan->orig_len);
	emit_jmp(r, at, plan->site + plan->orig_len);
	return 0;
}
