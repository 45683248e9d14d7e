/*
 * arch.h - the machine-specific part of attaching: decoding a probe site,
 * relocating the instructions a patch displaces, and emitting trampolines.
 *
 * Room rule (attach/arch/): pure functions of bytes and addresses (code
 * in, plans and bytes out); arch never touches a process and includes
 * nothing of attach outside arch/ (tests/layers/check.py).  The rest of
 * src/attach talks to the machine through this interface, though some of
 * it still knows x86-64 (registers in tracee.c, patch.c, ret.c; R_X86_64_*
 * in link.c; SysV registers in dwarf.c; AT&T operands in usdt_args.c).
 * The x86-64 implementation lives in arch/x86_64/ and uses Zydis.
 *
 * A probe site at address S gets this treatment (x86-64):
 *
 *   S:   jmp T            5 bytes, then int3 filling the rest of the
 *                         displaced instructions (never executed)
 *
 *   T:   push %r11              the handlers keep every other register
 *        call handler_1 ... call handler_n     (runtime/abi.h: handlers)
 *        [nopl id(%rax) after each call: the site's id, plan->call_ids]
 *        pop  %r11
 *        <displaced instructions, relocated>
 *        jmp  S + displaced_len
 */
#ifndef UBT_ARCH_H
#define UBT_ARCH_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define ARCH_MAX_DISPLACED 32 /* bytes of original code a patch may cover */
#define ARCH_MAX_INSNS 16     /* displaced instructions */
/* entry handlers of a site, and as many return handlers (the literal pool's size) */
#define ARCH_MAX_HANDLERS 16

enum arch_patch_kind {
	ARCH_PATCH_JMP,  /* 5-byte jmp to the trampoline */
	ARCH_PATCH_INT3, /* jmp is unsafe here: an int3 handled inside the target */
};

/*
 * A branch elsewhere in the function whose rel32 target lies strictly
 * inside a site's patched bytes (a USDT location's `nop` is often the start
 * of a block that other branches enter one byte later, at the instruction
 * after the nop).  Instead of an int3 at the site, the branch's rel32 is
 * rewritten to the same instruction's relocated copy in the trampoline
 * (arch_redirect_bytes), so the branch goes on exactly as before, past the
 * probe, as it did past the nop.  Written and restored with the site.
 */
#define ARCH_MAX_REDIRS 4
struct arch_redirect {
	uint64_t insn;	 /* address of the branch instruction */
	uint64_t at;	 /* address of its rel32 (its last 4 bytes), or of its rel8 */
	uint64_t target; /* where it branched: inside the patched bytes */
	uint8_t orig[4]; /* the rel32 (or rel8: orig[0]) as it was */
	uint8_t len;	 /* 4: a rel32, rewritten to the copy; 1: a rel8 (2-byte jmp
			  * or jcc), rewritten to its hop (struct arch_hop) */
	int8_t hop;	 /* len 1: the hop it now leads to (plan->hop[hop]) */
};

/*
 * A hop: a 5-byte jmp written into alignment fill (nops after an
 * instruction that never falls through, which no branch targets, or the
 * fill after the function that no symbol owns: bytes nothing executes),
 * for a 2-byte jump whose rel8 cannot reach the trampoline itself.  Two
 * uses: a rel8 branch into the patched bytes (arch_redirect, len 1) leads
 * to a hop that jumps on to its target's copy, as a rel32 would; and a
 * site with room for 2 bytes only (plan->short_jmp: a `nop; jmp` USDT
 * location before code reached only by branches) gets a `jmp rel8` to a
 * hop that jumps to the trampoline.  Written before the branches that
 * lead to it and taken back after them.  The tactic is that of static
 * binary rewriters (E9Patch's short jumps into padding).
 */
#define ARCH_MAX_HOPS (ARCH_MAX_REDIRS + 1)
#define ARCH_HOP_LEN 5
struct arch_hop {
	uint64_t at;		    /* the fill's address */
	uint64_t resume;	    /* what a thread found on it was about to run: the
				     * site, or the redirected branch's target */
	uint8_t orig[ARCH_HOP_LEN]; /* the fill as it was */
};

