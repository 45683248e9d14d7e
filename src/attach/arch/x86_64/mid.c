/*
 * mid.c - x86-64 probe sites in the middle of a function (USDT locations):
 * planning the patch and emitting the trampoline.
 *
 * Where it sits: attach (usdt.c, session.c) plans every USDT location with
 * arch_plan_mid_site(); tramp.c's arch_emit_trampoline() and pc mapping
 * hand plans with plan->mid set to this file's layout.  Relocation of the
 * displaced instructions is reloc.c's, as for function entries.
 *
 * A USDT location is a 1-byte `nop` (sys/sdt.h) followed by ordinary code,
 * so a 5-byte jmp displaces the nop and the instructions after it.  What
 * is different from a function entry, and what the trampoline does about
 * it:
 *
 *   - the code may keep data in the red zone, the 128 bytes below %rsp
 *     (gcc -O2 put `ubt:stack`'s arguments at -88(%rsp)..-16(%rsp)): the
 *     trampoline's first instruction steps over it, and it stores
 *     registers with mov, never below that;
 *   - any register may hold an argument: the ones the handlers read
 *     (plan->mid_read, from the USDT argument specs) are stored into a
 *     struct rt_regs_mid, with the stack pointer as the code had it; the
 *     handlers (abi.h: preserve_most probe code) keep every register but
 *     %r11, so nothing else needs saving, and the argument registers reach
 *     them unchanged (arg0 of a `uprobe:BIN:FUNC+OFF` is %rdi at OFF);
 *   - %rsp has no known alignment: it is aligned to 16 for the calls, and
 *     the block's address is pushed twice, so that it is the first word of
 *     the handlers' frame (abi.h) and the alignment is kept;
 *   - the flags may be live (an asm statement clobbers them as far as the
 *     compiler knows, but that is the compiler's promise, not the CPU's):
 *     saved with lahf + seto and restored with add + sahf, a few cycles,
 *     where pushfq/popfq would cost tens.  DF is clear (the ABI requires it
 *     wherever a call may happen, and handlers never set it).
 *
 * Trampoline layout (F = sizeof(struct rt_regs_mid) = 144):
 *
 *   lea -(128+F)(%rsp),%rsp           skip the red zone, make the block
 *   mov %rax,RAX(%rsp); lahf; seto %al; mov %rax,FLAGS(%rsp)
 *   mov %r11,R11(%rsp)
 *   mov %REG,REG(%rsp)                each register in mid_read
 *   [lea 128+F(%rsp),%rax; mov %rax,RSP(%rsp)]   if %rsp is read
 *   [lea site(%rip),%rax; mov %rax,PC(%rsp)]      if %rip is (g(%rip) operands)
 *   mov %rsp,%rax; and $-16,%rsp; push %rax; push %rax
 *   { nop; call h } per handler (or call *lit(%rip))
 *   mov (%rsp),%rsp
 *   mov FLAGS(%rsp),%rax; add $0x7f,%al; sahf      OF from al, the rest from ah
 *   mov R11(%rsp),%r11; mov RAX(%rsp),%rax
 *   lea 128+F(%rsp),%rsp
 *   displaced instructions, relocated; jmp site + orig_len
 *   literal pool
 *
 * Every piece has a fixed size, so the relocated copy starts at
 * x86_mid_head_len(n), as the pc mapping needs.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "runtime/abi.h"
#include "writer.h"

#define JMP_LEN 5
#define FRAME ((int32_t)sizeof(struct rt_regs_mid))
#define RED_ZONE 128
#define CALL_LEN 6 /* nop; call rel32 or call *lit(%rip) */

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };

