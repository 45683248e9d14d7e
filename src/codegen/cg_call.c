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
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

bool cg_is_call(const struct ast_node *n, const char *name)
{
	return n && n->kind == AST_CALL && !strcmp(n->str, name);
}

bool cg_needs_thread(const struct ast_node *n)
{
	if (!n)
		return false;
	if (cg_is_call(n, "printf") || cg_is_call(n, "print") || cg_is_call(n, "clear") ||
	    cg_is_call(n, "zero"))
		return true;
	if (cg_reads_target(n)) /* rt_read's per-thread state (cg_expr.c) */
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

/* A runtime function, declared on first use. */
static LLVMValueRef rt_fn(struct cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
			  int np, LLVMTypeRef *fty)
{
	*fty = LLVMFunctionType(ret, params, np, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
	if (!f) {
		f = LLVMAddFunction(c->mod, name, *fty);
		LLVMSetVisibility(f, LLVMHiddenVisibility);
	}
	return f;
}

static LLVMValueRef hdr_load(struct cg *c, uint64_t off, LLVMTypeRef t)
{
	LLVMValueRef v = LLVMBuildLoad2(c->b, t, cg_shm_ptr(c, off), "");
	return t == c->i64 ? v : LLVMBuildZExt(c->b, v, c->i64, "");
}

/* nsecs as the return-probe work defines it (rt_time.c: the scaled TSC) */
static LLVMValueRef builtin_nsecs(struct cg *c)
{
	LLVMTypeRef fty;
	LLVMValueRef f = rt_fn(c, "rt_nsecs", c->i64, NULL, 0, &fty);
	return LLVMBuildCall2(c->b, fty, f, NULL, 0, "nsecs");
}

/* A string constant (probe, func) in a buffer of the type's size. */
static LLVMValueRef const_str(struct cg *c, const char *s, int size)
{
	char *bytes = xcalloc(1, size);
	strncpy(bytes, s, size - 1);
	LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMArrayType(c->i8, size), "cstr");
	LLVMSetInitializer(g, LLVMConstStringInContext(c->ctx, bytes, size, 1));
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	free(bytes);
	return g;
}

static LLVMValueRef builtin_probe(struct cg *c, const struct ast_node *n, bool func)
{
	const struct ast_node *ap = c->probe->nkids ? c->probe->kids[0] : NULL;
	char *text;
	if (!ap)
		text = xstrdup("");
	else if (func)
		text = xstrdup(ap->attach.func ? ap->attach.func : "");
	else if (ap->attach.target && ap->attach.func)
		text = xasprintf("%s:%s:%s", ap->attach.provider, ap->attach.target, ap->attach.func);
	else
		text = xstrdup(ap->str);
	LLVMValueRef v = const_str(c, text, n->type.size);
	free(text);
	return v;
}

static LLVMValueRef builtin_call(struct cg *c, const char *name, LLVMTypeRef ret, uint32_t arg)
{
	LLVMTypeRef fty, p[] = {c->i32};
	LLVMValueRef f = rt_fn(c, name, ret, p, arg == ~0u ? 0 : 1, &fty);
	LLVMValueRef a = LLVMConstInt(c->i32, arg, 0);
	LLVMValueRef v = LLVMBuildCall2(c->b, fty, f, &a, arg == ~0u ? 0 : 1, "");
	return ret == c->i64 ? v : LLVMBuildZExt(c->b, v, c->i64, "");
}

LLVMValueRef cg_builtin(struct cg *c, const struct ast_node *n)
{
	if (cg_is_stack(n))
		return cg_stack(c, n);
	if (!strcmp(n->str, "nsecs"))
		return builtin_nsecs(c);
	if (!strcmp(n->str, "elapsed"))
		return LLVMBuildSub(c->b, builtin_nsecs(c),
				    hdr_load(c, offsetof(struct rt_shm_header, start_ns), c->i64), "");
	if (!strcmp(n->str, "cpid"))
		return hdr_load(c, offsetof(struct rt_shm_header, cpid), c->i32);
	if (!strcmp(n->str, "uid"))
		return builtin_call(c, "rt_ids", c->i64, 0);
	if (!strcmp(n->str, "gid"))
		return builtin_call(c, "rt_ids", c->i64, 1);
	if (!strcmp(n->str, "numaid"))
		return builtin_call(c, "rt_ids", c->i64, 2);
	if (!strcmp(n->str, "rand"))
		return builtin_call(c, "rt_rand", c->i32, ~0u);
	if (!strcmp(n->str, "cpu")) {
		if (c->facts->has_rseq) {
			/* rseq's cpu_id; -1 (unregistered thread) falls back to getcpu */
			LLVMValueRef v = fs_load32(c, c->facts->rseq_off + RT_RSEQ_CPU_ID);
			LLVMValueRef bad = LLVMBuildICmp(c->b, LLVMIntEQ, v, cg_const(c, 0xffffffffu), "");
			LLVMValueRef res = cg_alloca(c, c->i64, "cpu");
			LLVMBuildStore(c->b, v, res);
			LLVMBasicBlockRef slow = cg_new_bb(c, "cpu_slow"), done = cg_new_bb(c, "cpu_done");
			LLVMBuildCondBr(c->b, bad, slow, done);
			LLVMPositionBuilderAtEnd(c->b, slow);
			LLVMBuildStore(c->b, builtin_call(c, "rt_ids", c->i64, 3), res);
			LLVMBuildBr(c->b, done);
			LLVMPositionBuilderAtEnd(c->b, done);
			return LLVMBuildLoad2(c->b, c->i64, res, "");
		}
		return builtin_call(c, "rt_ids", c->i64, 3);
	}
	if (!strcmp(n->str, "comm")) {
		LLVMValueRef buf = cg_alloca(c, LLVMArrayType(c->i8, 16), "comm");
		LLVMTypeRef fty, p[] = {c->ptr};
		LLVMValueRef f = rt_fn(c, "rt_comm", c->void_t, p, 1, &fty);
		LLVMBuildCall2(c->b, fty, f, &buf, 1, "");
		return buf;
	}
	if (!strcmp(n->str, "probe"))
		return builtin_probe(c, n, false);
	if (!strcmp(n->str, "func") && n->type.kind == TY_STR)
		return builtin_probe(c, n, true);
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
	if (cg_is_args(n)) /* cg_args.c */
		return cg_args(c, n);
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
 * value; the probed function is in the word below the block (abi.h).  nsecs is rt_nsecs() (runtime
 * rt_time.c: the TSC scaled to CLOCK_BOOTTIME by factors ubt measured).
 */
LLVMValueRef cg_builtin_ret(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "retval") && c->side == CG_SIDE_TARGET)
		return load_reg(c, offsetof(struct rt_regs, rax), "retval");
	if (!strcmp(n->str, "func") && c->side == CG_SIDE_TARGET && !cg_sym_is_entry(c))
		return load_reg(c, (uint64_t)RT_RET_FUNC_OFF, "func");
	if (!strcmp(n->str, "func") && c->side == CG_SIDE_TARGET)
		return cg_sym_func(c);
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

/* Reserves a ring record of len bytes with its header written; returns the
 * record (NULL when the ring is full: the caller skips to `*skip`). */
static LLVMValueRef event_begin(struct cg *c, uint32_t len, uint32_t type,
				LLVMBasicBlockRef *skip)
{
	len = ALIGN_UP(len, 8u);
	LLVMValueRef args[] = {c->thread, LLVMConstInt(c->i32, len, 0)};
	LLVMValueRef rec = LLVMBuildCall2(c->b, c->ty_ring_reserve, c->fn_ring_reserve, args, 2,
					  "rec");
	LLVMBasicBlockRef fill = cg_new_bb(c, "ev_fill");
	*skip = cg_new_bb(c, "ev_done");
	LLVMBuildCondBr(c->b, LLVMBuildIsNull(c->b, rec, ""), *skip, fill);
	LLVMPositionBuilderAtEnd(c->b, fill);
	LLVMBuildStore(c->b, cg_const(c, (uint64_t)len | ((uint64_t)type << 32)), rec);
	LLVMTypeRef cty = LLVMFunctionType(c->i64, NULL, 0, 0);
	LLVMValueRef rdtsc = LLVMGetNamedFunction(c->mod, "llvm.readcyclecounter");
	if (!rdtsc)
		rdtsc = LLVMAddFunction(c->mod, "llvm.readcyclecounter", cty);
	LLVMValueRef tsc = LLVMBuildCall2(c->b, cty, rdtsc, NULL, 0, "tsc");
	LLVMValueRef o = cg_const(c, 8);
	LLVMBuildStore(c->b, tsc, LLVMBuildGEP2(c->b, c->i8, rec, &o, 1, ""));
	return rec;
}

static void event_store(struct cg *c, LLVMValueRef rec, uint64_t off, LLVMValueRef v)
{
	LLVMValueRef o = cg_const(c, off);
	LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, c->i8, rec, &o, 1, ""));
}

