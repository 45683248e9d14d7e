/*
 * retaddr.c - does a function keep its own return address to return
 * through it again later?
 *
 * Where it sits: attach (ret.c) asks this before it puts a return probe
 * on a function.  A return probe hijacks the return slot: while the
 * function runs, the slot holds the trampoline's stub and the real
 * address sits in the thread's shadow stack until the stub runs once.
 * A function that copies its return address to resume through the copy
 * later would resume into the stub after that entry is gone:
 *
 *   __sigsetjmp:  mov %rbx,(%rdi) ... lea 0x8(%rsp),%rdx   the caller's sp
 *                 ... mov (%rsp),%rax                        its return address
 *                 ... (both saved in the jmp_buf; longjmp returns here again)
 *   getcontext, swapcontext: the same into the ucontext (oRSP, oRIP)
 *   vfork:        pop %rdi; syscall; push %rdi; ret       (the child and the
 *                 parent both return through the popped address)
 *
 * So the test is: in the straight-line code from the entry (following
 * direct jumps, as setjmp's `jmp __sigsetjmp`), with the stack depth
 * tracked through push, pop, sub/add/lea of %rsp, the function either
 * reads the word at its return slot and also takes the address just
 * above it (the caller's stack pointer after the return), or pops the
 * return slot.  Functions that only read their return address (dlsym's
 * caller lookup, __builtin_return_address) are not refused: they see the
 * stub, as they see the kernel's trampoline under kernel uretprobes.
 */
#include <errno.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "x86.h"

#define SCAN_MAX 96 /* instructions of straight-line code looked at */

struct scan {
	int64_t depth; /* bytes pushed since the entry: the return slot is depth(%rsp) */
	bool read_slot, took_above;
};

static bool is_rsp(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_RSP;
}

/* The memory operands: a read of the slot, an lea of the word above it. */
static void look_at_memory(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			   struct scan *sc)
{
	for (int i = 0; i < in->operand_count_visible; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || !is_rsp(op->mem.base) ||
		    op->mem.index != ZYDIS_REGISTER_NONE)
			continue;
		int64_t d = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
		if (in->mnemonic == ZYDIS_MNEMONIC_LEA && d == sc->depth + 8)
			sc->took_above = true;
		else if (in->mnemonic != ZYDIS_MNEMONIC_LEA && d == sc->depth &&
			 (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
			sc->read_slot = true;
	}
}

/* Follows the change an instruction makes to %rsp: 0, or -1 when it is not
 * a known adjustment (the scan stops: the depth is unknown from there). */
static int track_rsp(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		     struct scan *sc)
{
	bool writes_rsp = false;
	for (int i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER && is_rsp(ops[i].reg.value) &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			writes_rsp = true;
	if (!writes_rsp)
		return 0;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
	case ZYDIS_MNEMONIC_PUSHFQ:
		sc->depth += in->operand_width / 8;
		return 0;
	case ZYDIS_MNEMONIC_POP:
	case ZYDIS_MNEMONIC_POPFQ:
		sc->depth -= in->operand_width / 8;
		return 0;
	case ZYDIS_MNEMONIC_CALL: /* the callee's return pops what the call pushed */
		return 0;
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_ADD:
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER && is_rsp(ops[0].reg.value) &&
		    ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			int64_t v = ops[1].imm.value.s;
			sc->depth += in->mnemonic == ZYDIS_MNEMONIC_SUB ? v : -v;
			return 0;
		}
		return -1;
	case ZYDIS_MNEMONIC_LEA:
		if (is_rsp(ops[1].mem.base) && ops[1].mem.index == ZYDIS_REGISTER_NONE) {
			sc->depth -= ops[1].mem.disp.has_displacement ? ops[1].mem.disp.value : 0;
			return 0;
		}
		return -1;
	default:
		return -1;
	}
}

int arch_copies_return(const uint8_t *code, size_t len, uint64_t addr, uint64_t *next)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct scan sc = {0, false, false};
	size_t off = 0;

	*next = 0;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	for (int n = 0; n < SCAN_MAX && off < len; n++) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &in, ops)))
			return 0;
		if (in.mnemonic == ZYDIS_MNEMONIC_POP && sc.depth == 0)
			return 1; /* its own return address, off the stack */
		look_at_memory(&in, ops, &sc);
		if (sc.read_slot && sc.took_above)
			return 1;
		if (in.mnemonic == ZYDIS_MNEMONIC_JMP) {
			if (ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && sc.depth == 0 &&
			    !sc.read_slot && !sc.took_above)
				*next = addr + off + in.length + (uint64_t)ops[0].imm.value.s;
			return 0;
		}
		if (in.mnemonic == ZYDIS_MNEMONIC_RET || in.mnemonic == ZYDIS_MNEMONIC_UD2 ||
		    in.mnemonic == ZYDIS_MNEMONIC_HLT || track_rsp(&in, ops, &sc))
			return 0;
		off += in.length;
	}
	return 0;
}
