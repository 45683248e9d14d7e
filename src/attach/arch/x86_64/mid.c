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
 *   { [pc slot := its location]; nop; call h } per handler (or call *lit(%rip))
 *   [nopl id(%rax) after each call: plan->call_ids, abi.h "Site ids"]
 *   mov (%rsp),%rsp
 *   mov FLAGS(%rsp),%rax; add $0x7f,%al; sahf      OF from al, the rest from ah
 *   mov R11(%rsp),%r11; mov RAX(%rsp),%rax
 *   lea 128+F(%rsp),%rsp
 *   displaced instructions, relocated; jmp site + orig_len
 *   literal pool
 *
 * Every piece has a fixed size, so the relocated copy starts at
 * x86_mid_head_len(n), as the pc mapping needs.
 *
 * Locations in a row (sys/sdt.h's probes one after the other are 1-byte
 * nops, so a second location lies inside the first one's jump): the
 * planner accepts another probed location in the patched bytes when only
 * nops lie before it (plan->mid_cover), and attach gives its handlers to
 * this trampoline, after the first location's (plan->mid_hoff: address
 * order).  The registers, the stack and the flags are the same at both
 * locations; only the pc differs, so where the handlers read the pc slot
 * it is rewritten between them.  The smaller alternatives did not exist:
 * a jump at the second location would overwrite the first one's, and a
 * breakpoint there costs 2 us per hit.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
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

/*
 * Before handler i of a site that others share (plan->mid_cover): when it
 * stands for another location than the handler before it and the pc slot
 * is read, the slot gets that location's address (everything else is the
 * same there: only nops lie between).  The block is at (%rsp) between the
 * calls; %rax and %r11 are restored from it afterwards.
 *   mov (%rsp),%rax; lea loc(%rip),%r11; mov %r11,PC(%rax)
 */
#define PC_SET_LEN 15
static bool pc_changes(const struct arch_site_plan *plan, int i)
{
	if (!reads(plan, offsetof(struct rt_regs_mid, pc)) || i >= ARCH_MAX_HANDLERS)
		return false;
	return plan->mid_hoff[i] != (i ? plan->mid_hoff[i - 1] : 0);
}

static void emit_pc_set(struct x86_writer *w, uint64_t loc)
{
	_Static_assert(offsetof(struct rt_regs_mid, pc) < 128, "pc slot within a disp8");
	X86W_PUT(w, "\x48\x8b\x04\x24");	  /* mov (%rsp),%rax */
	x86w_rel32_to(w, "\x4c\x8d\x1d", 3, loc); /* lea loc(%rip),%r11 */
	x86w_put(w, (uint8_t[]){0x4c, 0x89, 0x58, offsetof(struct rt_regs_mid, pc)}, 4);
}