static void event_end(struct cg *c, LLVMBasicBlockRef skip)
{
	LLVMBuildCall2(c->b, c->ty_ring_commit, c->fn_ring_commit, &c->thread, 1, "");
	LLVMBuildBr(c->b, skip);
	LLVMPositionBuilderAtEnd(c->b, skip);
}

static uint64_t literal_arg(const struct ast_node *n, int i)
{
	if (i >= n->nkids)
		return 0;
	const struct ast_node *a = n->kids[i];
	if (a->kind == AST_INT)
		return a->uval;
	return 0;
}

/* print(@m, top, div), clear(@m), zero(@m): an RT_EV_MAP event for ubt */
static void call_map_op(struct cg *c, const struct ast_node *n, uint32_t op)
{
	if (!c->thread || !n->nkids || !n->kids[0]->map) {
		cg_fail(c, n, "internal: map operation without a map");
		return;
	}
	LLVMBasicBlockRef skip;
	uint32_t len = sizeof(struct rt_event_hdr) + sizeof(struct rt_ev_map);
	LLVMValueRef rec = event_begin(c, len, RT_EV_MAP, &skip);
	uint64_t h = sizeof(struct rt_event_hdr);
	event_store(c, rec, h, cg_const(c, op | ((uint64_t)n->kids[0]->map->id << 32)));
	event_store(c, rec, h + offsetof(struct rt_ev_map, top), cg_const(c, literal_arg(n, 1)));
	event_store(c, rec, h + offsetof(struct rt_ev_map, div), cg_const(c, literal_arg(n, 2)));
	event_end(c, skip);
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

/* str(p [, n]): a fault-tolerant copy into a buffer of the result's size */
static LLVMValueRef call_str(struct cg *c, const struct ast_node *n)
{
	int size = n->type.size;
	const struct ast_node *a = n->kids[0];
	LLVMValueRef buf = cg_alloca(c, LLVMArrayType(c->i8, size), "str");
	LLVMValueRef src = cg_expr(c, a);
	if (a->type.kind == TY_STR) {
		/* already a string: copy (and cut) it */
		LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, size), 1);
		cg_copy_str(c, buf, src, (uint64_t)(a->type.size < size ? a->type.size : size - 1));
		return buf;
	}
	LLVMValueRef len = cg_const(c, size);
	if (n->nkids == 2) {
		/* str(p, n) keeps at most n - 1 characters, as bpftrace */
		LLVMValueRef want = cg_expr(c, n->kids[1]);
		LLVMValueRef lt = LLVMBuildICmp(c->b, LLVMIntULT, want, len, "");
		len = LLVMBuildSelect(c->b, lt, want, len, "");
	}
	/* fault-tolerant (runtime/rt_read.c); the thread slot says how to read */
	LLVMValueRef th = c->thread ? c->thread : LLVMConstNull(c->ptr);
	LLVMTypeRef fty, p[] = {c->ptr, c->ptr, c->i64, c->i64};
	LLVMValueRef f = rt_fn(c, "rt_read_str", c->i64, p, 4, &fty);
	LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, size), 1);
	LLVMValueRef args[] = {th, buf, src, len};
	LLVMBuildCall2(c->b, fty, f, args, 4, "");
	return buf;
}

