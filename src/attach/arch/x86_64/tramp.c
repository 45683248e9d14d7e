/*
 * tramp.c - x86-64 trampolines, patch bytes and pc mapping.
 *
 * Where it sits: attach plans a site (decode.c), reserves
 * arch_trampoline_max() bytes of target code memory within
 * arch_near_window() of the site, calls arch_emit_trampoline() to fill
 * them, writes the trampoline into the target, moves threads out of the
 * displaced bytes with arch_pc_into_trampoline(), and finally writes
 * arch_patch_bytes() at the site.  Detach restores plan->orig and uses
 * arch_pc_from_trampoline() for threads inside a relocated copy.
 *
 * Trampoline layout (offsets for n handlers; every piece has a fixed size
 * so that the relocated copy always starts at HEAD_LEN(plan, n), which is
 * how the pc mapping finds it without knowing the handlers).  Handlers are
 * probe code in abi.h's handler convention: they keep every register but
 * %r11, take the argument registers as they are, and find %r11 and the
 * return address above their own return address (struct rt_entry_frame):
 *
 *   0            41 53             push %r11
 *   2 + 6k       90 e8 rel32       nop; call handler_k        (in rel32 reach)
 *             or ff 15 [lit]       call *lit(%rip)            (out of reach)
 *   2 + 6n       41 5b             pop  %r11
 *
 * With plan->call_ids (a probe compiled once for sites of different
 * `probe` names: abi.h, "Site ids") each call is followed by
 * `0f 1f 80 id32` (nopl id(%rax)), so calls are 13 bytes apart.
 *   HEAD_LEN     displaced instructions, relocated (reloc.c)
 *                jmp site + orig_len
 *   (8-aligned)  literal pool: 64-bit handler addresses and branch
 *                targets referenced as [rip + disp32] above; int3 padding
 *
 * A plan with c_abi set (the runtime's own handlers, gcc-built C) gets the
 * full save instead, and each handler is called as handler(&regs):
 *
 *   0            57 56 52 51 50 41 50 41 51 41 52 41 53
 *                push rdi rsi rdx rcx rax r8 r9 r10 r11   (13 bytes)
 *                memory from %rsp upward is now struct rt_regs:
 *                r11 r10 r9 r8 rax rcx rdx rsi rdi ret
 *   13 + 9k      48 89 e7          mov  %rsp,%rdi
 *                90 e8 rel32 / ff 15 [lit]                    call handler_k
 *   13 + 9n      41 5b 41 5a 41 59 41 58 58 59 5a 5e 5f
 *                pop r11 r10 r9 r8 rax rcx rdx rsi rdi    (13 bytes)
 *
 * Stack: at a function entry %rsp % 16 == 8 (the caller's call pushed the
 * return address); one push (or nine) makes it 0 mod 16, the alignment
 * the ABI wants at each `call handler`.  The flags are not saved: at a
 * function entry no flag is live (the ABI makes them caller-clobbered).
 * %r11 is saved although the ABI lets a function clobber it: gcc's
 * -fipa-ra lets a caller keep a value in a caller-saved register across a
 * call to a same-unit function known not to touch it.  SSE registers are
 * not saved either: handlers are built without SSE.
 */
#include <errno.h>
#include <string.h>

#include "writer.h"

#define SAVE_LEN 13
#define CALL_LEN 9 /* mov %rsp,%rdi + 6-byte call */
#define RESTORE_LEN 13
#define C_HEAD_LEN(n) ((size_t)SAVE_LEN + (size_t)CALL_LEN * (n) + RESTORE_LEN)
#define H_SAVE_LEN 2 /* push %r11 */
#define H_CALL_LEN(plan) (6 + ((plan)->call_ids ? X86_CALL_ID_LEN : 0))
#define H_HEAD_LEN(plan, n) ((size_t)H_SAVE_LEN + (size_t)H_CALL_LEN(plan) * (n) + 2)
#define HEAD_LEN(plan, n) ((plan)->c_abi ? C_HEAD_LEN(n) : H_HEAD_LEN(plan, n))
#define JMP_LEN 5
/* where the relocated copy starts: mid-function sites have their own layout (mid.c) */
#define HEAD(plan, n) ((plan)->mid ? x86_mid_head_len(plan, n) : HEAD_LEN(plan, n))

/* push rdi rsi rdx rcx rax r8 r9 r10 r11, and the pops in reverse */
static const uint8_t save_regs[SAVE_LEN + 1] =
    "\x57\x56\x52\x51\x50\x41\x50\x41\x51\x41\x52\x41\x53";
static const uint8_t restore_regs[RESTORE_LEN + 1] =
    "\x41\x5b\x41\x5a\x41\x59\x41\x58\x58\x59\x5a\x5e\x5f";