size_t x86_mid_head_len(const struct arch_site_plan *plan, int nhandlers)
{
	struct x86_writer w;

	x86w_init(&w, NULL, 0, plan->site); /* a dry run: the lengths only */
	emit_save(&w, plan);
	emit_restore(&w);
	int before = nhandlers - plan->mid_after;
	for (int i = 0; i < before; i++)
		w.len += pc_changes(plan, i) ? PC_SET_LEN : 0;
	return w.len + (CALL_LEN + (plan->call_ids ? X86_CALL_ID_LEN : 0)) * (size_t)before;
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
 *
 * ids: the exit handlers' site ids (plan->call_ids), NULL in a dry run.
 */
void x86_mid_after(struct x86_writer *w, const struct arch_site_plan *plan, const uint64_t *after,
		   const uint32_t *ids)
{
	emit_save(w, plan);
	/* a location after the first instruction (plan->mid_at): its pc */
	if (plan->mid_at && reads(plan, offsetof(struct rt_regs_mid, pc)))
		emit_pc_set(w, plan->site + plan->mid_at);
	for (int i = 0; i < plan->mid_after; i++)
		x86w_call_handler(w, after ? after[i] : 0, plan->call_ids, ids ? ids[i] : 0);
	emit_restore(w);
}

size_t arch_trampoline_mid_max(int nhandlers)
{
	struct arch_site_plan all = {.mid = true, .mid_read = ~0u, .call_ids = true};
	if (nhandlers < 0)
		nhandlers = 0;
	/* and a second save and restore for the calls after the first instruction */
	return 2 * x86_mid_head_len(&all, nhandlers) + (size_t)PC_SET_LEN * nhandlers +
	       X86_RELOC_CODE_MAX + 7 + 8 * ((size_t)nhandlers + X86_RELOC_LIT_MAX);
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
	for (int i = 0; i < before; i++) {
		if (pc_changes(plan, i))
			emit_pc_set(&w, plan->site + plan->mid_hoff[i]);
		x86w_call_handler(&w, handlers[i], plan->call_ids, plan->call_id[i]);
	}
	emit_restore(&w);
	if (w.len != x86_mid_head_len(plan, nhandlers))
		return -EINVAL; /* the layout above and x86_mid_head_len() disagree */
	rc = x86_relocate_after(plan, &w, NULL, handlers + before, plan->call_id + before);
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
 *   - a call among them is not the last (its return address is inside
 *     them, and a thread in the callee at attach would return there);
 *   - a displaced instruction follows one that never falls through (it
 *     is reached only by a jump, perhaps an indirect one we cannot see),
 *     unless it is a nop of the alignment fill there (inside the function,
 *     or in the pad_len bytes after it that no function owns);
 *   - an entry of a switch's jump table lands strictly inside them;
 *   - the function has an indirect jmp whose targets cannot be proven
 *     (jtab.c recovers gcc's and clang's jump tables with the bound their
 *     guard gives the index; anything else, a computed goto through a
 *     table without a bound, a tail call through a pointer, may target any
 *     instruction).
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

/* Does a target at a lie strictly inside the patched bytes? */
static bool inside(const struct arch_site_plan *plan, uint64_t a)
{
	return a > plan->site && a < plan->site + (uint64_t)plan->orig_len;
}

static void func_free(struct x86_func *fn)
{
	free(fn->off);
	free(fn->is_insn);
	free(fn->is_target);
}

/*
 * A branch at func+off lands inside the patched bytes: can it be redirected
 * (struct arch_redirect)?  A rel32 (jmp e9, call e8, jcc 0f 8x: its last 4
 * bytes), or a 2-byte jmp or jcc (eb, 7x: its rel8, which will lead to a
 * hop that place_hops() finds once every branch target is known), outside
 * the patched bytes itself, and at most ARCH_MAX_REDIRS of them.  Recorded
 * in plan if so.
 */
static bool redirect(const struct x86_func *fn, size_t off, const struct x86_insn *insn,
		     struct arch_site_plan *plan)
{
	const uint8_t *p = fn->code + off;
	int32_t rel;

	if (plan->nredirs == ARCH_MAX_REDIRS || insn->kind == X86_RIPREL)
		return false;
	/* a location the jump covers (mid_cover) has its handlers in the
	 * trampoline's head, before the copy a redirected branch leads to: a
	 * branch to it would skip them */
	if (insn->target > plan->site && insn->target - plan->site < 32 &&
	    (plan->mid_cover >> (insn->target - plan->site) & 1))
		return false;
	if (insn->len == 2 && (p[0] == 0xeb || (p[0] & 0xf0) == 0x70) &&
	    insn->addr + 2 + (int8_t)p[1] == insn->target &&
	    (insn->addr + 2 <= plan->site || insn->addr >= plan->site + plan->orig_len)) {
		struct arch_redirect *r = &plan->redir[plan->nredirs++];
		r->insn = insn->addr;
		r->at = insn->addr + 1;
		r->target = insn->target;
		r->orig[0] = p[1];
		r->len = 1;
		r->hop = -1;
		return true;
	}
	if (insn->len < 5)
		return false;
	uint8_t op = p[insn->len - 5];
	bool rel32 = op == 0xe8 || op == 0xe9 ||
		     (insn->len >= 6 && p[insn->len - 6] == 0x0f && (op & 0xf0) == 0x80);
	memcpy(&rel, p + insn->len - 4, 4);
	if (!rel32 || insn->addr + insn->len + (int64_t)rel != insn->target)
		return false;
	if (insn->addr + insn->len > plan->site && insn->addr < plan->site + plan->orig_len)
		return false;
	struct arch_redirect *r = &plan->redir[plan->nredirs++];
	r->insn = insn->addr;
	r->at = insn->addr + insn->len - 4;
	r->target = insn->target;
	memcpy(r->orig, p + insn->len - 4, 4);
	r->len = 4;
	return true;
}

/*
 * Decodes the whole function into fn: 0; -EINVAL if soff is no
 * instruction boundary; -ENOEXEC (plan made an int3) if some bytes do not
 * decode, or a direct branch lands inside the patched bytes.
 */
static int sweep(struct x86_func *fn, size_t soff, struct arch_site_plan *plan,
		 const struct x86_insn *first)
{
	struct x86_insn insn;
	bool boundary = false;
	size_t off;
	int rc;

	fn->off = calloc(fn->len + 1, sizeof(*fn->off));
	fn->is_insn = calloc(fn->len + 1, 1);
	fn->is_target = calloc(fn->len + fn->pad + 1, 1);
	if (!fn->off || !fn->is_insn || !fn->is_target) {
		x86_plan_int3(plan, first, "out of memory to check the function's branches");
		return -ENOEXEC;
	}
	for (off = 0; off < fn->len;) {
		rc = x86_insn_decode(fn->code + off, fn->len - off, fn->addr + off, &insn);
		if (rc == -ENODATA)
			break;
		if (rc < 0) {
			x86_plan_int3(
			    plan, first,
			    "cannot decode func+0x%zx, so a branch into the patched bytes "
			    "cannot be ruled out",
			    off);
			return -ENOEXEC;
		}
		if (off == soff)
			boundary = true;
		if (insn.is_branch && inside(plan, insn.target) && redirect(fn, off, &insn, plan))
			;
		else if (insn.is_branch && inside(plan, insn.target)) {
			x86_plan_int3(plan, first,
				      "branch at func+0x%zx targets func+0x%llx, inside the "
				      "%d patched bytes",
				      off, (unsigned long long)(insn.target - fn->addr),
				      plan->orig_len);
			return -ENOEXEC;
		}
		if (insn.is_branch && insn.target >= fn->addr &&
		    insn.target < fn->addr + fn->len + fn->pad)
			fn->is_target[insn.target - fn->addr] = 1;
		fn->is_insn[off] = 1;
		fn->off[fn->n++] = (uint32_t)off;
		off += insn.len;
	}
	return boundary ? 0 : -EINVAL;
}

/*
 * The bytes of [0, len + pad) nothing executes and no branch lands on
 * (struct arch_hop): fill instructions (nop, int3) after an instruction
 * that never falls through, up to the first one a branch targets or that
 * is no fill; and the pad after the function, when its end is such fill
 * or never falls through.  Every target is known here: check_function()
 * refuses a function with an indirect jump it cannot follow.  NULL when
 * out of memory.
 */
static uint8_t *fill_map(const struct x86_func *fn)
{
	uint8_t *fill = calloc(fn->len + fn->pad + 1, 1);
	struct x86_insn insn;
	bool dead = false;
	size_t end = 0;

	if (!fill)
		return NULL;
	for (int k = 0; k < fn->n; k++) {
		size_t off = fn->off[k];
		if (x86_insn_decode(fn->code + off, fn->len - off, fn->addr + off, &insn) < 0)
			return fill; /* the sweep decoded it: cannot happen */
		bool target = false;
		for (size_t b = off; b < off + insn.len; b++)
			target |= fn->is_target[b];
		if (dead && insn.is_fill && !target)
			memset(fill + off, 1, insn.len);
		else
			dead = insn.ends_flow;
		end = off + insn.len;
	}
	for (size_t off = fn->len; dead && end == fn->len && off < fn->len + fn->pad;) {
		if (x86_insn_decode(fn->code + off, fn->len + fn->pad - off, fn->addr + off,
				    &insn) < 0 ||
		    !insn.is_fill || fn->is_target[off])
			break;
		memset(fill + off, 1, insn.len);
		off += insn.len;
	}
	return fill;
}

/*
 * A hop for a 2-byte jump ending at `from`: ARCH_HOP_LEN bytes of fill
 * within its rel8's reach, clear of the patched bytes, of the plan's other
 * hops and of the other locations (avoid).  Its index in plan->hop, or -1.
 */
static int hop_near(const struct x86_func *fn, const uint8_t *fill, uint64_t from, uint64_t resume,
		    const uint64_t *avoid, int navoid, const struct arch_mem *mem,
		    struct arch_site_plan *plan)
{
	uint64_t lo = from >= 128 ? from - 128 : 0, hi = from + 127;
	if (lo < fn->addr)
		lo = fn->addr;
	if (plan->nhops == ARCH_MAX_HOPS)
		return -1;
	for (uint64_t a = lo; a <= hi && a + ARCH_HOP_LEN <= fn->addr + fn->len + fn->pad; a++) {
		bool ok = true;
		for (uint64_t b = a; ok && b < a + ARCH_HOP_LEN; b++)
			ok = fill[b - fn->addr] &&
			     !(b >= plan->site && b < plan->site + plan->orig_len);
		for (int h = 0; ok && h < plan->nhops; h++)
			ok = a + ARCH_HOP_LEN <= plan->hop[h].at ||
			     a >= plan->hop[h].at + ARCH_HOP_LEN;
		for (int i = 0; ok && i < navoid; i++)
			ok = avoid[i] < a || avoid[i] >= a + ARCH_HOP_LEN;
		for (int i = 0; ok && mem && i < mem->ntaken; i++) /* other sites' bytes */
			ok = a + ARCH_HOP_LEN <= mem->taken[i].lo || a >= mem->taken[i].hi;
		if (!ok)
			continue;
		struct arch_hop *h = &plan->hop[plan->nhops];
		h->at = a;
		h->resume = resume;
		memcpy(h->orig, fn->code + (a - fn->addr), ARCH_HOP_LEN);
		return plan->nhops++;
	}
	return -1;
}

/*
 * Finds the hops the plan needs (struct arch_hop): the site's own, for a
 * short_jmp plan, then one per rel8 branch redirected (shared by branches
 * to the same target within reach).  Without one, the plan becomes an
 * int3 saying why.
 */
static void place_hops(const struct x86_func *fn, const uint64_t *avoid, int navoid,
		       const struct arch_mem *mem, struct arch_site_plan *plan,
		       const struct x86_insn *first)
{
	bool need = plan->short_jmp;
	for (int k = 0; k < plan->nredirs; k++)
		need |= plan->redir[k].len == 1;
	if (!need)
		return;
	uint8_t *fill = fill_map(fn);
	if (!fill) {
		x86_plan_int3(plan, first, "out of memory to check the function's branches");
		return;
	}
	plan->nhops = 0;
	if (plan->short_jmp &&
	    hop_near(fn, fill, plan->site + 2, plan->site, avoid, navoid, mem, plan) < 0) {
		x86_plan_int3(plan, first,
			      "a 2-byte jump fits here, but no alignment fill within its reach has "
			      "room for the 5-byte jump it needs");
		free(fill);
		return;
	}
	for (int k = 0; k < plan->nredirs; k++) {
		struct arch_redirect *r = &plan->redir[k];
		if (r->len != 1)
			continue;
		r->hop = -1;
		for (int h = plan->short_jmp; h < plan->nhops && r->hop < 0; h++) {
			int64_t d = (int64_t)(plan->hop[h].at - (r->at + 1));
			if (plan->hop[h].resume == r->target && d >= -128 && d <= 127)
				r->hop = (int8_t)h;
		}
		if (r->hop < 0)
			r->hop = (int8_t)hop_near(fn, fill, r->at + 1, r->target, avoid, navoid,
						  mem, plan);
		if (r->hop < 0) {
			x86_plan_int3(plan, first,
				      "branch at func+0x%llx targets func+0x%llx, inside the %d "
				      "patched bytes, with a rel8 and no alignment fill within its "
				      "reach for a jump",
				      (unsigned long long)(r->insn - fn->addr),
				      (unsigned long long)(r->target - fn->addr), plan->orig_len);
			break;
		}
	}
	free(fill);
}

/*
 * The whole-function check: decodes [func_addr, func_addr + func_len),
 * refuses the jmp (plan made an int3) when a direct branch or an entry of
 * a jump table lands strictly inside the patched bytes, or when an
 * indirect jmp's targets cannot be proven (jtab.c).  0, or -EINVAL if
 * soff is not an instruction boundary.
 */
static int check_function(const uint8_t *code, size_t func_len, size_t pad_len, uint64_t func_addr,
			  size_t soff, const uint64_t *avoid, int navoid,
			  const struct arch_mem *mem, struct arch_site_plan *plan,
			  const struct x86_insn *first)
{
	struct x86_func fn = {.code = code, .len = func_len, .addr = func_addr, .pad = pad_len};
	struct x86_jtab *tabs = NULL;
	struct x86_insn insn;
	int ntabs = 0, rc;
	char why[120];

	rc = sweep(&fn, soff, plan, first);
	for (int k = 0; rc == 0 && k < fn.n; k++) {
		uint32_t off = fn.off[k];
		x86_insn_decode(code + off, func_len - off, func_addr + off, &insn);
		if (!insn.indirect_jmp)
			continue;
		struct x86_jtab *more = realloc(tabs, (ntabs + 1) * sizeof(*tabs));
		if (!more) {
			x86_plan_int3(plan, first,
				      "out of memory to check the function's branches");
			rc = -ENOEXEC;
			break;
		}
		tabs = more;
		if (x86_jump_table(&fn, k, mem, &tabs[ntabs], why, sizeof(why)) < 0) {
			x86_plan_int3(
			    plan, first,
			    "the function has an indirect jump at func+0x%x (a jump table "
			    "may target the patched bytes): %s",
			    off, why);
			rc = -ENOEXEC;
			break;
		}
		for (int i = 0; i < tabs[ntabs].n; i++) {
			uint64_t a = tabs[ntabs].targets[i];
			if (a >= func_addr && a < func_addr + func_len + pad_len)
				fn.is_target[a - func_addr] = 1;
			if (rc == 0 && inside(plan, a)) {
				x86_plan_int3(
				    plan, first,
				    "entry %d of the jump table at 0x%llx (jmp at func+0x%x) "
				    "targets func+0x%llx, inside the %d patched bytes",
				    i, (unsigned long long)tabs[ntabs].table, off,
				    (unsigned long long)(a - func_addr), plan->orig_len);
				rc = -ENOEXEC;
			}
		}
		ntabs++;
	}
	/* with every target known: nothing jumps past a table's guard */
	for (int t = 0; rc == 0 && t < ntabs; t++)
		for (int i = tabs[t].guard + 1; rc == 0 && i <= tabs[t].jmp; i++)
			if (fn.is_target[fn.off[i]]) {
				x86_plan_int3(
				    plan, first,
				    "the indirect jump at func+0x%x can be reached past the "
				    "check of its index (a branch targets func+0x%x)",
				    fn.off[tabs[t].jmp], fn.off[i]);
				rc = -ENOEXEC;
			}
	if (rc == 0 && plan->kind == ARCH_PATCH_JMP)
		place_hops(&fn, avoid, navoid, mem, plan, first);
	for (int t = 0; t < ntabs; t++)
		free(tabs[t].targets);
	free(tabs);
	func_free(&fn);
	return rc == -EINVAL ? -EINVAL : 0;
}

/* The plan of a jump of jlen bytes (JMP_LEN, or 2: a short_jmp to a hop)
 * at site (the location itself, or the instruction before it:
 * plan_before); *short_of_room: refused for want of bytes. */
static int plan_from(const uint8_t *code, size_t func_len, size_t pad_len, uint64_t func_addr,
		     uint64_t site, int jlen, const uint64_t *avoid, int navoid,
		     const struct arch_mem *mem, struct arch_site_plan *plan, bool *short_of_room)
{
	struct x86_insn first, insn;
	size_t soff = site - func_addr, off, limit = func_len;
	int rc;
	bool nops = true;   /* only nops displaced so far */
	bool ended = false; /* a displaced instruction never falls through */

	memset(plan, 0, sizeof(*plan));
	plan->site = site;
	plan->mid = true;
	plan->kind = ARCH_PATCH_JMP;
	plan->short_jmp = jlen < JMP_LEN;
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
	while (off - soff < (size_t)jlen) {
		if (off >= limit || plan->ninsns == ARCH_MAX_INSNS) {
			x86_plan_int3(plan, &first, "too close to the end of the function for a jmp");
			*short_of_room = true;
			return 0;
		}
		rc = x86_insn_decode(code + off, limit - off, func_addr + off, &insn);
		if (rc < 0 && ended) {
			x86_plan_int3(plan, &first, "func+0x%zx after it is reached only by a jump",
				      off);
			return 0;
		}
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
			for (int i = 0; i < navoid; i++) {
				if (avoid[i] != insn.addr)
					continue;
				if (nops) {
					plan->mid_cover |= 1u << (off - soff);
					continue;
				}
				x86_plan_int3(plan, &first,
					      "another probed site at func+0x%zx follows closely, "
					      "after code that is not a nop",
					      off);
				return 0;
			}
		}
		nops = nops && insn.mnemonic && !strcmp(insn.mnemonic, "nop");
		if (ended && strcmp(insn.mnemonic, "nop")) {
			x86_plan_int3(plan, &first, "func+0x%zx after it is reached only by a jump",
				      off);
			return 0;
		}
		if (off + insn.len > limit) {
			x86_plan_int3(plan, &first, "too close to the end of the function for a jmp");
			*short_of_room = true;
			return 0;
		}
		plan->insn_off[plan->ninsns++] = (uint8_t)(off - soff);
		off += insn.len;
		if (off - soff < (size_t)jlen && insn.mnemonic && !strcmp(insn.mnemonic, "call")) {
			/*
			 * Its return address lies inside the patched bytes: a thread
			 * in the callee when the patch is made (ubt -p) returns into
			 * the middle of the jump.
			 */
			x86_plan_int3(plan, &first,
				      "the call at func+0x%zx returns to func+0x%zx, inside the "
				      "patched bytes",
				      off - insn.len, off);
			return 0;
		}
		if (off - soff < (size_t)jlen && insn.ends_flow) {
			/*
			 * What follows is reached only by a jump: the jmp may cover it
			 * only where it is alignment fill (nops: never executed, never a
			 * branch target, which the whole-function check confirms for the
			 * function's bytes), up to the next function or section.
			 */
			ended = true;
			limit = func_len + pad_len;
		}
	}
	plan->orig_len = (int)(off - soff);
	memcpy(plan->orig, code + soff, plan->orig_len);
	rc = check_function(code, func_len, pad_len, func_addr, soff, avoid, navoid, mem, plan,
			    &first);
	if (rc == -EINVAL)
		return -EINVAL; /* the note does not point at an instruction */
	return 0;
}

/*
 * The offset of the instruction that ends right at soff, if a sweep from
 * the function's start finds one there and it falls through into soff
 * (not a branch, a call or anything that never falls through) and can be
 * relocated; else -1.
 */
static long insn_before(const uint8_t *code, size_t func_len, uint64_t func_addr, size_t soff)
{
	struct x86_insn insn;
	size_t off = 0, prev = 0;
	bool any = false;
	while (off < soff) {
		if (x86_insn_decode(code + off, func_len - off, func_addr + off, &insn) < 0)
			return -1;
		prev = off;
		any = true;
		off += insn.len;
	}
	if (!any || off != soff)
		return -1;
	x86_insn_decode(code + prev, func_len - prev, func_addr + prev, &insn);
	if (insn.kind == X86_BAD || insn.is_branch || insn.ends_flow || insn.indirect_jmp ||
	    (insn.mnemonic && !strcmp(insn.mnemonic, "call")))
		return -1;
	return (long)prev;
}

/*
 * A location with too little room after it (a probe last in a function:
 * `or %rdx,%rax; nop; ret`, the next function right after), or whose 5
 * bytes a branch targets that cannot be redirected (a rel8 `jne` back to
 * the `rdtsc` after the nop and an `xor`), takes a jump
 * from the instruction before it, when that instruction falls through
 * into it, no other location lies in between, and the whole plan (from
 * there) passes every check a jump at the location passes.  The handlers
 * then run after that instruction's copy (plan->mid_at): the registers,
 * the stack and the flags are those at the location, and the pc slot is
 * set to it.  A branch to the location itself now lands inside the jump
 * and is redirected or refuses, as any other.
 */
static void plan_before(const uint8_t *code, size_t func_len, size_t pad_len, uint64_t func_addr,
			uint64_t site, const uint64_t *avoid, int navoid,
			const struct arch_mem *mem, struct arch_site_plan *plan)
{
	struct arch_site_plan alt;
	bool short_of_room = false;
	long prev = insn_before(code, func_len, func_addr, site - func_addr);
	if (prev < 0)
		return;
	/* the others, without the location itself (the jump now covers it) */
	uint64_t *others = calloc((size_t)navoid + 1, sizeof(*others));
	int n = 0;
	if (!others)
		return;
	for (int i = 0; i < navoid; i++) {
		if (avoid[i] >= func_addr + (uint64_t)prev && avoid[i] < site)
			n = -1; /* another location on the instruction before */
		if (n >= 0 && avoid[i] != site)
			others[n++] = avoid[i];
	}
	if (n >= 0 &&
	    plan_from(code, func_len, pad_len, func_addr, func_addr + prev, JMP_LEN, others, n, mem,
		      &alt, &short_of_room) == 0 &&
	    alt.kind == ARCH_PATCH_JMP && !alt.mid_cover && alt.ninsns >= 2 &&
	    alt.insn_off[1] == site - (func_addr + prev)) {
		alt.mid_at = alt.insn_off[1];
		*plan = alt;
	}
	free(others);
}

int arch_plan_mid_site(const uint8_t *code, size_t func_len, size_t pad_len, uint64_t func_addr,
		       uint64_t site, const uint64_t *avoid, int navoid, const struct arch_mem *mem,
		       struct arch_site_plan *plan)
{
	bool short_of_room = false;
	struct arch_site_plan alt;
	int rc = plan_from(code, func_len, pad_len, func_addr, site, JMP_LEN, avoid, navoid, mem,
			   plan, &short_of_room);
	/* any refusal the bytes before may avoid: too little room, a branch
	 * into the 5 bytes (a rel8 `jne` back to the instruction after a
	 * nop), a call returning inside them (plan_before checks it all) */
	if (rc == 0 && plan->kind == ARCH_PATCH_INT3 && func_len)
		plan_before(code, func_len, pad_len, func_addr, site, avoid, navoid, mem, plan);
	/* then a 2-byte jump to a hop in fill nearby (struct arch_hop): a
	 * `nop; jmp` location before code reached only by branches (the
	 * refusal said, if that fails too, is the 5-byte jump's) */
	if (rc == 0 && plan->kind == ARCH_PATCH_INT3 && func_len &&
	    plan_from(code, func_len, pad_len, func_addr, site, 2, avoid, navoid, mem, &alt,
		      &short_of_room) == 0 &&
	    alt.kind == ARCH_PATCH_JMP)
		*plan = alt;
	return rc;
}