LLVMValueRef cg_call(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "str"))
		return call_str(c, n);
	if (cg_is_stack(n))
		return cg_stack(c, n);
	if (!strcmp(n->str, "printf"))
		call_printf(c, n);
	else if (!strcmp(n->str, "exit"))
		call_exit(c);
	else if (!strcmp(n->str, "print") && n->kids[0]->kind == AST_MAP)
		call_map_op(c, n, RT_MOP_PRINT);
	else if (!strcmp(n->str, "clear"))
		call_map_op(c, n, RT_MOP_CLEAR);
	else if (!strcmp(n->str, "zero"))
		call_map_op(c, n, RT_MOP_ZERO);
	else if (!strcmp(n->str, "delete"))
		cg_map_delete(c, n->kids[0]);
	else if (!strcmp(n->str, "usym"))
		return cg_expr(c, n->kids[0]); /* the address; output/sym.c names it */
	else if (!strcmp(n->str, "uaddr"))
		return cg_const(c, n->cval); /* the global's address in the target (attach/dwarf.c) */
	else
		cg_fail(c, n, "this function is not supported by the code generator yet");
	return cg_const(c, 0);
}


/* ---- symbols (issue 7: func in a uprobe) --------------------------------- */

/* Every attach point of the probe is a uprobe (not a return probe). */
bool cg_sym_is_entry(const struct cg *c)
{
	for (int i = 0; c->probe && i < c->probe->nkids; i++) {
		const char *p = c->probe->kids[i]->attach.provider;
		if (!p || strcmp(p, "uprobe"))
			return false;
	}
	return true;
}

/*
 * func in a uprobe: the probe function's own return address, which lies in
 * the trampoline of the site that called it (one trampoline per site, so a
 * wildcard probe learns which function it is in for one load).  The output
 * maps trampoline addresses back to their site (out_sym_alias).
 */
LLVMValueRef cg_sym_func(struct cg *c)
{
	LLVMTypeRef fty = LLVMFunctionType(c->ptr, &c->i32, 1, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, "llvm.returnaddress");
	if (!f)
		f = LLVMAddFunction(c->mod, "llvm.returnaddress", fty);
	LLVMValueRef zero = LLVMConstInt(c->i32, 0, 0);
	LLVMValueRef ra = LLVMBuildCall2(c->b, fty, f, &zero, 1, "ra");
	return LLVMBuildPtrToInt(c->b, ra, c->i64, "func");
}
