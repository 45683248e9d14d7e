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
 *   call *op  (ff /2: register,      ff 35 [lit] (push the original return
 *   memory, [rip+d]; not through     address) then the same bytes as a jmp
 *   %rsp)                            (ModRM.reg 2 -> 4: ff /4), d rewritten
 *                                    for [rip+d]; a thread stopped between
 *                                    the two maps back to the call with
 *                                    %rsp 8 higher
 *   (end)                            jmp site + orig_len, rel32 or absolute
 *
 * [lit] is a disp32 to a 64-bit constant in the code writer's literal
 * pool (writer.h), which the trampoline places after its code.
 */
#include <errno.h>
#include <string.h>

#include "writer.h"

struct copy {
	struct x86_writer *w;
	size_t start; /* w->len where the copy begins */
	struct x86_reloc_map *m;
};

static void add_map(struct copy *c, int insn, uint64_t orig)
{
	struct x86_pc_map *pm;

	if (!c->m)
		return;
	pm = &c->m->map[c->m->nmap++];
	pm->off = (uint16_t)(c->w->len - c->start);
	pm->insn = (int16_t)insn;
	pm->orig = orig;
}

static void emit_jcc(struct copy *c, int idx, const struct x86_insn *in)
{
	struct x86_writer *w = c->w;

	add_map(c, idx, in->addr);
	if (x86_rel32(x86w_pc(w) + 6, in->target, NULL)) {
		x86w_rel32_to(w, (uint8_t[]){0x0f, 0x80 | in->cc}, 2, in->target);
		return;
	}
	/* The inverse condition (cc ^ 1) skips the 6-byte absolute jmp. */
	x86w_put(w, (uint8_t[]){0x70 | (in->cc ^ 1), 6}, 2);
	add_map(c, -1, in->target); /* here the branch is already taken */
	x86w_lit(w, "\xff\x25", 2, in->target);
}

static void emit_call(struct copy *c, int idx, const struct x86_insn *in)
{
	add_map(c, idx, in->addr);
	/* push lit(%rip): the original return address */
	x86w_lit(c->w, "\xff\x35", 2, in->addr + in->len);
	add_map(c, -1, in->target); /* pushed: as good as inside the callee */
	x86w_jmp(c->w, in->target);
}

/*
 * The ModRM.reg field (bits 5:3) alone tells `call *op` (2) from `jmp *op`
 * (4) for the same prefixes, REX and operand, so the copy jumps through
 * the very operand the program named, after pushing what the call would
 * have pushed.
 */
static int emit_icall(struct copy *c, int idx, const struct x86_insn *in, const uint8_t *bytes)
{
	struct x86_writer *w = c->w;
	uint8_t jmp[15];
	int32_t disp = 0;

	if (in->len > sizeof(jmp) || in->modrm_off >= in->len ||
	    (in->icall_riprel && in->disp_off + 4u > in->len))
		return -EINVAL;
	/* the jmp starts after the 6-byte push */
	if (in->icall_riprel && !x86_rel32(x86w_pc(w) + 6 + in->len, in->target, &disp))
		return -ERANGE;
	memcpy(jmp, bytes, in->len);
	jmp[in->modrm_off] = (uint8_t)((jmp[in->modrm_off] & ~0x38) | (4 << 3));
	if (in->icall_riprel)
		memcpy(jmp + in->disp_off, &disp, 4);
	add_map(c, idx, in->addr);
	x86w_lit(w, "\xff\x35", 2, in->addr + in->len);
	add_map(c, -1, in->addr); /* pushed: the call not yet made, %rsp 8 lower */
	if (c->m)
		c->m->map[c->m->nmap - 1].sp_add = 8;
	x86w_put(w, jmp, in->len);
	return 0;
}

/* The same bytes with the disp32 at disp_off rewritten. */
static int emit_riprel(struct copy *c, int idx, const struct x86_insn *in, const uint8_t *bytes)
{
	struct x86_writer *w = c->w;
	int32_t disp;

	if (!x86_rel32(x86w_pc(w) + in->len, in->target, &disp))
		return -ERANGE;
	add_map(c, idx, in->addr);
	x86w_put(w, bytes, in->disp_off);
	x86w_u32(w, (uint32_t)disp);
	x86w_put(w, bytes + in->disp_off + 4, in->len - in->disp_off - 4u);
	return 0;
}

static int emit_insn(struct copy *c, int idx, const struct x86_insn *in, const uint8_t *bytes)
{
	switch (in->kind) {
	case X86_PLAIN:
		add_map(c, idx, in->addr);
		x86w_put(c->w, bytes, in->len);
		return 0;
	case X86_RIPREL:
		return emit_riprel(c, idx, in, bytes);
	case X86_JMP:
		add_map(c, idx, in->addr);
		x86w_jmp(c->w, in->target);
		return 0;
	case X86_JCC:
		emit_jcc(c, idx, in);
		return 0;
	case X86_CALL:
		emit_call(c, idx, in);
		return 0;
	case X86_ICALL:
		return emit_icall(c, idx, in, bytes);
	case X86_BAD:
		break;
	}
	return -ENOTSUP;
}

int x86_relocate(const struct arch_site_plan *plan, struct x86_writer *w, struct x86_reloc_map *m)
{
	return x86_relocate_after(plan, w, m, NULL, NULL);
}

/*
 * A system call's site (mid.c): the handlers after the first instruction
 * (the `syscall`) see its result.  A thread the kernel leaves right after
 * that instruction (blocked in the call at attach, pc = site + 2) maps to
 * the start of those calls, so that a restart (pc - 2) lands on the
 * relocated `syscall`; the map's first entry for an instruction is the one
 * the pc is moved to (arch_pc_into_copy).
 */
static void after_first(struct copy *c, const struct arch_site_plan *plan, const uint64_t *after,
			const uint32_t *ids)
{
	add_map(c, 1, plan->site + (plan->ninsns > 1 ? plan->insn_off[1] : plan->orig_len));
	x86_mid_after(c->w, plan, after, ids);
}

int x86_relocate_after(const struct arch_site_plan *plan, struct x86_writer *w,
		       struct x86_reloc_map *m, const uint64_t *after, const uint32_t *ids)
{
	struct copy c = {w, w->len, m};
	struct x86_insn in;
	int i, off, end, rc;

	if (m)
		memset(m, 0, sizeof(*m));
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
		rc = emit_insn(&c, i, &in, plan->orig + off);
		if (rc < 0)
			return rc;
		if (i == 0 && plan->mid && plan->mid_after)
			after_first(&c, plan, after, ids);
	}
	add_map(&c, -1, plan->site + plan->orig_len);
	x86w_jmp(w, plan->site + plan->orig_len);
	if (m)
		m->len = (int)(w->len - c.start);
	return 0;
}

int x86_reloc_map(const struct arch_site_plan *plan, uint64_t at, struct x86_reloc_map *m)
{
	struct x86_writer w;

	x86w_init(&w, NULL, 0, at);
	return x86_relocate(plan, &w, m);
}