/* The registers a USDT argument may be read from, apart from rax, r11 and rsp. */
static const struct {
	uint8_t reg;
	uint8_t off;
} saved[] = {
	{RCX, offsetof(struct rt_regs_mid, rcx)}, {RDX, offsetof(struct rt_regs_mid, rdx)},
	{RSI, offsetof(struct rt_regs_mid, rsi)}, {RDI, offsetof(struct rt_regs_mid, rdi)},
	{R8, offsetof(struct rt_regs_mid, r8)},	  {R9, offsetof(struct rt_regs_mid, r9)},
	{R10, offsetof(struct rt_regs_mid, r10)}, {RBX, offsetof(struct rt_regs_mid, rbx)},
	{RBP, offsetof(struct rt_regs_mid, rbp)}, {R12, offsetof(struct rt_regs_mid, r12)},
	{R13, offsetof(struct rt_regs_mid, r13)}, {R14, offsetof(struct rt_regs_mid, r14)},
	{R15, offsetof(struct rt_regs_mid, r15)},
};

/* REX.W, with REX.R for r8-r15 in the ModRM reg field */
static uint8_t rex_w(int reg) { return 0x48 | (reg >= 8 ? 4 : 0); }

/* mov %reg,off(%rsp) (store) or mov off(%rsp),%reg (load) */
static void mov_rsp(struct x86_writer *w, bool store, int reg, int32_t off)
{
	x86w_put(w, (uint8_t[]){rex_w(reg), store ? 0x89 : 0x8b}, 2);
	if (off >= -128 && off < 128) {
		x86w_put(w, (uint8_t[]){0x44 | ((reg & 7) << 3), 0x24, (uint8_t)off}, 3);
	} else {
		x86w_put(w, (uint8_t[]){0x84 | ((reg & 7) << 3), 0x24}, 2);
		x86w_u32(w, (uint32_t)off);
	}
}

/* lea off(%rsp),%reg */
static void lea_rsp(struct x86_writer *w, int reg, int32_t off)
{
	x86w_put(w, (uint8_t[]){rex_w(reg), 0x8d, 0x84 | ((reg & 7) << 3), 0x24}, 4);
	x86w_u32(w, (uint32_t)off);
}

#define NSAVED (sizeof(saved) / sizeof(saved[0]))

static bool reads(const struct arch_site_plan *plan, unsigned off)
{
	return plan->mid_read >> (off / 8) & 1;
}

static void emit_save(struct x86_writer *w, const struct arch_site_plan *plan)
{
	lea_rsp(w, RSP, -(RED_ZONE + FRAME));
	mov_rsp(w, true, RAX, offsetof(struct rt_regs_mid, rax));
	X86W_PUT(w, "\x9f\x0f\x90\xc0"); /* lahf; seto %al */
	mov_rsp(w, true, RAX, offsetof(struct rt_regs_mid, flags));
	mov_rsp(w, true, R11, offsetof(struct rt_regs_mid, r11));
	for (size_t i = 0; i < NSAVED; i++)
		if (reads(plan, saved[i].off))
			mov_rsp(w, true, saved[i].reg, saved[i].off);
	if (reads(plan, offsetof(struct rt_regs_mid, rsp))) {
		lea_rsp(w, RAX, RED_ZONE + FRAME);
		mov_rsp(w, true, RAX, offsetof(struct rt_regs_mid, rsp));
	}
	if (reads(plan, offsetof(struct rt_regs_mid, pc))) { /* a %rip-relative argument */
		x86w_rel32_to(w, "\x48\x8d\x05", 3, plan->site); /* lea site(%rip),%rax */
		mov_rsp(w, true, RAX, offsetof(struct rt_regs_mid, pc));
	}
	/* mov %rsp,%rax; and $-16,%rsp; push %rax; push %rax */
	X86W_PUT(w, "\x48\x89\xe0\x48\x83\xe4\xf0\x50\x50");
}

static void emit_restore(struct x86_writer *w)
{
	X86W_PUT(w, "\x48\x8b\x24\x24"); /* mov (%rsp),%rsp */
	mov_rsp(w, false, RAX, offsetof(struct rt_regs_mid, flags));
	X86W_PUT(w, "\x04\x7f\x9e"); /* add $0x7f,%al; sahf */
	mov_rsp(w, false, R11, offsetof(struct rt_regs_mid, r11));
	mov_rsp(w, false, RAX, offsetof(struct rt_regs_mid, rax));
	lea_rsp(w, RSP, RED_ZONE + FRAME);
}

