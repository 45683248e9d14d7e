/*
 * cg_stack.c - code for ustack: one call of the runtime's rt_stack_id(),
 * which records the stack in the shared stack table and returns its id
 * (runtime/mem/rt_stack.c).  The id is what a map key or printf argument
 * holds; output/stack.c prints it.
 *
 * Pipeline position: codegen, called from cg_builtin()/cg_call().  The
 * probe function gets "frame-pointer"="all": the probed code's %rbp is then
 * the one its prologue saved (neither the trampoline nor the switch to the
 * probe stack changes %rbp), passed to rt_stack_id().  Reading the
 * target's stack may fault (a mapping changed), so a probe with ustack
 * takes its thread slot (cg_needs_thread) and attach installs the fault
 * handler (cg_object.reads_target), as for any read of target memory.
 */
#include "cg_internal.h"

#include <string.h>

bool cg_is_stack(const struct ast_node *n)
{
	return (n->kind == AST_BUILTIN || n->kind == AST_CALL) && !strcmp(n->str, "ustack");
}

LLVMValueRef cg_stack(struct cg *c, const struct ast_node *n)
{
	int kind = sema_stack_kind(c->probe);
	if (c->side == CG_SIDE_HOST || kind < 0 || kind > RT_STK_RET)
		return cg_const(c, 0); /* BEGIN/END run in ubt: no target stack */
	if (c->usdt_spec)
		kind = RT_STK_MID;
	LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(c->ctx, "frame-pointer", 13, "all", 3));
	LLVMValueRef site = kind == RT_STK_ENTRY ? cg_sym_func(c) : cg_const(c, 0);
	LLVMTypeRef fa = LLVMFunctionType(c->ptr, &c->i32, 1, 0);
	LLVMValueRef fr = LLVMGetNamedFunction(c->mod, "llvm.frameaddress.p0");
	if (!fr)
		fr = LLVMAddFunction(c->mod, "llvm.frameaddress.p0", fa);
	LLVMValueRef zero = LLVMConstInt(c->i32, 0, 0);
	LLVMValueRef fp = LLVMBuildLoad2(c->b, c->i64, LLVMBuildCall2(c->b, fa, fr, &zero, 1, ""),
					 "probed_rbp");
	LLVMTypeRef p[] = {c->ptr, c->i64, c->i32, c->i32, c->ptr, c->i64};
	LLVMTypeRef fty = LLVMFunctionType(c->i64, p, 6, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, "rt_stack_id");
	if (!f) {
		f = LLVMAddFunction(c->mod, "rt_stack_id", fty);
		LLVMSetVisibility(f, LLVMHiddenVisibility);
	}
	/* the thread's slot says whether a fault in a read of the stack can be
	 * caught (runtime/mem/rt_read.c); cg_needs_thread() asks for it */
	LLVMValueRef th = c->thread ? c->thread : LLVMConstNull(c->ptr);
	LLVMValueRef args[] = {c->frame_regs ? c->frame_regs : c->regs, site, LLVMConstInt(c->i32, (uint64_t)kind, 0),
			       LLVMConstInt(c->i32, (uint64_t)AST_STACK_FRAMES(&n->type), 0), th, fp};
	return LLVMBuildCall2(c->b, fty, f, args, 6, "stack");
}
