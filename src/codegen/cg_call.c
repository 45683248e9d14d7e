/*
 * cg_call.c - LLVM IR for builtins (pid, tid, argN, ...) and function
 * calls (printf, exit, ...).  printf events go to the thread's ring
 * (runtime/rt_ring.c); ubt formats them.
 */
#include "cg_internal.h"
#include "util/util.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool cg_is_call(const struct ast_node *n, const char *name)
{
	return n && n->kind == AST_CALL && !strcmp(n->str, name);
}

bool cg_needs_thread(const struct ast_node *n)
{
	if (!n)
		return false;
	if (cg_is_call(n, "printf"))
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (cg_needs_thread(sub[i]))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (cg_needs_thread(n->kids[i]))
			return true;
	return false;
}

/* ---- builtins --------------------------------------------------------- */

static const int arg_reg_off[] = {
	offsetof(struct rt_regs, rdi), offsetof(struct rt_regs, rsi), offsetof(struct rt_regs, rdx),
	offsetof(struct rt_regs, rcx), offsetof(struct rt_regs, r8),  offsetof(struct rt_regs, r9),
};

static LLVMValueRef fs_load32(struct cg *c, int64_t off)
{
	LLVMValueRef p = LLVMBuildIntToPtr(c->b, cg_const(c, (uint64_t)off), c->ptr_fs, "");
	return LLVMBuildZExt(c->b, LLVMBuildLoad2(c->b, c->i32, p, ""), c->i64, "");
}

LLVMValueRef cg_builtin(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "pid")) {
		if (c->side == CG_SIDE_HOST)
			return cg_const(c, (uint64_t)getpid());
		LLVMValueRef p = cg_shm_ptr(c, offsetof(struct rt_shm_header, pid));
		return LLVMBuildZExt(c->b, LLVMBuildLoad2(c->b, c->i32, p, ""), c->i64, "");
	}
	if (!strcmp(n->str, "tid")) {
		if (c->facts->has_tid)
			return fs_load32(c, c->facts->tid_off);
		LLVMValueRef t = LLVMBuildCall2(c->b, c->ty_gettid, c->fn_gettid, NULL, 0, "");
		return LLVMBuildZExt(c->b, t, c->i64, "");
	}
	if (!strncmp(n->str, "arg", 3) && c->usdt_spec)
		return cg_usdt_arg(c, n);
	if (!strncmp(n->str, "arg", 3) && n->builtin_arg >= 0 && n->builtin_arg < 6 &&
	    c->side == CG_SIDE_TARGET) {
		LLVMValueRef off = cg_const(c, arg_reg_off[n->builtin_arg]);
		LLVMValueRef p = LLVMBuildGEP2(c->b, c->i8, c->regs, &off, 1, "");
		return LLVMBuildLoad2(c->b, c->i64, p, n->str);
	}
	LLVMValueRef v = cg_builtin_ret(c, n);
	if (v)
		return v;
	cg_fail(c, n, "this builtin is not supported by the code generator yet");
	return cg_const(c, 0);
}

/*
 * usdt argN: read where this variant's location keeps it (struct
 * cg_usdt_spec, from the note), from the registers the mid-function
 * trampoline saved (struct rt_regs_mid) or from memory they point to,
 * then sign- or zero-extend from the note's size.  Memory operands are the
 * program's own operands at that instruction (a stack slot, a global), so
 * they are valid whenever the location runs: a plain load.
 */
static LLVMValueRef usdt_reg(struct cg *c, uint8_t off)
{
	LLVMValueRef o = cg_const(c, off);
	return LLVMBuildLoad2(c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->regs, &o, 1, ""), "");
}

