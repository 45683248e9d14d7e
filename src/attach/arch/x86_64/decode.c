/*
 * decode.c - x86-64 instruction decoding (Zydis 4) and probe-site planning.
 *
 * Where it sits: attach resolves a probe to a function (address and ELF
 * symbol size), reads the function's bytes from the target and calls
 * arch_plan_site() before any byte changes.  The plan says whether the
 * site gets a 5-byte `jmp rel32` into a trampoline (tramp.c, with the
 * displaced instructions relocated by reloc.c) or falls back to an int3
 * handled inside the target, and why.
 *
 * Example: gcc -O2 compiles `int work(int x){return x*3+g_bias;}` to
 *
 *   work+0x0: 8d 04 7f              lea  (%rdi,%rdi,2),%eax
 *   work+0x3: 03 05 xx xx xx xx     add  g_bias(%rip),%eax
 *   work+0x9: c3                    ret
 *
 * The jmp needs 5 bytes, so it displaces the lea and the whole add (9
 * bytes, 2 instructions); the add is RIP-relative, which reloc.c handles
 * by rewriting its disp32.  The jmp is refused when some branch in the
 * function lands at work+0x1..0x8 (it would land in the middle of the
 * jmp), or when a displaced instruction cannot be moved exactly.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "x86.h"

#define JMP_LEN 5 /* e9 rel32 */

/* The relative-branch part of classification: jmp, call, jcc, and the refused rest. */
static void classify_branch(const ZydisDecodedInstruction *in, struct x86_insn *out)
{
	bool jcc8 = in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (in->opcode & 0xf0) == 0x70;
	bool jcc32 = in->opcode_map == ZYDIS_OPCODE_MAP_0F && (in->opcode & 0xf0) == 0x80;

	out->is_branch = true;
	if (in->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE) {
		/* 66 e9 rel16: Intel ignores the prefix, AMD truncates rip to 16 bits. */
		out->kind = X86_BAD;
		out->bad = "a relative branch with an operand-size prefix behaves differently on "
			   "Intel and AMD";
		return;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		out->kind = X86_JMP;
		return;
	case ZYDIS_MNEMONIC_CALL:
		out->kind = X86_CALL;
		return;
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JCXZ:
		out->kind = X86_BAD;
		out->bad = "it has only a rel8 form, which cannot reach back from a trampoline";
		return;
	case ZYDIS_MNEMONIC_XBEGIN:
		out->kind = X86_BAD;
		out->bad = "a transaction's abort address is not relocated";
		return;
	default:
		break;
	}
	if (jcc8 || jcc32) {
		out->kind = X86_JCC;
		out->cc = in->opcode & 0x0f;
		return;
	}
	out->kind = X86_BAD;
	out->bad = "it has a relative operand of an unknown kind";
}

static bool is_sp(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_RSP || r == ZYDIS_REGISTER_ESP || r == ZYDIS_REGISTER_SP ||
	       r == ZYDIS_REGISTER_SPL;
}

/*
 * call *%r12, call *8(%rax), call *f@GOTPCREL(%rip) (ff /2): reloc.c
 * pushes the original return address and runs the same instruction as a
 * jmp (ff /4), so that the callee returns into the program, not into the
 * trampoline that detach unmaps.  That is exact only when the push does
 * not change the operand: an operand that reads %rsp is refused.
 */
static void classify_icall(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			   uint64_t addr, struct x86_insn *out)
{
	const ZydisDecodedOperand *op = &ops[0];

	out->kind = X86_BAD;
	if (in->opcode_map != ZYDIS_OPCODE_MAP_DEFAULT || in->opcode != 0xff ||
	    in->raw.modrm.reg != 2) {
		out->bad = "a far call also pushes %cs";
		return;
	}
	if (in->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE) {
		out->bad = "an indirect call with an operand-size prefix behaves differently on "
			   "Intel and AMD";
		return;
	}
	if (in->operand_count_visible < 1 ||
	    (op->type != ZYDIS_OPERAND_TYPE_REGISTER && op->type != ZYDIS_OPERAND_TYPE_MEMORY)) {
		out->bad = "its operand is of an unknown kind";
		return;
	}
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER ? is_sp(op->reg.value)
						    : is_sp(op->mem.base) || is_sp(op->mem.index)) {
		out->bad = "its operand reads %rsp, which the pushed return address changes";
		return;
	}
	if (op->type == ZYDIS_OPERAND_TYPE_MEMORY && op->mem.base == ZYDIS_REGISTER_EIP) {
		out->bad = "it addresses memory through %eip";
		return;
	}
	if (op->type == ZYDIS_OPERAND_TYPE_MEMORY && op->mem.base == ZYDIS_REGISTER_RIP) {
		if (in->raw.disp.size != 32) {
			out->bad = "its rip-relative displacement is not 32 bits";
			return;
		}
		out->disp_off = in->raw.disp.offset;
		out->target = addr + in->length + (uint64_t)in->raw.disp.value;
		out->icall_riprel = true;
	}
	out->kind = X86_ICALL;
	out->modrm_off = in->raw.modrm.offset;
}

