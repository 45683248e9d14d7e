/*
 * x86.h - private interface between the parts of the x86-64 arch layer:
 * decode.c (Zydis wrapper, instruction classes, site planning), reloc.c
 * (relocating displaced instructions), tramp.c (trampolines, patch bytes,
 * pc mapping), mid.c (mid-function sites), tramp_ret.c (return-probe
 * trampolines) and retaddr.c (functions that keep their return address).
 * Nothing outside arch/x86_64/ includes it (tests/layers/check.py).
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
	X86_BAD,    /* cannot be relocated exactly (loop, jrcxz, xbegin, int3 ...) */
};

/* One decoded instruction, reduced to what planning and relocation need. */
struct x86_insn {
	uint64_t addr; /* where it lives in the target */
	uint8_t len;   /* bytes */
	enum x86_kind kind;
	bool is_branch;	  /* has a relative branch operand (whatever its kind) */
	uint8_t cc;	  /* X86_JCC: condition, the low nibble of 7x / 0F 8x */
	uint8_t disp_off; /* X86_RIPREL: offset of the disp32 in the instruction */
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
 * back to site + orig_len, as it will run at address `at`.
 *
 * Code that needs a 64-bit constant (an absolute jump target, a return
 * address to push) refers to it as [rip + disp32]; the constant goes to
 * the trampoline's literal pool, which tramp.c places after the code and
 * then fills in the disp32 at lit[i].disp_off.
 *
 * map[] lists every instruction boundary of the code with the original
 * pc it stands for, for moving threads in and out (arch_pc_*).  A boundary
 * in the middle of an expansion stands for the state the original
 * instruction had reached there, e.g. after `push ret` of an emulated
 * call the equivalent original pc is the callee.
 */
#define X86_RELOC_CODE_MAX (ARCH_MAX_DISPLACED + 8 * ARCH_MAX_INSNS + 6)
#define X86_RELOC_LIT_MAX (2 * ARCH_MAX_INSNS + 1)
#define X86_RELOC_MAP_MAX (2 * ARCH_MAX_INSNS + 1)

struct x86_lit_ref {
	uint16_t disp_off; /* offset of the disp32 in code[] */
	uint16_t insn_end; /* offset of the end of the instruction it is in */
	uint64_t value;
};

struct x86_pc_map {
	uint16_t off;  /* offset in code[] */
	int16_t insn;  /* displaced insn starting here; -1: mid-expansion or jmp back */
	uint64_t orig; /* equivalent pc in the original code */
};

struct x86_reloc {
	uint8_t code[X86_RELOC_CODE_MAX];
	int len;
	int nlit;
	struct x86_lit_ref lit[X86_RELOC_LIT_MAX];
	int nmap;
	struct x86_pc_map map[X86_RELOC_MAP_MAX];
};

/*
 * Relocates plan's displaced instructions to run at `at`.  Deterministic:
 * the same plan and address always give the same code, which is how the
 * pc mapping finds offsets without storing them.  Returns 0, -ERANGE if a
 * [rip + disp32] operand cannot reach its data from `at`, -ENOTSUP if an
 * instruction is X86_BAD, -EINVAL if the plan's bytes do not decode.
 */
int x86_relocate(const struct arch_site_plan *plan, uint64_t at, struct x86_reloc *r);

/* mid.c: the trampoline of a site in the middle of a function (plan->mid). */
size_t x86_mid_head_len(const struct arch_site_plan *plan, int nhandlers);
int x86_mid_emit(const struct arch_site_plan *plan, uint64_t tramp_addr, const uint64_t *handlers,
		 int nhandlers, uint8_t *buf, size_t cap, size_t *len);

/* tramp.c: push/pop of the nine caller-saved registers (struct rt_regs) */
extern const uint8_t x86_save_regs[13];
extern const uint8_t x86_restore_regs[13];

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

static inline void x86_put32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = u;
	p[1] = u >> 8;
	p[2] = u >> 16;
	p[3] = u >> 24;
}

#endif