LLVMValueRef cg_usdt_arg(struct cg *c, const struct ast_node *n)
{
	if (n->builtin_arg < 0 || n->builtin_arg >= c->usdt_spec->nargs) {
		cg_fail(c, n, "internal: usdt argument out of range");
		return cg_const(c, 0);
	}
	const struct cg_usdt_arg *a = &c->usdt_spec->args[n->builtin_arg];
	LLVMTypeRef ity = LLVMIntTypeInContext(c->ctx, a->size * 8);
	LLVMValueRef v;
	if (a->kind == CG_USDT_CONST) {
		v = cg_const(c, (uint64_t)a->val);
	} else if (a->kind == CG_USDT_REG) {
		v = usdt_reg(c, a->reg);
		if (a->shift)
			v = LLVMBuildLShr(c->b, v, cg_const(c, a->shift), "");
	} else {
		LLVMValueRef addr = cg_const(c, (uint64_t)a->val);
		if (a->reg != CG_USDT_NOREG)
			addr = LLVMBuildAdd(c->b, addr, usdt_reg(c, a->reg), "");
		if (a->index != CG_USDT_NOREG)
			addr = LLVMBuildAdd(c->b, addr,
					    LLVMBuildMul(c->b, usdt_reg(c, a->index),
							 cg_const(c, a->scale), ""),
					    "");
		LLVMValueRef p = LLVMBuildIntToPtr(c->b, addr, c->ptr, "");
		LLVMValueRef ld = LLVMBuildLoad2(c->b, ity, p, n->str);
		LLVMSetAlignment(ld, 1);
		return a->is_signed ? LLVMBuildSExt(c->b, ld, c->i64, "")
				    : (a->size == 8 ? ld : LLVMBuildZExt(c->b, ld, c->i64, ""));
	}
	if (a->size == 8)
		return v;
	v = LLVMBuildTrunc(c->b, v, ity, "");
	return a->is_signed ? LLVMBuildSExt(c->b, v, c->i64, n->str)
			    : LLVMBuildZExt(c->b, v, c->i64, n->str);
}

/* ---- return probes: retval, func, nsecs (owned by the return-probe work) ---- */

static LLVMValueRef load_reg(struct cg *c, uint64_t off, const char *name)
{
	LLVMValueRef o = cg_const(c, off);
	LLVMValueRef p = LLVMBuildGEP2(c->b, c->i8, c->regs, &o, 1, "");
	return LLVMBuildLoad2(c->b, c->i64, p, name);
}

/*
 * In a return trampoline's register block (arch.h) rax is the return
 * value and r11 the probed function.  nsecs is rt_nsecs() (runtime
 * rt_time.c: the TSC scaled to CLOCK_BOOTTIME by factors ubt measured).
 */
LLVMValueRef cg_builtin_ret(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "retval") && c->side == CG_SIDE_TARGET)
		return load_reg(c, offsetof(struct rt_regs, rax), "retval");
	if (!strcmp(n->str, "func") && c->side == CG_SIDE_TARGET)
		return load_reg(c, offsetof(struct rt_regs, r11), "func");
	if (!strcmp(n->str, "nsecs")) {
		LLVMTypeRef fty = LLVMFunctionType(c->i64, NULL, 0, 0);
		LLVMValueRef f = LLVMGetNamedFunction(c->mod, "rt_nsecs");
		if (!f) {
			f = LLVMAddFunction(c->mod, "rt_nsecs", fty);
			LLVMSetVisibility(f, LLVMHiddenVisibility);
		}
		return LLVMBuildCall2(c->b, fty, f, NULL, 0, "nsecs");
	}
	return NULL;
}

/* ---- calls ------------------------------------------------------------ */

static const struct sema_printf *find_printf(struct cg *c, const struct ast_node *call)
{
	for (int i = 0; i < c->info->nprintfs; i++)
		if (c->info->printfs[i]->call == call)
			return c->info->printfs[i];
	return NULL;
}

static uint32_t arg_bytes(const struct ast_node *a)
{
	return a->type.kind == TY_STR ? ALIGN_UP((uint32_t)a->type.size, 8u) : 8;
}

/*
 * printf: a record [rt_event_hdr][u32 id, u32 0][args...] in the thread's
 * ring; ubt formats it.  Arguments are evaluated before reserving, so a
 * map lookup inside an argument never runs with a record half-written.
 */