size_t x86_mid_head_len(const struct arch_site_plan *plan, int nhandlers)
{
	struct x86_writer w;

	x86w_init(&w, NULL, 0, plan->site); /* a dry run: the lengths only */
	emit_save(&w, plan);
	emit_restore(&w);
	return w.len + (size_t)CALL_LEN * (nhandlers - plan->mid_after);
}

/*
 * A system call's site (resolve/syscalls.c) whose patch covers the
 * `syscall` itself: the enter side's handlers run before it, as at any
 * site, and the exit side's here, right after the relocated `syscall`,
 * with the same frame, so that they read its result in %rax.  Nothing of
 * ours is on the stack across the call: a clone child returns here on
 * its new stack, and a restarted call (pc - 2) finds the `syscall`.
 *
 *   [save; call enter handlers; restore]   (the head)
 *   syscall                                (relocated: the same 2 bytes)
 *   save; call exit handlers; restore      (here; after NULL: a dry run)
 *   the other displaced instructions; jmp back
 */
void x86_mid_after(struct x86_writer *w, const struct arch_site_plan *plan, const uint64_t *after)
{
	emit_save(w, plan);
	for (int i = 0; i < plan->mid_after; i++)
		x86w_call6(w, after ? after[i] : 0);
	emit_restore(w);
}

size_t arch_trampoline_mid_max(int nhandlers)
{
	struct arch_site_plan all = {.mid = true, .mid_read = ~0u};
	if (nhandlers < 0)
		nhandlers = 0;
	/* and a second save and restore for the calls after the first instruction */
	return 2 * x86_mid_head_len(&all, nhandlers) + X86_RELOC_CODE_MAX + 7 +
	       8 * ((size_t)nhandlers + X86_RELOC_LIT_MAX);
}

int x86_mid_emit(const struct arch_site_plan *plan, uint64_t tramp_addr, const uint64_t *handlers,
		 int nhandlers, uint8_t *buf, size_t cap, size_t *len)
{
	struct x86_writer w;
	int rc;

	if (nhandlers < 0 || (nhandlers > 0 && !handlers) || plan->mid_after > nhandlers)
		return -EINVAL;
	int before = nhandlers - plan->mid_after;
	x86w_init(&w, buf, cap, tramp_addr);
	emit_save(&w, plan);
	for (int i = 0; i < before; i++)
		x86w_call6(&w, handlers[i]);
	emit_restore(&w);
	if (w.len != x86_mid_head_len(plan, nhandlers))
		return -EINVAL; /* the layout above and x86_mid_head_len() disagree */
	rc = x86_relocate_after(plan, &w, NULL, handlers + before);
	return rc < 0 ? rc : x86w_finish(&w, len);
}

/* ---- planning --------------------------------------------------------- */

/*
 * The function is swept linearly from its start, which both proves the
 * site is an instruction boundary and finds every direct branch.  The
 * jmp is refused (int3 instead) when:
 *   - the displaced bytes would run past the function's end;
 *   - a displaced instruction cannot be relocated;
 *   - a branch in the function lands strictly inside them;
 *   - another probed site lies inside them (avoid[]);
 *   - a displaced instruction follows one that never falls through (it
 *     is reached only by a jump, perhaps an indirect one we cannot see);
 *   - the function has an indirect jmp that is not a tail call through
 *     memory (a switch's jump table may target any instruction, and a
 *     table's entries are not visible to a linear sweep).
 */
/*
 * false when decoding the function from its first byte steps over soff
 * without starting an instruction there (FUNC+OFF inside an instruction).
 * Undecodable bytes before soff leave the question open (true): the
 * caller's own checks then pick the breakpoint or refuse.
 */
static bool mid_starts_insn(const uint8_t *code, size_t func_len, uint64_t func_addr,
			    size_t soff)
{
	struct x86_insn insn;
	size_t off = 0;
	while (off < soff) {
		if (x86_insn_decode(code + off, func_len - off, func_addr + off, &insn) < 0)
			return true;
		off += insn.len;
	}
	return off == soff;
}