int x86_insn_decode(const uint8_t *p, size_t avail, uint64_t addr, struct x86_insn *out)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZyanStatus st;
	int i;

	memset(out, 0, sizeof(*out));
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	st = ZydisDecoderDecodeFull(&dec, p, avail, &in, ops);
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return -ENODATA;
	if (!ZYAN_SUCCESS(st))
		return -EINVAL;

	out->addr = addr;
	out->len = in.length;
	out->kind = X86_PLAIN;
	out->mnemonic = ZydisMnemonicGetString(in.mnemonic);
	out->ends_flow = in.mnemonic == ZYDIS_MNEMONIC_RET || in.mnemonic == ZYDIS_MNEMONIC_JMP ||
			 in.mnemonic == ZYDIS_MNEMONIC_UD2 || in.mnemonic == ZYDIS_MNEMONIC_HLT;
	out->is_fill = in.mnemonic == ZYDIS_MNEMONIC_NOP || in.mnemonic == ZYDIS_MNEMONIC_INT3;

	for (i = 0; i < 2; i++) {
		if (!in.raw.imm[i].is_relative)
			continue;
		out->target = addr + in.length + (uint64_t)in.raw.imm[i].value.s;
		classify_branch(&in, out);
		return 0;
	}
	if (in.mnemonic == ZYDIS_MNEMONIC_CALL) {
		classify_icall(&in, ops, addr, out);
		return 0;
	}
	for (i = 0; i < in.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		if (op->mem.base == ZYDIS_REGISTER_EIP) {
			out->kind = X86_BAD;
			out->bad = "it addresses memory through %eip";
			return 0;
		}
		if (op->mem.base != ZYDIS_REGISTER_RIP) {
			out->indirect_jmp = in.mnemonic == ZYDIS_MNEMONIC_JMP;
			continue;
		}
		if (in.raw.disp.size != 32) {
			out->kind = X86_BAD;
			out->bad = "its rip-relative displacement is not 32 bits";
			return 0;
		}
		out->kind = X86_RIPREL;
		out->disp_off = in.raw.disp.offset;
		out->target = addr + in.length + (uint64_t)in.raw.disp.value;
		return 0;
	}
	if (in.mnemonic == ZYDIS_MNEMONIC_JMP && in.operand_count > 0 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
		out->indirect_jmp = true; /* jmp *%rax: a jump table, or a computed goto */
	if (in.mnemonic == ZYDIS_MNEMONIC_INT3) {
		/* Another tool's breakpoint (a debugger, a tracer): its owner would lose it. */
		out->kind = X86_BAD;
		out->bad = "it is a breakpoint, probably another tool's";
		return 0;
	}
	if (in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) {
		/* Zydis sees something position-dependent that neither check above named. */
		out->kind = X86_BAD;
		out->bad = "it has a position-dependent operand of an unknown kind";
	}
	return 0;
}

/*
 * Falls back to int3: only the first instruction is displaced (the int3
 * replaces its first byte, and the runtime runs a relocated copy of it
 * out of line, which arch_emit_trampoline() also builds for such a plan).
 */
void x86_plan_int3(struct arch_site_plan *plan, const struct x86_insn *first, const char *fmt, ...)
{
	va_list ap;

	plan->kind = ARCH_PATCH_INT3;
	plan->mid_cover = 0; /* the int3 covers no other location */
	plan->nredirs = 0;   /* nor needs a branch moved */
	plan->nhops = 0;
	plan->short_jmp = false;
	plan->orig_len = first->len;
	plan->ninsns = 1;
	plan->insn_off[0] = 0;
	memset(plan->orig + first->len, 0, sizeof(plan->orig) - first->len);
	va_start(ap, fmt);
	vsnprintf(plan->why, sizeof(plan->why), fmt, ap);
	va_end(ap);
}

int arch_branches_out(const uint8_t *code, size_t len, uint64_t addr, uint64_t *out, int max)
{
	struct x86_insn insn;
	int n = 0;
	for (size_t off = 0; off < len; off += insn.len) {
		if (x86_insn_decode(code + off, len - off, addr + off, &insn) < 0)
			break;
		if (!insn.is_branch || insn.kind == X86_RIPREL ||
		    (insn.target >= addr && insn.target < addr + len))
			continue;
		if (n < max)
			out[n] = insn.target;
		n++;
	}
	return n;
}