static void call_printf(struct cg *c, const struct ast_node *n)
{
	const struct sema_printf *pf = find_printf(c, n);
	if (!pf || !c->thread) {
		cg_fail(c, n, "internal: printf without format information");
		return;
	}
	int nargs = n->nkids - 1;
	LLVMValueRef vals[64];
	uint32_t len = sizeof(struct rt_event_hdr) + 8;
	for (int i = 0; i < nargs && i < 64; i++) {
		vals[i] = cg_expr(c, n->kids[i + 1]);
		len += arg_bytes(n->kids[i + 1]);
	}
	LLVMValueRef args[] = {c->thread, LLVMConstInt(c->i32, len, 0)};
	LLVMValueRef rec = LLVMBuildCall2(c->b, c->ty_ring_reserve, c->fn_ring_reserve, args, 2,
					  "rec");
	LLVMBasicBlockRef fill = cg_new_bb(c, "printf_fill"), done = cg_new_bb(c, "printf_done");
	LLVMBuildCondBr(c->b, LLVMBuildIsNull(c->b, rec, ""), done, fill);
	LLVMPositionBuilderAtEnd(c->b, fill);
	uint64_t hdr_len_type = (uint64_t)ALIGN_UP(len, 8u) | ((uint64_t)RT_EV_PRINTF << 32);
	LLVMBuildStore(c->b, cg_const(c, hdr_len_type), rec);
	LLVMTypeRef cty = LLVMFunctionType(c->i64, NULL, 0, 0);
	LLVMValueRef rdtsc = LLVMGetNamedFunction(c->mod, "llvm.readcyclecounter");
	if (!rdtsc)
		rdtsc = LLVMAddFunction(c->mod, "llvm.readcyclecounter", cty);
	LLVMValueRef tsc = LLVMBuildCall2(c->b, cty, rdtsc, NULL, 0, "tsc");
	uint64_t off = 8;
	LLVMValueRef o = cg_const(c, off);
	LLVMBuildStore(c->b, tsc, LLVMBuildGEP2(c->b, c->i8, rec, &o, 1, ""));
	off = sizeof(struct rt_event_hdr);
	o = cg_const(c, off);
	LLVMBuildStore(c->b, cg_const(c, (uint64_t)pf->id), LLVMBuildGEP2(c->b, c->i8, rec, &o, 1, ""));
	off += 8;
	for (int i = 0; i < nargs && i < 64; i++) {
		const struct ast_node *a = n->kids[i + 1];
		o = cg_const(c, off);
		LLVMValueRef dst = LLVMBuildGEP2(c->b, c->i8, rec, &o, 1, "");
		if (a->type.kind == TY_STR) {
			LLVMBuildMemSet(c->b, dst, LLVMConstInt(c->i8, 0, 0), cg_const(c, arg_bytes(a)),
					1);
			cg_copy_str(c, dst, vals[i], a->type.size);
		} else {
			LLVMBuildStore(c->b, vals[i], dst);
		}
		off += arg_bytes(a);
	}
	LLVMBuildCall2(c->b, c->ty_ring_commit, c->fn_ring_commit, &c->thread, 1, "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
}

static void call_exit(struct cg *c)
{
	LLVMValueRef p = cg_shm_ptr(c, offsetof(struct rt_shm_header, exit_req));
	LLVMValueRef st = LLVMBuildStore(c->b, LLVMConstInt(c->i32, 1, 0), p);
	LLVMSetVolatile(st, 1);
	/* like bpftrace, nothing after exit() in this probe runs */
	LLVMBuildBr(c->b, c->exit_bb);
	LLVMPositionBuilderAtEnd(c->b, cg_new_bb(c, "after_exit"));
}

LLVMValueRef cg_call(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "printf"))
		call_printf(c, n);
	else if (!strcmp(n->str, "exit"))
		call_exit(c);
	else
		cg_fail(c, n, "this function is not supported by the code generator yet");
	return cg_const(c, 0);
}