/* The plan for patching one site; computed before any byte changes. */
struct arch_site_plan {
	uint64_t site;                    /* address of the patched instruction */
	bool mid;                         /* inside a function: arch_plan_mid_site() */
	uint32_t mid_read;                /* mid: slots of struct rt_regs_mid (bit = offset / 8)
					   * the handlers read; r12-r15 are saved only if here */
	bool c_abi;                       /* handlers are C functions taking struct rt_regs *
					   * (the runtime's own), not probe code (abi.h) */
	uint32_t mid_cover;		  /* mid: bit k set: the location at site + k (an
					   * avoid[] entry) lies in the patched bytes after
					   * nothing but nops, so its handlers may run in this
					   * trampoline (the registers are the same there) */
	uint8_t mid_hoff[ARCH_MAX_HANDLERS]; /* mid: handler i stands for the location at
					      * site + mid_hoff[i] (0, or a mid_cover bit); the
					      * handlers come in address order */
	uint8_t mid_after;		  /* mid: the last mid_after handlers run after the
					   * first displaced instruction, not before it (a
					   * system call's exit side, mid.c) */
	enum arch_patch_kind kind;
	char why[160];                    /* for ARCH_PATCH_INT3: why the jmp was refused */
	uint8_t orig[ARCH_MAX_DISPLACED]; /* original bytes at site */
	int orig_len;                     /* bytes the patch displaces (>= 5 for JMP) */
	int ninsns;                       /* displaced instructions */
	uint8_t insn_off[ARCH_MAX_INSNS]; /* offset of each displaced instruction from site */
	/* site ids (abi.h, "Site ids"): set by attach before the trampoline is
	 * emitted; with call_ids every handler call is followed by its id */
	bool call_ids;
	uint32_t call_id[ARCH_MAX_HANDLERS];	 /* entry handlers' (and mid-function) */
	uint32_t ret_call_id[ARCH_MAX_HANDLERS]; /* return handlers' */
	/* mid, JMP: the location is at site + mid_at, after the instruction the
	 * jump starts at (the one before it: too little room after it, a `nop;
	 * ret` last in a function); every handler runs after that instruction's
	 * copy (as mid_after's), with the pc slot set to the location */
	uint8_t mid_at;
	/* mid, JMP: branches into the patched bytes, rewritten to the copy */
	int nredirs;
	struct arch_redirect redir[ARCH_MAX_REDIRS];
	/* mid, JMP: the patch is a 2-byte `jmp rel8` to hop[0] (which jumps to
	 * the trampoline), not a 5-byte jmp; orig_len may be 2 to 4 */
	bool short_jmp;
	int nhops;
	struct arch_hop hop[ARCH_MAX_HOPS];
};

/*
 * Decodes the whole function [func_addr, func_addr + func_len), whose bytes
 * are `code` (read from the target), and plans a patch at `site` (usually
 * func_addr; later a USDT location inside the function).  A JMP plan needs
 * every displaced instruction relocatable and no branch in the function
 * landing strictly inside the displaced range.  Returns 0, or -EINVAL if
 * the bytes at site cannot be decoded at all.
 */
int arch_plan_site(const uint8_t *code, size_t func_len, uint64_t func_addr, uint64_t site,
		   struct arch_site_plan *plan);

/*
 * The same, where pad_len bytes after the function (code holds func_len +
 * pad_len bytes) are known to belong to no symbol: a function shorter than
 * the jmp may then extend its patch over the nop/int3 alignment fill there.
 */
int arch_plan_site_padded(const uint8_t *code, size_t func_len, size_t pad_len,
			  uint64_t func_addr, uint64_t site, struct arch_site_plan *plan);

/*
 * Emits the trampoline for a JMP plan into buf, which will live at
 * target address tramp_addr.  Each handler is called as abi.h's handler
 * convention says (preserve_most, frame struct rt_entry_frame), or, for a
 * plan with c_abi set, as void handler(struct rt_regs *regs) in the C ABI.
 * Returns 0 and sets *len, -ENOSPC if cap is too small, -ERANGE if a
 * displaced rel32 operand cannot reach its target from tramp_addr.
 */
int arch_emit_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr,
			 const uint64_t *handlers, int nhandlers, uint8_t *buf, size_t cap,
			 size_t *len);