int arch_plan_mid_site(const uint8_t *code, size_t func_len, uint64_t func_addr, uint64_t site,
		       const uint64_t *avoid, int navoid, struct arch_site_plan *plan)
{
	struct x86_insn first, insn;
	size_t soff = site - func_addr, off;
	int rc;
	bool indirect = false, boundary = false;

	memset(plan, 0, sizeof(*plan));
	plan->site = site;
	plan->mid = true;
	plan->kind = ARCH_PATCH_JMP;
	if (func_len && soff >= func_len)
		return -EINVAL;
	rc = x86_insn_decode(code + soff, (func_len ? func_len : ARCH_MAX_DISPLACED) - soff, site,
			     &first);
	if (rc < 0)
		return -EINVAL;
	memcpy(plan->orig, code + soff, first.len);
	if (!func_len) {
		x86_plan_int3(plan, &first, "the size of the function around it is unknown");
		return 0;
	}
	if (!mid_starts_insn(code, func_len, func_addr, soff))
		return -EINVAL; /* inside an instruction: neither a jmp nor an int3 may go there */
	/* displaced instructions */
	off = soff;
	plan->ninsns = 0;
	while (off - soff < JMP_LEN) {
		if (off >= func_len || plan->ninsns == ARCH_MAX_INSNS) {
			x86_plan_int3(plan, &first, "too close to the end of the function for a jmp");
			return 0;
		}
		rc = x86_insn_decode(code + off, func_len - off, func_addr + off, &insn);
		if (rc < 0) {
			x86_plan_int3(plan, &first, "cannot decode func+0x%zx", off);
			return 0;
		}
		if (insn.kind == X86_BAD) {
			x86_plan_int3(plan, &first, "%s at func+0x%zx cannot be relocated: %s",
				 insn.mnemonic, off, insn.bad);
			return 0;
		}
		if (plan->ninsns && insn.addr > site) {
			for (int i = 0; i < navoid; i++)
				if (avoid[i] == insn.addr) {
					x86_plan_int3(plan, &first,
						 "another probed site at func+0x%zx follows closely",
						 off);
					return 0;
				}
		}
		if (off + insn.len > func_len) {
			x86_plan_int3(plan, &first, "too close to the end of the function for a jmp");
			return 0;
		}
		plan->insn_off[plan->ninsns++] = (uint8_t)(off - soff);
		off += insn.len;
		if (off - soff < JMP_LEN && insn.ends_flow) {
			x86_plan_int3(plan, &first,
				 "func+0x%zx after it is reached only by a jump", off);
			return 0;
		}
	}
	plan->orig_len = (int)(off - soff);
	memcpy(plan->orig, code + soff, plan->orig_len);
	/* the whole function: boundaries and branch targets */
	for (off = 0; off < func_len;) {
		rc = x86_insn_decode(code + off, func_len - off, func_addr + off, &insn);
		if (rc == -ENODATA)
			break;
		if (rc < 0) {
			x86_plan_int3(plan, &first,
				 "cannot decode func+0x%zx, so a branch into the patched bytes "
				 "cannot be ruled out", off);
			return 0;
		}
		if (off == soff)
			boundary = true;
		if (insn.is_branch && insn.target > site && insn.target < site + plan->orig_len) {
			x86_plan_int3(plan, &first, "branch at func+0x%zx targets func+0x%llx, inside the "
				 "%d patched bytes", off,
				 (unsigned long long)(insn.target - func_addr), plan->orig_len);
			return 0;
		}
		if (insn.indirect_jmp)
			indirect = true;
		off += insn.len;
	}
	if (!boundary)
		return -EINVAL; /* the note does not point at an instruction */
	if (indirect) {
		x86_plan_int3(plan, &first, "the function has an indirect jump (a jump table may "
			 "target the patched bytes)");
		return 0;
	}
	return 0;
}
