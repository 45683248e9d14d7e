/*
 * x86.h - private interface between the files of the x86-64 arch layer.
 *
 * Room rule (attach/arch/x86_64/): arch.h's rule, and one more: every
 * byte of machine code this room makes goes through the code writer
 * (writer.h: bounded buffer, labels, literal pool); no file keeps an
 * emitter of its own.  No file of src/ outside arch/x86_64/ includes this
 * header or writer.h: the rest of attach knows the machine through arch.h
 * (the unit tests in tests/unit/arch/ include them).
 *
 *   decode.c     Zydis wrapper, instruction classes, planning entry sites
 *   writer.c     the code writer and the instructions several emitters share
 *   reloc.c      relocating displaced instructions
 *   tramp.c      entry trampolines, patch bytes, pc mapping
 *   mid.c        mid-function sites (USDT): planning and trampolines
 *   jtab.c       recovering jump tables for mid.c's branch check
 *   tramp_ret.c  return-probe trampolines
 *   retaddr.c    functions that keep their return address
 *   syscall.c    system-call sites and their numbers
 */
#ifndef UBT_ARCH_X86_H
#define UBT_ARCH_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/arch/arch.h"

/* What relocating one instruction takes. */
enum x86_kind {
	X86_PLAIN,  /* position-independent: copied verbatim */
	X86_RIPREL, /* [rip + disp32] memory operand: disp32 rewritten */
	X86_JMP,    /* jmp rel8 / rel32 */
	X86_JCC,    /* jcc rel8 / rel32 */
	X86_CALL,   /* call rel32: emulated as push original return + jmp */
	X86_ICALL,  /* call *op (ff /2): push original return + the same op as jmp (ff /4) */
	X86_BAD,    /* cannot be relocated exactly (loop, jrcxz, xbegin, int3 ...) */
};

/* One decoded instruction, reduced to what planning and relocation need. */
struct x86_insn {
	uint64_t addr; /* where it lives in the target */
	uint8_t len;   /* bytes */
	enum x86_kind kind;
	bool is_branch;	  /* has a relative branch operand (whatever its kind) */
	uint8_t cc;	  /* X86_JCC: condition, the low nibble of 7x / 0F 8x */
	uint8_t disp_off; /* X86_RIPREL, icall_riprel: offset of the disp32 in the instruction */
	uint8_t modrm_off; /* X86_ICALL: offset of the ModRM byte */
	bool icall_riprel; /* X86_ICALL through [rip + disp32] (target: the address it names) */
	uint64_t target;  /* branch target, or the address a RIPREL operand names */
	bool ends_flow;   /* never falls through: ret, jmp, ud2, hlt */
	bool is_fill;     /* alignment fill a compiler puts between functions: nop, int3 */
	bool indirect_jmp; /* jmp through a register or [base/index] memory (not [rip+d]) */
	const char *mnemonic;
	const char *bad; /* X86_BAD: why, e.g. "depends on %rcx and has only a rel8" */
};

/*
 * Decodes the instruction at p (avail bytes readable) that lives at addr.
 * Returns 0, -EINVAL if the bytes are not an instruction, -ENODATA if
 * avail ends inside it.
 */
int x86_insn_decode(const uint8_t *p, size_t avail, uint64_t addr, struct x86_insn *out);

/*
 * Makes plan an int3 plan (decode.c): only the first instruction is
 * displaced; why is formatted from fmt.
 */
