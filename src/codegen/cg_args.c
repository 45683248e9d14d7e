/*
 * cg_args.c - the value of a uprobe's `args`: its function's parameters as
 * one record (attach/resolve/dwarf.c built its type from DWARF), assembled from
 * the registers the entry trampoline saved and the caller's stack; and of a
 * system-call tracepoint's `args` (sys_args below).
 *
 * Pipeline position: codegen, called from cg_builtin().  Layout (ast.h
 * AST_ARGS_STACK_OFF): rdi rsi rdx rcx r8 r9 at offsets 0..40, then the
 * stack arguments as they lie above the return address.  `args.name` and
 * `args->name` then read the buffer like any record field (cg_expr.c);
 * LLVM drops the stores nobody reads, so `args.len` costs one load.
 */
#include "cg_internal.h"
#include "runtime/abi.h"

#include <stddef.h>
#include <string.h>

bool cg_is_args(const struct ast_node *n)
{
	return n && n->kind == AST_BUILTIN && n->str && !strcmp(n->str, "args");
}

/*
 * A system-call tracepoint's record (attach/resolve/syscalls.c has the
 * layout): the call's number at 8, then at the enter site the six argument
 * registers at 16 + 8k, at the exit site the result at 16, read from the
 * struct rt_regs_mid the site's trampoline saved (c->regs).
 */
static LLVMValueRef sys_args(struct cg *c, LLVMValueRef buf, int size)
{
	static const int enter[] = {
	    offsetof(struct rt_regs_mid, rdi), offsetof(struct rt_regs_mid, rsi),
	    offsetof(struct rt_regs_mid, rdx), offsetof(struct rt_regs_mid, r10),
	    offsetof(struct rt_regs_mid, r8),  offsetof(struct rt_regs_mid, r9),
	};
	static const int exit_[] = {offsetof(struct rt_regs_mid, rax)};
	bool is_exit = c->sys_spec->sys_kind == CG_SYS_EXIT;
	const int *regs = is_exit ? exit_ : enter;
	int nregs = is_exit ? 1 : 6;
	LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)size), 1);
	LLVMValueRef off = cg_const(c, 8);
	if (size >= 16)
		LLVMSetAlignment(LLVMBuildStore(c->b, cg_const(c, (uint64_t)c->sys_spec->sys_nr),
						LLVMBuildGEP2(c->b, c->i8, buf, &off, 1, "")),
				 1);
	for (int k = 0; k < nregs && 16 + 8 * k + 8 <= size; k++) {
		LLVMValueRef roff = cg_const(c, (uint64_t)regs[k]);
		LLVMValueRef v = LLVMBuildLoad2(
		    c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->regs, &roff, 1, ""), "");
		LLVMValueRef doff = cg_const(c, 16 + 8 * (uint64_t)k);
		LLVMSetAlignment(
		    LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, c->i8, buf, &doff, 1, "")), 1);
	}
	return buf;
}

LLVMValueRef cg_args(struct cg *c, const struct ast_node *n)
{
	static const int regs[] = {
		offsetof(struct rt_regs, rdi), offsetof(struct rt_regs, rsi),
		offsetof(struct rt_regs, rdx), offsetof(struct rt_regs, rcx),
		offsetof(struct rt_regs, r8),  offsetof(struct rt_regs, r9),
	};
	int size = n->type.size > 0 ? n->type.size : 8;
	LLVMValueRef buf = cg_alloca(c, LLVMArrayType(c->i8, (unsigned)size), "args");
	if (c->side != CG_SIDE_TARGET || !c->regs) {
		LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)size), 1);
		return buf;
	}
	if (c->sys_spec)
		return sys_args(c, buf, size);
	for (int k = 0; k < 6 && 8 * k < size; k++) {
		LLVMValueRef off = cg_const(c, (uint64_t)regs[k]);
		LLVMValueRef v = LLVMBuildLoad2(c->b, c->i64,
						LLVMBuildGEP2(c->b, c->i8, c->regs, &off, 1, ""), "");
		LLVMValueRef doff = cg_const(c, 8 * (uint64_t)k);
		LLVMValueRef st = LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, c->i8, buf, &doff, 1, ""));
		LLVMSetAlignment(st, 1);
	}
	if (size > AST_ARGS_STACK_OFF) {
		/* the caller's outgoing arguments: &regs->ret is the entry %rsp, so
		 * the first stack argument is the word above it (a live frame of
		 * the caller: mapped, a plain copy) */
		LLVMValueRef soff = cg_const(c, offsetof(struct rt_regs, ret) + 8);
		LLVMValueRef src = LLVMBuildGEP2(c->b, c->i8, c->frame_regs, &soff, 1, "");
		LLVMValueRef doff = cg_const(c, AST_ARGS_STACK_OFF);
		LLVMValueRef dst = LLVMBuildGEP2(c->b, c->i8, buf, &doff, 1, "");
		LLVMBuildMemCpy(c->b, dst, 1, src, 1, cg_const(c, (uint64_t)(size - AST_ARGS_STACK_OFF)));
	}
	return buf;
}