void arch_plan_to_int3(struct arch_site_plan *plan, const char *fmt, ...)
{
	va_list ap;
	int first = plan->ninsns > 1 ? plan->insn_off[1] : plan->orig_len;

	if (plan->mid_at) {
		/* the jump started before the location: the int3 goes on the
		 * location itself, whose handlers then run before it as usual */
		int at = plan->mid_at, end = plan->ninsns > 2 ? plan->insn_off[2] : plan->orig_len;
		memmove(plan->orig, plan->orig + at, (size_t)(end - at));
		first = end - at;
		plan->site += (uint64_t)at;
		plan->mid_at = 0;
		plan->mid_after = 0;
		memset(plan->mid_hoff, 0, sizeof(plan->mid_hoff));
	}
	plan->kind = ARCH_PATCH_INT3;
	plan->nredirs = 0;
	plan->nhops = 0;
	plan->short_jmp = false;
	plan->orig_len = first;
	plan->ninsns = 1;
	plan->insn_off[0] = 0;
	memset(plan->orig + first, 0, sizeof(plan->orig) - (size_t)first);
	va_start(ap, fmt);
	vsnprintf(plan->why, sizeof(plan->why), fmt, ap);
	va_end(ap);
}

/*
 * Does a branch in insn land strictly inside the displaced bytes?  Fills
 * why if so.  A branch to the site itself is fine: it runs the jmp, and so
 * the probe, again, as a kernel uprobe at that address would fire again.
 */
static bool lands_inside(struct arch_site_plan *plan, const struct x86_insn *insn,
			 uint64_t func_addr, const struct x86_insn *first)
{
	uint64_t s = plan->site;

	if (!insn->is_branch || insn->target <= s || insn->target >= s + plan->orig_len)
		return false;
	x86_plan_int3(plan, first,
		  "branch at func+0x%llx targets func+0x%llx, inside the %d patched bytes",
		  (unsigned long long)(insn->addr - func_addr),
		  (unsigned long long)(insn->target - func_addr), plan->orig_len);
	return true;
}

/*
 * Decodes [func_addr, func_addr + func_len) in one linear sweep and
 * refuses the jmp if any relative branch lands inside the displaced
 * bytes.  A sweep that meets bytes it cannot decode cannot rule such a
 * branch out (it has lost the instruction stream), so that is an int3 too.
 * Indirect branches (jump tables) cannot be checked; compilers do not
 * make a function's entry bytes a switch case, so at an entry that risk is
 * accepted.
 */
static void check_branches(const uint8_t *code, size_t func_len, uint64_t func_addr,
			   struct arch_site_plan *plan, const struct x86_insn *first)
{
	struct x86_insn insn;
	size_t off = 0;
	int rc;

	while (off < func_len) {
		rc = x86_insn_decode(code + off, func_len - off, func_addr + off, &insn);
		if (rc == -ENODATA)
			return; /* a truncated tail (symbol size ends in padding): never runs */
		if (rc < 0) {
			x86_plan_int3(plan, first,
				  "cannot decode func+0x%zx, so a branch into the %d patched bytes "
				  "cannot be ruled out",
				  off, plan->orig_len);
			return;
		}
		if (lands_inside(plan, &insn, func_addr, first))
			return;
		off += insn.len;
	}
}

/*
 * Only function entries are supported (site == func_addr).  A site in the
 * middle of a function (a USDT location) will need more from the
 * trampoline: the code there may keep data in the red zone, 128 bytes
 * below %rsp, which the trampoline's pushes would overwrite (step over it
 * with `lea -128(%rsp),%rsp` first); %rsp has no known alignment (save it
 * and `and $-16,%rsp` before the calls); the flags may be live (pushfq /
 * popfq); and struct rt_regs' `ret` is not a return address there.  The
 * branch check below already covers any site.
 *
 * func_len == 0 means the size is unknown (a symbol without st_size).  The
 * caller must then supply at least ARCH_MAX_DISPLACED readable bytes; only
 * the displaced instructions are decoded, so branches from the rest of the
 * function cannot be checked, and the jmp is still planned (a function
 * shorter than the jmp would be overwritten past its end: attach should
 * warn about probes on functions of unknown size).
 */
/*
 * A function shorter than the jmp (`lea (%rdi,%rdi,2),%eax; ret` is 4
 * bytes) can still take one when its last instruction never falls through
 * and the bytes after it, up to the jmp's end, are the nop or int3 fill
 * compilers put between aligned functions: that fill is never executed and
 * no symbol starts in it (the caller's pad_len guarantees the latter).
 * Returns true and completes the plan when that is so.
 */