size_t arch_trampoline_max(int nhandlers)
{
	if (nhandlers < 0)
		nhandlers = 0;
	return C_HEAD_LEN(nhandlers) + X86_CALL_ID_LEN * (size_t)nhandlers + X86_RELOC_CODE_MAX +
	       7 + 8 * ((size_t)nhandlers + X86_RELOC_LIT_MAX);
}

/*
 * Also accepts an ARCH_PATCH_INT3 plan: its trampoline holds the
 * out-of-line copy of the first instruction that the int3 fallback
 * resumes in (found with arch_pc_into_trampoline(plan, ..., site)).
 */
int arch_emit_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr,
			 const uint64_t *handlers, int nhandlers, uint8_t *buf, size_t cap,
			 size_t *len)
{
	struct x86_writer w;
	int rc;

	if (plan->mid)
		return x86_mid_emit(plan, tramp_addr, handlers, nhandlers, buf, cap, len);
	if (nhandlers < 0 || (nhandlers > 0 && !handlers))
		return -EINVAL;
	x86w_init(&w, buf, cap, tramp_addr);
	if (plan->c_abi)
		x86w_put(&w, save_regs, SAVE_LEN);
	else
		X86W_PUT(&w, "\x41\x53"); /* push %r11 */
	for (int i = 0; i < nhandlers; i++) {
		if (plan->c_abi)
			X86W_PUT(&w, "\x48\x89\xe7"); /* mov %rsp,%rdi */
		x86w_call_handler(&w, handlers[i], plan->call_ids && !plan->c_abi,
				  plan->call_id[i]);
	}
	if (plan->c_abi)
		x86w_put(&w, restore_regs, RESTORE_LEN);
	else
		X86W_PUT(&w, "\x41\x5b"); /* pop %r11 */
	if (w.len != HEAD_LEN(plan, nhandlers))
		return -EINVAL; /* the layout above and HEAD_LEN() disagree */
	rc = x86_relocate(plan, &w, NULL);
	return rc < 0 ? rc : x86w_finish(&w, len);
}

/* Where a branch to target (inside the patched bytes) goes instead: its copy. */
static int copy_of(const struct arch_site_plan *plan, uint64_t copy_addr, uint64_t target,
		   uint64_t *to)
{
	struct x86_reloc_map m;
	int idx = -1, rc = x86_reloc_map(plan, copy_addr, &m);
	if (rc < 0)
		return rc;
	for (int i = 0; i < plan->ninsns; i++)
		if (plan->site + plan->insn_off[i] == target)
			idx = i;
	/* the last entry: a system call's exit handlers (mid_after) come
	 * before the second instruction's copy, and a branch that skipped
	 * the call must not run them; but where the location is after the
	 * jump's first instruction (plan->mid_at) those calls are its own
	 * handlers, and a branch to it must run them: the first entry */
	*to = 0;
	for (int i = 0; i < m.nmap; i++)
		if (m.map[i].insn == idx && !(*to && plan->mid_at))
			*to = copy_addr + m.map[i].off;
	return idx < 0 || !*to ? -ENOENT : 0;
}

int arch_redirect_bytes(const struct arch_site_plan *plan, uint64_t copy_addr, int k,
			uint8_t out[4])
{
	uint64_t to;
	int32_t rel;

	if (k < 0 || k >= plan->nredirs)
		return -EINVAL;
	const struct arch_redirect *r = &plan->redir[k];
	if (r->len == 1) { /* a rel8, to its hop */
		if (r->hop < 0 || r->hop >= plan->nhops)
			return -EINVAL;
		int64_t d = (int64_t)(plan->hop[r->hop].at - (r->at + 1));
		if (d < -128 || d > 127)
			return -ERANGE;
		memcpy(out, r->orig, 4);
		out[0] = (uint8_t)(int8_t)d;
		return 0;
	}
	int rc = copy_of(plan, copy_addr, r->target, &to);
	if (rc < 0)
		return rc;
	if (!x86_rel32(r->at + 4, to, &rel))
		return -ERANGE;
	memcpy(out, &rel, 4);
	return 0;
}

int arch_hop_bytes(const struct arch_site_plan *plan, uint64_t tramp_addr, uint64_t copy_addr,
		   int h, uint8_t out[ARCH_HOP_LEN])
{
	uint64_t to = 0;
	int32_t rel;

	if (h < 0 || h >= plan->nhops)
		return -EINVAL;
	if (plan->short_jmp && h == 0)
		to = tramp_addr;
	for (int k = 0; !to && k < plan->nredirs; k++)
		if (plan->redir[k].len == 1 && plan->redir[k].hop == h) {
			int rc = copy_of(plan, copy_addr, plan->redir[k].target, &to);
			if (rc < 0)
				return rc;
		}
	if (!to)
		return -ENOENT;
	if (!x86_rel32(plan->hop[h].at + ARCH_HOP_LEN, to, &rel))
		return -ERANGE;
	out[0] = 0xe9;
	memcpy(out + 1, &rel, 4);
	return 0;
}

