/*
 * cg_stack.c - code for ustack: one call of the runtime's rt_stack_id(),
 * which records the stack in the shared stack table and returns its id
 * (runtime/rt_stack.c).  The id is what a map key or printf argument
 * holds; output/stack.c prints it.
 *
 * Pipeline position: codegen, called from cg_builtin()/cg_call().  The
 * probe function gets "frame-pointer"="all" so rt_stack_id() can find the
 * probed code's %rbp through the saved frame pointers of our own frames.
 * Reading the target's stack may fault (a mapping changed), so a probe with
 * ustack takes its thread slot (cg_needs_thread) and attach installs the
 * fault handler (cg_object.reads_target), as for any read of target memory.
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
	LLVMTypeRef p[] = {c->ptr, c->i64, c->i32, c->i32, c->ptr};
	LLVMTypeRef fty = LLVMFunctionType(c->i64, p, 5, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, "rt_stack_id");
	if (!f) {
		f = LLVMAddFunction(c->mod, "rt_stack_id", fty);
		LLVMSetVisibility(f, LLVMHiddenVisibility);
	}
	/* the thread's slot says whether a fault in a read of the stack can be
	 * caught (runtime/rt_read.c); cg_needs_thread() asks for it */
	LLVMValueRef th = c->thread ? c->thread : LLVMConstNull(c->ptr);
	LLVMValueRef args[] = {c->frame_regs ? c->frame_regs : c->regs, site, LLVMConstInt(c->i32, (uint64_t)kind, 0),
			       LLVMConstInt(c->i32, (uint64_t)AST_STACK_FRAMES(&n->type), 0), th};
	return LLVMBuildCall2(c->b, fty, f, args, 5, "stack");
}