static bool cover_with_fill(const uint8_t *code, size_t func_len, size_t pad_len,
			    const struct x86_insn *last, struct arch_site_plan *plan)
{
	size_t off = func_len;
	if (!last->ends_flow || func_len + pad_len < JMP_LEN)
		return false;
	while (off < JMP_LEN) {
		struct x86_insn fill;
		if (x86_insn_decode(code + off, func_len + pad_len - off, plan->site + off, &fill) ||
		    !fill.is_fill)
			return false;
		off += fill.len;
	}
	plan->orig_len = JMP_LEN;
	memcpy(plan->orig, code, JMP_LEN);
	return true;
}

int arch_plan_site(const uint8_t *code, size_t func_len, uint64_t func_addr, uint64_t site,
		   struct arch_site_plan *plan)
{
	return arch_plan_site_padded(code, func_len, 0, func_addr, site, plan);
}

int arch_plan_site_padded(const uint8_t *code, size_t func_len, size_t pad_len,
			  uint64_t func_addr, uint64_t site, struct arch_site_plan *plan)
{
	struct x86_insn insn[ARCH_MAX_INSNS];
	size_t avail = func_len ? func_len : ARCH_MAX_DISPLACED;
	size_t off = 0;
	int n = 0, rc, i;

	memset(plan, 0, sizeof(*plan));
	plan->site = site;
	plan->kind = ARCH_PATCH_JMP;
	if (site != func_addr)
		return -ENOTSUP;

	rc = x86_insn_decode(code, avail, site, &insn[0]);
	if (rc < 0)
		return -EINVAL;
	memcpy(plan->orig, code, insn[0].len);

	while (off < JMP_LEN) {
		if (n > 0) {
			rc = x86_insn_decode(code + off, avail - off, site + off, &insn[n]);
			if (rc == -ENODATA && func_len) {
				x86_plan_int3(
				    plan, &insn[0],
				    "the function is %zu bytes long, too short for the %d-byte jmp",
				    func_len, JMP_LEN);
				return 0;
			}
			if (rc < 0) {
				x86_plan_int3(plan, &insn[0], "cannot decode func+0x%zx", off);
				return 0;
			}
		}
		plan->insn_off[n] = off;
		off += insn[n].len;
		n++;
		if (off < JMP_LEN && insn[n - 1].kind == X86_ICALL) {
			/* as at a mid-function site (mid.c): it would return into the jmp */
			x86_plan_int3(plan, &insn[0],
				      "the call at func+0x%x returns to func+0x%zx, inside the "
				      "patched bytes",
				      plan->insn_off[n - 1], off);
			return 0;
		}
		if (off < JMP_LEN && off >= avail && func_len &&
		    cover_with_fill(code, func_len, pad_len, &insn[n - 1], plan)) {
			plan->ninsns = n;
			goto check;
		}
		if (off < JMP_LEN && off >= avail) {
			x86_plan_int3(plan, &insn[0],
				  "the function is %zu bytes long, too short for the %d-byte jmp",
				  func_len, JMP_LEN);
			return 0;
		}
	}
	/* At most 4 + 15 bytes and 5 instructions: within ARCH_MAX_DISPLACED / ARCH_MAX_INSNS. */
	plan->ninsns = n;
	plan->orig_len = off;
	memcpy(plan->orig, code, off);
check:
	for (i = 0; i < n; i++) {
		if (insn[i].kind != X86_BAD)
			continue;
		x86_plan_int3(plan, &insn[0], "%s at func+0x%x cannot be relocated: %s",
			  insn[i].mnemonic, plan->insn_off[i], insn[i].bad);
		return 0;
	}
	if (func_len) {
		check_branches(code, func_len, func_addr, plan, &insn[0]);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (lands_inside(plan, &insn[i], func_addr, &insn[0]))
			return 0;
	return 0;
}

/*
 * One instruction as text in AT&T syntax (objdump's, GNU as's), for
 * `--dump sites`: "" and -EINVAL when the bytes do not decode.
 */
int arch_insn_text(const uint8_t *code, size_t len, uint64_t addr, char *buf, size_t n)
{
	ZydisDecoder dec;
	ZydisFormatter fmt;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	if (n)
		buf[0] = '\0';
	if (ZYAN_FAILED(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    ZYAN_FAILED(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_ATT)) ||
	    ZYAN_FAILED(ZydisDecoderDecodeFull(&dec, code, len, &in, ops)) ||
	    ZYAN_FAILED(ZydisFormatterFormatInstruction(&fmt, &in, ops, in.operand_count_visible,
							buf, n, addr, ZYAN_NULL)))
		return -EINVAL;
	return 0;
}