int arch_patch_bytes(const struct arch_site_plan *plan, uint64_t tramp_addr, uint8_t *out)
{
	struct x86_writer w;

	if (plan->orig_len < 1 || plan->orig_len > ARCH_MAX_DISPLACED)
		return -EINVAL;
	if (plan->kind == ARCH_PATCH_INT3) {
		/* Only the first byte changes: the rest of the instruction stays as it was. */
		memcpy(out, plan->orig, plan->orig_len);
		out[0] = 0xcc;
		return 0;
	}
	if (plan->short_jmp) { /* jmp rel8 to the hop, which jumps to tramp_addr */
		int64_t d = plan->nhops ? (int64_t)(plan->hop[0].at - (plan->site + 2)) : 1000;
		if (plan->orig_len < 2 || d < -128 || d > 127)
			return -EINVAL;
		memset(out, 0xcc, (size_t)plan->orig_len);
		out[0] = 0xeb;
		out[1] = (uint8_t)(int8_t)d;
		return 0;
	}
	if (plan->orig_len < JMP_LEN)
		return -EINVAL;
	if (!x86_rel32(plan->site + JMP_LEN, tramp_addr, NULL))
		return -ERANGE; /* before writing: out stays as it was */
	x86w_init(&w, out, (size_t)plan->orig_len, plan->site);
	x86w_rel32_to(&w, "\xe9", 1, tramp_addr);
	while (w.len < (size_t)plan->orig_len)
		x86w_u8(&w, 0xcc);
	return w.err;
}

/*
 * pc == site maps too (to the copy of the first instruction, after the
 * handler calls): the int3 fallback resumes there.  For a JMP plan attach
 * should leave a thread at the site alone, so that its hit is not lost.
 */
int arch_pc_into_copy(const struct arch_site_plan *plan, uint64_t at, uint64_t pc,
		      uint64_t *new_pc)
{
	struct x86_reloc_map r;
	int i, idx = -1, rc;

	if (pc < plan->site || pc >= plan->site + plan->orig_len)
		return -ENOENT;
	for (i = 0; i < plan->ninsns; i++)
		if (plan->site + plan->insn_off[i] == pc)
			idx = i;
	if (idx < 0)
		return -ENOENT;
	rc = x86_reloc_map(plan, at, &r);
	if (rc < 0)
		return rc;
	for (i = 0; i < r.nmap; i++) {
		if (r.map[i].insn == idx) {
			*new_pc = at + r.map[i].off;
			return 0;
		}
	}
	return -ENOENT;
}

int arch_pc_into_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr, int nhandlers,
			    uint64_t pc, uint64_t *new_pc)
{
	return arch_pc_into_copy(plan, tramp_addr + HEAD(plan, nhandlers), pc, new_pc);
}

int arch_pc_from_copy(const struct arch_site_plan *plan, uint64_t at, uint64_t pc, uint64_t *new_pc,
		      uint64_t *sp_add)
{
	struct x86_reloc_map r;
	int i, rc;

	if (pc < at)
		return -ENOENT;
	rc = x86_reloc_map(plan, at, &r);
	if (rc < 0)
		return rc;
	if (pc >= at + r.len)
		return -ENOENT;
	for (i = 0; i < r.nmap; i++) {
		if (at + r.map[i].off == pc) {
			*new_pc = r.map[i].orig;
			*sp_add = r.map[i].sp_add;
			return 0;
		}
	}
	return -ENOENT; /* not an instruction boundary of the copy */
}

int arch_pc_from_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr, int nhandlers,
			    uint64_t pc, uint64_t *new_pc, uint64_t *sp_add)
{
	return arch_pc_from_copy(plan, tramp_addr + HEAD(plan, nhandlers), pc, new_pc, sp_add);
}

/*
 * [lo, hi): where a trampoline can go so that the site's jmp rel32 reaches
 * it, with 1 MiB to spare for the trampoline's own size and for the
 * RIP-relative data of the displaced instructions, which usually lies in
 * the same object as the site.  Clamped to the user address space
 * (mmap_min_addr below, the 47-bit limit above).
 */
void arch_near_window(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const uint64_t reach = (1ull << 31) - (1ull << 20);
	const uint64_t min_addr = 1ull << 16, max_addr = (1ull << 47) - 4096;

	*lo = addr > min_addr + reach ? addr - reach : min_addr;
	*hi = addr < max_addr - reach ? addr + reach : max_addr;
	if (*lo > *hi)
		*lo = *hi;
}
