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
#include "util/util.h"

#include <stddef.h>
#include <stdlib.h>
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
	LLVMValueRef nr = c->sys_nr ? c->sys_nr : cg_const(c, (uint64_t)c->sys_spec->sys_nr);
	if (size >= 16)
		LLVMSetAlignment(
		    LLVMBuildStore(c->b, nr, LLVMBuildGEP2(c->b, c->i8, buf, &off, 1, "")), 1);
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

/*
 * A site whose number only %rax knows (cg_sys_dyn): the variant reads it
 * from the saved %rax before anything else, and a call the probe does not
 * want goes to skip at once (a switch, which LLVM makes a table or a
 * search), so that `tracepoint:syscalls:sys_enter_exit_group` at _exit's
 * site costs the other calls one compare:
 *
 *   nr = regs->rax
 *   switch (nr) { case 231: idx = 0 ...; default: goto skip }
 *
 * idx then picks the call's `probe` name (cg_sys_probe_name).  Every call
 * goes on for raw_syscalls (n 0), whose name is constant.
 */
static void sys_switch(struct cg *c, const struct cg_sys_dyn *d, LLVMBasicBlockRef skip);

void cg_sys_dispatch(struct cg *c, LLVMBasicBlockRef skip)
{
	c->sys_nr = c->sys_idx = NULL;
	if (!c->sys_spec || c->sys_spec->sys_nr != -1 || c->sys_spec->sys_kind != CG_SYS_ENTER ||
	    !c->regs)
		return;
	const struct cg_sys_dyn *d = c->sys_spec->sys_dyn;
	LLVMValueRef roff = cg_const(c, offsetof(struct rt_regs_mid, rax));
	c->sys_nr = LLVMBuildLoad2(c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->regs, &roff, 1, ""),
				   "sys_nr");
	if (d && d->n)
		sys_switch(c, d, skip);
}

/*
 * The exit side at such a site: after the call no register holds the
 * number, so the enter side of the same trampoline kept it in the
 * thread's slot (a CG_SYS_SAVE variant: rt_thread.sys_nr = %rax + 1), and
 * the exit variant reads it back there (0: the thread was not seen
 * entering, a clone child's first return: nothing runs).  Both need the
 * thread's slot: true for them.
 */
bool cg_sys_needs_thread(const struct cg *c)
{
	return c->sys_spec && (c->sys_spec->sys_nr == CG_SYS_SAVE ||
			       (c->sys_spec->sys_nr == -1 && c->sys_spec->sys_kind == CG_SYS_EXIT));
}

/* With c->thread set: the save (true: nothing else to build), or the exit's
 * number and switch (false: the probe's body follows for the wanted calls). */
bool cg_sys_thread(struct cg *c)
{
	if (!cg_sys_needs_thread(c) || !c->thread || !c->regs)
		return false;
	LLVMValueRef toff = cg_const(c, offsetof(struct rt_thread, sys_nr));
	LLVMValueRef slot = LLVMBuildGEP2(c->b, c->i8, c->thread, &toff, 1, "sys_slot");
	if (c->sys_spec->sys_nr == CG_SYS_SAVE) {
		LLVMValueRef roff = cg_const(c, offsetof(struct rt_regs_mid, rax));
		LLVMValueRef rax = LLVMBuildLoad2(
		    c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->regs, &roff, 1, ""), "rax");
		LLVMBuildStore(c->b, LLVMBuildAdd(c->b, rax, cg_const(c, 1), ""), slot);
		return true;
	}
	LLVMValueRef kept = LLVMBuildLoad2(c->b, c->i64, slot, "sys_kept");
	LLVMBasicBlockRef seen = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "sys_seen");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, kept, cg_const(c, 0), ""), c->exit_bb,
			seen);
	LLVMPositionBuilderAtEnd(c->b, seen);
	c->sys_nr = LLVMBuildSub(c->b, kept, cg_const(c, 1), "sys_nr");
	const struct cg_sys_dyn *d = c->sys_spec->sys_dyn;
	if (d && d->n)
		sys_switch(c, d, c->exit_bb);
	return false;
}

/* switch (nr) over the calls d names: idx for them, skip for the others */
static void sys_switch(struct cg *c, const struct cg_sys_dyn *d, LLVMBasicBlockRef skip)
{
	LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "sys_wanted");
	LLVMValueRef sw = LLVMBuildSwitch(c->b, c->sys_nr, skip, (unsigned)d->n);
	LLVMPositionBuilderAtEnd(c->b, go);
	c->sys_idx = LLVMBuildPhi(c->b, c->i64, "sys_idx");
	for (int i = 0; i < d->n; i++) {
		LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "sys_case");
		LLVMAddCase(sw, cg_const(c, (uint64_t)d->nr[i]), bb);
		LLVMPositionBuilderAtEnd(c->b, bb);
		LLVMBuildBr(c->b, go);
		LLVMValueRef idx = cg_const(c, (uint64_t)i);
		LLVMAddIncoming(c->sys_idx, &idx, &bb, 1);
	}
	LLVMPositionBuilderAtEnd(c->b, go);
}

/* `probe` at such a site: the name of the call it runs, from a table. */
LLVMValueRef cg_sys_probe_name(struct cg *c, int size)
{
	const struct cg_sys_dyn *d = c->sys_spec->sys_dyn;
	LLVMValueRef g = cg_string_table(c, d->names, d->n, size, "sys_names");
	LLVMTypeRef all = LLVMGlobalGetValueType(g);
	LLVMValueRef idx[] = {cg_const(c, 0), c->sys_idx};
	return LLVMBuildGEP2(c->b, all, g, idx, 2, "sys_name");
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