/*
 * The direct branch targets (jmp, jcc, call rel) of the function at addr
 * (code: len bytes of it, decoded from its first byte) that lie outside
 * it: where it enters other functions.  Hand-written code enters its
 * neighbours past their first instruction (glibc's
 * __mempcpy_avx512_unaligned_erms jumps to __memmove_..._erms+3), which a
 * jmp over those bytes would break.  Returns how many there are (the first
 * max stored in out); decoding stops at the first undecodable byte.
 */
int arch_branches_out(const uint8_t *code, size_t len, uint64_t addr, uint64_t *out, int max);

/*
 * A JMP plan whose displaced bytes are entered from elsewhere becomes an
 * int3 plan (only the first instruction displaced); fmt says why.
 */
void arch_plan_to_int3(struct arch_site_plan *plan, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Upper bound of arch_emit_trampoline()'s output, for reserving space. */
size_t arch_trampoline_max(int nhandlers);

/*
 * The 4 bytes that make redirect k of plan branch to its target's copy,
 * where the relocated copy of the displaced instructions lives at
 * copy_addr.  0, -ERANGE if the copy is out of the branch's reach.
 */
int arch_redirect_bytes(const struct arch_site_plan *plan, uint64_t copy_addr, int k,
			uint8_t out[4]);

/*
 * The 5 bytes of hop h (a jmp rel32): to tramp_addr for a short_jmp site's
 * hop, to the redirected branch's target's copy for the others.  0,
 * -ERANGE if out of reach, -ENOENT if no copy of the target is found.
 */
int arch_hop_bytes(const struct arch_site_plan *plan, uint64_t tramp_addr, uint64_t copy_addr,
		   int h, uint8_t out[ARCH_HOP_LEN]);

/*
 * The bytes written at plan->site (plan->orig_len of them): the jmp to
 * tramp_addr (a short_jmp plan: the jmp rel8 to its hop) followed by int3
 * fill.  -ERANGE if tramp_addr is out of reach.
 */
int arch_patch_bytes(const struct arch_site_plan *plan, uint64_t tramp_addr, uint8_t *out);

/*
 * A thread stopped at pc with site < pc < site + orig_len must not resume
 * there once the jmp is written: this maps pc to the same instruction in the
 * trampoline's relocated copy (tramp_addr as given to arch_emit_trampoline).
 * Returns 0 and sets *new_pc, or -ENOENT if pc is not a displaced
 * instruction boundary inside the site.
 */
int arch_pc_into_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr,
			    int nhandlers, uint64_t pc, uint64_t *new_pc);

/*
 * The inverse, for detach: a pc inside the relocated copy maps back to the
 * original instruction, and *sp_add says what to add to the thread's %rsp
 * there (8 between the push and the jmp of a relocated indirect call,
 * else 0).  -ENOENT if pc is not inside the relocated copy.
 */
int arch_pc_from_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr, int nhandlers,
			    uint64_t pc, uint64_t *new_pc, uint64_t *sp_add);

/*
 * Memory of the target (or of its file) outside the function's code, for
 * the planner to read a switch's jump table: read() returns 0 when all
 * len bytes at addr were read, else -errno.  arch itself never touches a
 * process; the caller's reader does.  taken: the ranges [lo, hi) that
 * sites planned before write (their patches and hops), which a hop must
 * keep out of (NULL, 0: none).
 */
struct arch_range {
	uint64_t lo, hi;
};
struct arch_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
	const struct arch_range *taken;
	int ntaken;
};

/*
 * A site in the middle of a function (a USDT location), with the same
 * kind of plan; the trampoline then saves every register as struct
 * rt_regs_mid (runtime/abi.h) and never touches the red zone.  avoid[]
 * lists other probed sites, which the jmp must not cover unless only nops
 * lie between the site and them (sys/sdt.h's probes in a row: then
 * plan->mid_cover names them and they share the trampoline).  mem (may be
 * NULL) reads the jump tables of the function's indirect jumps, whose
 * targets then join the branch check (without it such a function gets the
 * int3).  pad_len bytes after the function (code holds func_len + pad_len)
 * belong to no function: after a displaced `ret` or `jmp` the patch may
 * extend over the nops there.  -EINVAL if site is not an instruction
 * boundary of the function.
 */