void x86_plan_int3(struct arch_site_plan *plan, const struct x86_insn *first, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A relocated copy of a plan's displaced instructions followed by the jmp
 * back to site + orig_len, appended to a code writer (writer.h) at the
 * address it has reached.  Code that needs a 64-bit constant (an absolute
 * jump target, a return address to push) refers to it as [rip + disp32]
 * into the writer's literal pool.
 *
 * map[] lists every instruction boundary of the copy with the original
 * pc it stands for, for moving threads in and out (arch_pc_*).  A boundary
 * in the middle of an expansion stands for the state the original
 * instruction had reached there, e.g. after `push ret` of an emulated
 * call the equivalent original pc is the callee.  After `push ret` of an
 * indirect call, whose callee is known only once the jmp has run, it is
 * the call itself with %rsp 8 higher (sp_add).
 */
#define X86_RELOC_CODE_MAX (ARCH_MAX_DISPLACED + 8 * ARCH_MAX_INSNS + 6)
#define X86_RELOC_LIT_MAX (2 * ARCH_MAX_INSNS + 1)
#define X86_RELOC_MAP_MAX (2 * ARCH_MAX_INSNS + 2) /* + the calls after the first (mid_after) */

struct x86_pc_map {
	uint16_t off;  /* offset from the start of the copy */
	int16_t insn;  /* displaced insn starting here; -1: mid-expansion or jmp back */
	uint64_t orig; /* equivalent pc in the original code */
	uint8_t sp_add; /* and what to add to %rsp there */
};

struct x86_reloc_map {
	int len; /* bytes of the copy */
	int nmap;
	struct x86_pc_map map[X86_RELOC_MAP_MAX];
};

struct x86_writer;

/*
 * Relocates plan's displaced instructions to run where w stands, and
 * fills *m (may be NULL).  Deterministic: the same plan and address always
 * give the same code, which is how the pc mapping finds offsets without
 * storing them.  Returns 0, -ERANGE if a [rip + disp32] operand cannot
 * reach its data, -ENOTSUP if an instruction is X86_BAD, -EINVAL if the
 * plan's bytes do not decode; the writer's own errors wait for x86w_finish.
 */
int x86_relocate(const struct arch_site_plan *plan, struct x86_writer *w, struct x86_reloc_map *m);

/* The map alone, for a copy at `at` (a dry run of x86_relocate). */
int x86_reloc_map(const struct arch_site_plan *plan, uint64_t at, struct x86_reloc_map *m);

/*
 * A function decoded linearly from its first byte (mid.c): where each
 * instruction starts, and which bytes a direct branch in it targets.
 */
struct x86_func {
	const uint8_t *code;
	size_t len;
	uint64_t addr;
	uint32_t *off; /* off[i]: offset of instruction i */
	int n;
	uint8_t *is_insn;   /* per byte offset: an instruction starts here */
	uint8_t *is_target; /* per byte offset: a branch targets it (mid.c: also
			     * in the pad bytes after the function) */
	size_t pad;	    /* mid.c: alignment fill after the function, in code */
};

/* A switch's jump table, recovered for the indirect jmp at instruction jmp (jtab.c). */
struct x86_jtab {
	int jmp;	   /* the jmp's instruction index */
	int guard;	   /* the instruction that bounds the index: nothing may jump
			    * to the instructions after it up to the jmp */
	uint64_t table;	   /* where the table is */
	int entry;	   /* 4: int32 offsets from table; 8: absolute addresses */
	int n;		   /* entries */
	uint64_t *targets; /* n of them (malloc) */
};

/*
 * The targets of the indirect jmp at fn's instruction k, proven from the
 * code before it (see jtab.c).  0, or -errno with why filled.
 */
int x86_jump_table(const struct x86_func *fn, int k, const struct arch_mem *mem, struct x86_jtab *t,
		   char *why, size_t whylen);

/*
 * x86_relocate, where the handlers of plan->mid_after (after, NULL in a dry
 * run: only the lengths count; ids, their site ids or NULL) are called
 * between the first relocated instruction and the second (mid.c,
 * x86_mid_after).
 */
int x86_relocate_after(const struct arch_site_plan *plan, struct x86_writer *w,
		       struct x86_reloc_map *m, const uint64_t *after, const uint32_t *ids);

/* mid.c: the trampoline of a site in the middle of a function (plan->mid);
 * nhandlers counts them all, plan->mid_after of them run after the first
 * displaced instruction, the others before. */
size_t x86_mid_head_len(const struct arch_site_plan *plan, int nhandlers);
void x86_mid_after(struct x86_writer *w, const struct arch_site_plan *plan, const uint64_t *after,
		   const uint32_t *ids);
int x86_mid_emit(const struct arch_site_plan *plan, uint64_t tramp_addr, const uint64_t *handlers,
		 int nhandlers, uint8_t *buf, size_t cap, size_t *len);

/* Does `to` fit a rel32 counted from `next` (the end of the instruction)? */
static inline bool x86_rel32(uint64_t next, uint64_t to, int32_t *rel)
{
	int64_t d = (int64_t)(to - next);

	if (d < INT32_MIN || d > INT32_MAX)
		return false;
	if (rel)
		*rel = (int32_t)d;
	return true;
}

#endif