int arch_plan_mid_site(const uint8_t *code, size_t func_len, size_t pad_len, uint64_t func_addr,
		       uint64_t site, const uint64_t *avoid, int navoid, const struct arch_mem *mem,
		       struct arch_site_plan *plan);

/* Upper bound of a mid-function trampoline's size. */
size_t arch_trampoline_mid_max(int nhandlers);

/* The same two mappings for a relocated copy that starts at `at`. */
int arch_pc_into_copy(const struct arch_site_plan *plan, uint64_t at, uint64_t pc,
		      uint64_t *new_pc);
int arch_pc_from_copy(const struct arch_site_plan *plan, uint64_t at, uint64_t pc, uint64_t *new_pc,
		      uint64_t *sp_add);

/*
 * Return probes (tramp_ret.c): a call-style trampoline.  The entry
 * handlers run as in arch_emit_trampoline(); then the caller's return
 * address is pushed on the thread's shadow stack (runtime/abi.h, struct
 * rt_ret_stack: inline in the common case, else enter(slot, stub) in
 * runtime/thread/rt_ret.c) and the relocated body is `call`ed, so it returns into
 * stub, which pops the entry matching its slot and its own address (inline,
 * else leave(slot, stub) puts the caller's address into the slot), runs
 * each return handler with func = the probed function (plan->site), and
 * returns to the caller.
 */
struct arch_ret_spec {
	const uint64_t *handlers;  /* entry handlers */
	int nhandlers;
	const uint64_t *rhandlers; /* return handlers */
	int nrhandlers;
	uint64_t enter, leave;     /* rt_ret_enter, rt_ret_leave */
	uint64_t enabled;          /* address of ubt_priv.enabled (u32) */
	uint64_t stacks;           /* struct rt_ret_stack[nstacks] (header rets_addr) */
	uint32_t nstacks;          /* a power of two */
	bool has_tid;              /* the kernel tid is at %fs:tid_off (RT_F_TID) */
	int32_t tid_off;
};

size_t arch_ret_trampoline_max(int nhandlers, int nrhandlers);

/* As arch_emit_trampoline(); *copy_addr is where the relocated copy starts. */
int arch_emit_ret_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr,
			     const struct arch_ret_spec *spec, uint8_t *buf, size_t cap,
			     size_t *len, uint64_t *copy_addr);

/*
 * Does the function at addr (code: len bytes of it, read from the target)
 * keep its own return address to return through it again later (setjmp,
 * getcontext, swapcontext save it with the caller's stack pointer; vfork
 * pops it)?  1 yes, 0 not seen.  *next is set to the target of a direct
 * jmp that the straight-line code from the entry ends in (setjmp's
 * `jmp __sigsetjmp`), to be scanned the same way, else 0 (retaddr.c).
 */
int arch_copies_return(const uint8_t *code, size_t len, uint64_t addr, uint64_t *next);

/* A reachable window for trampolines: [lo, hi) around addr (rel32 reach). */
void arch_near_window(uint64_t addr, uint64_t *lo, uint64_t *hi);

/*
 * A system-call site (x86_64/syscall.c): the `syscall` instruction at
 * insn, and where a jump to its trampoline goes: the `mov $NR, %eax`
 * just before it (site = insn - 5 or - 7, nr its number), or, when the
 * number is only in %rax at run time (syscall(2), a JIT), site = insn and
 * nr = -1; after `xor %eax, %eax` (read), site = insn and nr = 0.  The `syscall` itself is never
 * overwritten: a call the kernel restarts moves the thread back onto it (docs/ARCHITECTURE.md).
 */
struct arch_sys_site {
	uint64_t insn;
	uint64_t site;
	int nr;
};

/*
 * The system-call sites of the function at addr (code: len bytes of it),
 * decoded from its first byte.  Returns how many there are (only the first
 * max are stored in out), or -EINVAL.
 */
int arch_syscall_sites(const uint8_t *code, size_t len, uint64_t addr, struct arch_sys_site *out,
		       int max);

/* One instruction at addr as text (AT&T syntax), for `--dump sites`; 0 or -EINVAL. */
int arch_insn_text(const uint8_t *code, size_t len, uint64_t addr, char *buf, size_t n);

#endif
