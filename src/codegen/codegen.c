/*
 * codegen.c - drives LLVM: one module per side, one function per probe,
 * the O2 pipeline, and emission of a relocatable object (see codegen.h).
 *
 * Probe function shape (what every probe compiles to):
 *
 *   preserve_most void ubt_probe_N(rdi, rsi, rdx, rcx, r8, r9) {   (abi.h: handlers)
 *       regs = the struct rt_regs those and the caller's frame make;
 *       if (!ubt_priv.enabled) return;                 (see struct rt_priv)
 *       [t = rt_thread_enter(); if (!t) return;]     only if the probe prints
 *       if (!(predicate)) goto out;
 *       body...
 *     out:
 *       [rt_thread_exit(t);]
 *   }
 *
 * Probe code is built for the baseline x86-64 without x87/MMX/SSE: the
 * trampolines save only general-purpose registers.
 */
#include "cg_internal.h"
#include "util/util.h"

#include <llvm-c/Analysis.h>
#include <stdio.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

LLVMValueRef cg_const(struct cg *c, uint64_t v)
{
	return LLVMConstInt(c->i64, v, 0);
}

LLVMValueRef cg_shm_ptr(struct cg *c, uint64_t off)
{
	LLVMValueRef idx = cg_const(c, off);
	return LLVMBuildGEP2(c->b, c->i8, c->shm, &idx, 1, "");
}

void cg_fail(struct cg *c, const struct ast_node *n, const char *what)
{
	struct src_loc none = {0};
	diag_error(c->diags, n ? n->loc : none, "%s", what);
	c->failed = 1;
}

static LLVMValueRef declare(struct cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
			    int np, LLVMTypeRef *fty)
{
	*fty = LLVMFunctionType(ret, params, np, 0);
	LLVMValueRef f = LLVMAddFunction(c->mod, name, *fty);
	LLVMSetVisibility(f, LLVMHiddenVisibility);
	LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(c->ctx,
							LLVMGetEnumAttributeKindForName("nounwind", 8),
							0));
	return f;
}

static void declare_runtime(struct cg *c)
{
	LLVMTypeRef p1[] = {c->ptr}, p2[] = {c->ptr, c->i32}, p3[] = {c->ptr, c->ptr, c->i32};
	c->fn_thread_enter = declare(c, "rt_thread_enter", c->ptr, NULL, 0, &c->ty_thread_enter);
	c->fn_thread_exit = declare(c, "rt_thread_exit", c->void_t, p1, 1, &c->ty_thread_exit);
	/* the inline reservation's slow path (cg_ring_reserve set `writing`) */
	c->fn_ring_reserve = declare(c, "rt_ring_reserve_slow", c->ptr, p2, 2, &c->ty_ring_reserve);
	c->fn_ring_commit = declare(c, "rt_ring_commit", c->void_t, p1, 1, &c->ty_ring_commit);
	c->fn_map_lookup = declare(c, "rt_map_lookup_pm", c->i64, p3, 3, &c->ty_map_lookup);
	c->fn_gettid = declare(c, "rt_gettid", c->i32, NULL, 0, &c->ty_gettid);
	LLVMTypeRef pp[] = {c->ptr, c->ptr};
	c->fn_map_delete = declare(c, "rt_map_delete_pm", c->i64, pp, 2, &c->ty_map_delete);
}

static void add_fn_attr(struct cg *c, LLVMValueRef f, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static bool has_ret_point(const struct ast_node *probe)
{
	for (int i = 0; i < probe->nkids; i++)
		if (!strcmp(probe->kids[i]->attach.provider, "uretprobe"))
			return true;
	return false;
}

/* word k of the caller's frame F (abi.h): F is just above our return address */
static LLVMValueRef frame_word(struct cg *c, LLVMValueRef frame, int k)
{
	LLVMValueRef idx = cg_const(c, 8 * (uint64_t)(k + 1));
	return LLVMBuildLoad2(c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, frame, &idx, 1, ""), "");
}

static void regs_put(struct cg *c, LLVMValueRef regs, int64_t off, LLVMValueRef v)
{
	LLVMValueRef idx = LLVMConstInt(c->i64, (uint64_t)off, 1);
	LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, c->i8, regs, &idx, 1, ""));
}

/*
 * A target-side handler's view of the registers (abi.h, "How trampolines
 * call the probe code"): a struct rt_regs in the handler's own frame,
 * with `func` in the word below it for return probes, filled from the
 * parameters and the caller's frame.  Builtins read it at rt_regs offsets;
 * SROA turns every read into the parameter or frame load it stands for and
 * drops the rest, so a probe that reads nothing costs nothing.  A probe
 * with both uprobe and uretprobe points is built for the return frame:
 * its entry side then reads garbage for retval and func, as bpftrace's
 * would (and as ubt's older trampolines did).  A USDT variant reads the
 * struct rt_regs_mid the mid-function trampoline points F at.  F is
 * c->frame: just above the handler's return address, or, for a handler on
 * a probe stack, its parameter (abi.h, "Probe stacks"); `ra` below is the
 * word under F, where the trampoline's return address lies.
 */
static void handler_regs(struct cg *c, const struct ast_node *probe)
{
	LLVMValueRef idx = LLVMConstInt(c->i64, (uint64_t)-8, 1);
	LLVMValueRef ra = LLVMBuildGEP2(c->b, c->i8, c->frame, &idx, 1, "ra_slot");
	idx = cg_const(c, 8);
	LLVMValueRef mid = LLVMBuildLoad2(c->b, c->ptr, LLVMBuildGEP2(c->b, c->i8, ra, &idx, 1, ""),
					  "mid_regs");
	/* profile probes are called by rt_profile_sig (runtime/thread/rt_profile.c) with
	 * the interrupted registers as a struct rt_regs_mid, like a usdt site */
	if (c->usdt_spec || c->sys_spec ||
	    (probe->nkids && !strcmp(probe->kids[0]->attach.provider, "profile"))) {
		c->regs = c->frame_regs = mid;
		return;
	}
	/* ustack wants `ret` at the real return slot: a struct rt_regs placed
	 * so (sema_stack_kind: 0 entry, 1 mid-function, 2 return) */
	int kind = sema_stack_kind(probe);
	int64_t ret_at = kind == 2 ? 8 + (int64_t)offsetof(struct rt_ret_frame, ret)
				   : 8 + (int64_t)offsetof(struct rt_entry_frame, ret);
	idx = LLVMConstInt(c->i64, (uint64_t)(ret_at - (int64_t)offsetof(struct rt_regs, ret)), 1);
	c->frame_regs = kind == 1 ? mid : LLVMBuildGEP2(c->b, c->i8, ra, &idx, 1, "frame_regs");
	LLVMValueRef blk = LLVMBuildAlloca(c->b, LLVMArrayType(c->i64, 1 + sizeof(struct rt_regs) / 8),
					   "regs_blk");
	LLVMValueRef one = cg_const(c, 8);
	c->regs = LLVMBuildGEP2(c->b, c->i8, blk, &one, 1, "regs");
	static const int param_off[] = {
		offsetof(struct rt_regs, rdi), offsetof(struct rt_regs, rsi),
		offsetof(struct rt_regs, rdx), offsetof(struct rt_regs, rcx),
		offsetof(struct rt_regs, r8),  offsetof(struct rt_regs, r9),
	};
	for (int i = 0; i < 6; i++)
		regs_put(c, c->regs, param_off[i], LLVMGetParam(c->fn, (unsigned)i));
	regs_put(c, c->regs, offsetof(struct rt_regs, r10), cg_const(c, 0));
	if (has_ret_point(probe)) {
#define RF(field) ((int)(offsetof(struct rt_ret_frame, field) / 8))
		regs_put(c, c->regs, RT_RET_FUNC_OFF, frame_word(c, ra, RF(func)));
		regs_put(c, c->regs, offsetof(struct rt_regs, rax), frame_word(c, ra, RF(rax)));
		regs_put(c, c->regs, offsetof(struct rt_regs, r11), frame_word(c, ra, RF(r11)));
		regs_put(c, c->regs, offsetof(struct rt_regs, ret), frame_word(c, ra, RF(ret)));
#undef RF
	} else {
		regs_put(c, c->regs, RT_RET_FUNC_OFF, cg_const(c, 0));
		regs_put(c, c->regs, offsetof(struct rt_regs, rax), cg_const(c, 0));
		regs_put(c, c->regs, offsetof(struct rt_regs, r11),
			 frame_word(c, ra, offsetof(struct rt_entry_frame, r11) / 8));
		regs_put(c, c->regs, offsetof(struct rt_regs, ret),
			 frame_word(c, ra, offsetof(struct rt_entry_frame, ret) / 8));
	}
}

/* The trampoline's frame F of a handler on the target's stack: just above its return address. */
static LLVMValueRef frame_above_ra(struct cg *c)
{
	LLVMTypeRef fty = LLVMFunctionType(c->ptr, NULL, 0, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, "llvm.addressofreturnaddress.p0");
	if (!f)
		f = LLVMAddFunction(c->mod, "llvm.addressofreturnaddress.p0", fty);
	LLVMValueRef ra = LLVMBuildCall2(c->b, fty, f, NULL, 0, "ra_slot");
	return cg_gep_const(c, ra, 8);
}

/*
 * The stub a handler on a probe stack is called through (runtime/abi.h,
 * "Probe stacks"): %r11 = the handler, then rt_pstack_call (rt_pstack.c)
 * switches stacks and calls it.  Two instructions, a naked function.
 */
static void gen_stub(struct cg *c, const char *sym, LLVMValueRef body)
{
	LLVMValueRef stub = LLVMAddFunction(c->mod, sym, LLVMFunctionType(c->void_t, NULL, 0, 0));
	add_fn_attr(c, stub, "naked");
	add_fn_attr(c, stub, "nounwind");
	LLVMSetAlignment(stub, 16);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c->ctx, stub, "entry"));
	LLVMTypeRef fty = LLVMFunctionType(c->void_t, &c->ptr, 1, 0);
	static const char tmpl[] = "lea ${0:P}(%rip), %r11\n\tjmp rt_pstack_call";
	LLVMValueRef ia = LLVMGetInlineAsm(fty, (char *)tmpl, sizeof(tmpl) - 1, "s", 1, 1, 0,
					   LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(b, fty, ia, &body, 1, "");
	LLVMBuildUnreachable(b);
	LLVMDisposeBuilder(b);
	c->uses_pstack = true;
}

/* How a probe function is called (gen_probe). */
enum cg_fn_kind {
	CG_FN_HOST,    /* BEGIN/END/interval in ubt: void f(struct rt_regs *), C */
	CG_FN_TARGET,  /* a handler on the target's stack (abi.h: handlers) */
	CG_FN_PSTACK,  /* a handler on its thread's probe stack, behind a stub */
};

/*
 * Probe functions on the target side are handlers as abi.h describes
 * (preserve_most, argument registers as parameters), on the target's
 * stack or on a probe stack; BEGIN/END run in ubt and are plain C functions
 * taking a struct rt_regs * (att_run_host).
 */
static void gen_function(struct cg *c, const struct ast_node *probe, const char *sym,
			 enum cg_fn_kind kind)
{
	bool handler = kind != CG_FN_HOST;
	LLVMTypeRef params[8] = {c->ptr};
	int np = handler ? 6 : 1;
	for (int i = 0; handler && i < 6; i++)
		params[i] = c->i64;
	if (kind == CG_FN_PSTACK) {
		params[6] = params[7] = c->ptr; /* F, the thread's slot */
		np = 8;
	}
	LLVMTypeRef fty = LLVMFunctionType(c->void_t, params, (unsigned)np, 0);
	char *body = kind == CG_FN_PSTACK ? xasprintf("%s_body", sym) : NULL;
	c->fn = LLVMAddFunction(c->mod, body ? body : sym, fty);
	if (body) {
		LLVMSetVisibility(c->fn, LLVMHiddenVisibility);
		gen_stub(c, sym, c->fn);
		free(body);
	}
	c->pstack = kind == CG_FN_PSTACK;
	add_fn_attr(c, c->fn, "nounwind");
	/* map lookups' slow path is a call from inline asm (cg_map.c,
	 * slow_lookup), which LLVM does not see: nothing below %rsp */
	add_fn_attr(c, c->fn, "noredzone");
	if (handler) {
		LLVMSetFunctionCallConv(c->fn, LLVMPreserveMostCallConv);
		/* LLVM reports the frame's size (with the registers it saves),
		 * which decides the stack a handler runs on (frame_sizes) */
		LLVMAddTargetDependentFunctionAttr(c->fn, "warn-stack-size", "0");
	}
	/* a probe's hot path starts on its own cache line: at ~2 ns per hit,
	 * a split fetch block is measurable */
	LLVMSetAlignment(c->fn, 64);
	c->regs = handler ? NULL : LLVMGetParam(c->fn, 0);
	c->frame_regs = c->regs;
	c->probe = probe;
	c->nidx_memo = 0;
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "entry");
	LLVMBasicBlockRef body_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "body");
	LLVMBasicBlockRef ret = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ret");
	c->exit_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "out");
	LLVMPositionBuilderAtEnd(c->b, entry);
	c->frame = NULL;
	if (handler) {
		c->frame = kind == CG_FN_PSTACK ? LLVMGetParam(c->fn, 6) : frame_above_ra(c);
		handler_regs(c, probe);
	}

	/* scratch variables of this probe */
	for (int i = 0; i < c->info->nvars; i++) {
		const struct sema_var *v = c->info->vars[i];
		c->vars[i] = NULL;
		if (v->probe != probe)
			continue;
		LLVMTypeRef t = cg_is_buffer(&v->type) ? LLVMArrayType(c->i8, v->type.size) : c->i64;
		c->vars[i] = LLVMBuildAlloca(c->b, t, v->name);
		if (cg_is_buffer(&v->type))
			LLVMBuildMemSet(c->b, c->vars[i], LLVMConstInt(c->i8, 0, 0),
					cg_const(c, v->type.size), 1);
		else
			LLVMBuildStore(c->b, LLVMConstNull(t), c->vars[i]);
	}

	LLVMValueRef off = cg_const(c, offsetof(struct rt_priv, enabled));
	LLVMValueRef en = LLVMBuildLoad2(c->b, c->i32, LLVMBuildGEP2(c->b, c->i8, c->priv, &off, 1, ""),
					 "enabled");
	LLVMSetVolatile(en, 1);
	LLVMValueRef is_off = LLVMBuildICmp(c->b, LLVMIntEQ, en, LLVMConstInt(c->i32, 0, 0), "");
	if (c->side == CG_SIDE_HOST) {
		LLVMBuildCondBr(c->b, is_off, ret, body_bb);
	} else {
		/* off: detached, before main, or a fork child's first hit, which
		 * turns its probes on (runtime rt_fork_enable) */
		LLVMBasicBlockRef fork_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "fork");
		LLVMBuildCondBr(c->b, is_off, fork_bb, body_bb);
		LLVMPositionBuilderAtEnd(c->b, fork_bb);
		LLVMTypeRef fty;
		LLVMValueRef fn = cg_rt_fn(c, "rt_fork_enable", c->i32, NULL, 0, &fty);
		LLVMValueRef on = LLVMBuildCall2(c->b, fty, fn, NULL, 0, "");
		LLVMBuildCondBr(c->b,
				LLVMBuildICmp(c->b, LLVMIntEQ, on, LLVMConstInt(c->i32, 0, 0), ""),
				ret, body_bb);
	}
	LLVMPositionBuilderAtEnd(c->b, body_bb);
	cg_sys_dispatch(c, ret); /* a system-call site known only by %rax: the calls wanted */
	cg_loop_budget(c, probe);
	c->thread = NULL;
	if (kind == CG_FN_PSTACK) {
		/* rt_pstack_call found the slot and raised its depth */
		c->thread = LLVMGetParam(c->fn, 7);
	} else if (cg_needs_thread(probe) || cg_sys_needs_thread(c)) {
		c->thread = cg_thread_enter(c);
		LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "go");
		LLVMBuildCondBr(c->b, LLVMBuildIsNull(c->b, c->thread, ""), ret, go);
		LLVMPositionBuilderAtEnd(c->b, go);
	}
	c->host_tid = NULL;
	if (c->side == CG_SIDE_TARGET && c->facts && c->facts->pidns &&
	    cg_uses_builtin(probe, "tid"))
		c->host_tid = cg_host_tid(c);
	if (cg_sys_thread(c)) /* the number kept for sys_exit, and nothing else */
		goto out;
	if (probe->pred) {
		LLVMValueRef v = cg_expr(c, probe->pred);
		LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "pred_true");
		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, v, cg_const(c, 0), ""), yes,
				c->exit_bb);
		LLVMPositionBuilderAtEnd(c->b, yes);
	}
	if (probe->body)
		cg_stmt(c, probe->body);
out:
	LLVMBuildBr(c->b, c->exit_bb);
	LLVMPositionBuilderAtEnd(c->b, c->exit_bb);
	if (c->thread && kind != CG_FN_PSTACK)
		cg_thread_exit(c);
	LLVMBuildBr(c->b, ret);
	LLVMPositionBuilderAtEnd(c->b, ret);
	LLVMBuildRetVoid(c->b);
}

/*
 * Does handler fn call anything that would grow the target's stack by more
 * than a few words: a runtime function in C (everything but rt_nsecs, which
 * keeps every register and has no frame to speak of) or a block copy big
 * enough for LLVM to make it a call of memcpy?  (Inline assembly calls only
 * rt_map_lookup_r11, which switches to the probe stack itself.)
 */
static bool calls_out(LLVMValueRef fn)
{
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
		     in = LLVMGetNextInstruction(in)) {
			if (!LLVMIsACallInst(in))
				continue;
			LLVMValueRef callee = LLVMGetCalledValue(in);
			if (LLVMIsAInlineAsm(callee))
				continue;
			size_t len;
			const char *name = LLVMGetValueName2(callee, &len);
			if (!strcmp(name, "rt_nsecs"))
				continue;
			if (strncmp(name, "llvm.", 5))
				return true;
			if (!strncmp(name, "llvm.mem", 8)) {
				LLVMValueRef n = LLVMGetOperand(in, 2);
				if (!LLVMIsAConstantInt(n) || LLVMConstIntGetZExtValue(n) > 64)
					return true;
			}
		}
	return false;
}

/* Was handler sym found too big for the target's stack last time (frame_sizes)? */
static bool forced_pstack(const struct cg *c, const char *sym)
{
	for (int i = 0; i < c->nforced; i++)
		if (!strcmp(c->forced[i], sym))
			return true;
	return false;
}

/*
 * A probe function: in ubt (host), or a handler in the target, which runs
 * on the target's stack when it needs no more than a few words there (a
 * count, a map update by tid: no thread slot, no runtime call in C, a small
 * frame), and on its thread's probe stack otherwise (runtime/thread/rt_pstack.c).
 * Which calls a handler makes is known once it is built, so one that
 * turns out to call out is built again for the probe stack; one whose frame
 * turns out too big after code generation is too (cg_compile).
 */
static void gen_probe(struct cg *c, const struct ast_node *probe, const char *sym)
{
	if (c->side != CG_SIDE_TARGET) {
		gen_function(c, probe, sym, CG_FN_HOST);
		return;
	}
	bool pstack = cg_needs_thread(probe) || cg_sys_needs_thread(c) || forced_pstack(c, sym);
	gen_function(c, probe, sym, pstack ? CG_FN_PSTACK : CG_FN_TARGET);
	if (!pstack && !c->failed && calls_out(c->fn)) {
		LLVMDeleteFunction(c->fn);
		gen_function(c, probe, sym, CG_FN_PSTACK);
	}
}

/* Every site of probe `index` calls a variant (attach/resolve/names.c named them all). */
static bool named_sites(const struct cg *c, int index)
{
	for (int i = 0; c->facts && i < c->facts->nusdt; i++)
		if (c->facts->usdt[i].probe_index == index && c->facts->usdt[i].names)
			return true;
	return false;
}

static bool usdt_only(const struct ast_node *probe)
{
	for (int i = 0; i < probe->nkids; i++)
		if (strcmp(probe->kids[i]->attach.provider, "usdt"))
			return false;
	return probe->nkids > 0;
}

/*
 * usdt: one function per distinct argument list among the probe's
 * locations, ubt_probe_<N>_u<K>, each reading arguments per specs[K]
 * (cg_usdt_arg()).  Attach calls the variant of each location.  Not in
 * obj->probes: those are the functions BEGIN/END-style callers look up.
 */
static void gen_usdt_variants(struct cg *c, const struct ast_node *probe, int index)
{
	for (int i = 0; c->facts && i < c->facts->nusdt; i++) {
		const struct cg_usdt_variants *v = &c->facts->usdt[i];
		if (v->probe_index != index)
			continue;
		for (int k = 0; k < v->nspecs; k++) {
			char *sym = xasprintf("ubt_probe_%d_u%d", index, k);
			c->usdt_spec = v->specs[k].nargs >= 0 ? &v->specs[k] : NULL;
			c->sys_spec = v->specs[k].sys_kind ? &v->specs[k] : NULL;
			int of = v->names && v->name_of ? v->name_of[k] : -1;
			c->site_name = of >= 0 ? v->names[of] : NULL;
			c->site_names = v->names && of < 0 ? v : NULL;
			gen_probe(c, probe, sym);
			c->usdt_spec = NULL;
			c->sys_spec = NULL;
			c->site_name = NULL;
			c->site_names = NULL;
			free(sym);
		}
	}
}

static bool probe_on_side(const struct ast_node *probe, enum cg_side side)
{
	const char *prov = probe->nkids ? probe->kids[0]->attach.provider : "";
	/* interval probes run in ubt too, on a timer of its trace loop (tools/ubt.c) */
	bool host = !strcmp(prov, "BEGIN") || !strcmp(prov, "END") || !strcmp(prov, "interval");
	return side == CG_SIDE_HOST ? host : !host;
}

/*
 * The target features probe code is compiled for: no x87, MMX or vector
 * registers (probe code must not touch the program's; the handler
 * convention saves general registers only), plus the integer extensions
 * of this machine's CPU that shorten probe code (lzcnt: hist's bucket in
 * one instruction; bmi, popcnt), as the probes run on the machine ubt
 * runs on.  Not bmi2: its mulx made `nsecs` ~1 ns slower here
 * (bench/run.py --probe nsecs, side by side).
 */
static void host_int_features(char *out, size_t size)
{
	static const char *const ints[] = {"+lzcnt", "+bmi", "+popcnt"};
	snprintf(out, size, "-x87,-mmx,-sse,-sse2,-avx,-avx512f");
	char *host = LLVMGetHostCPUFeatures();
	for (size_t i = 0; host && i < sizeof(ints) / sizeof(ints[0]); i++) {
		size_t n = strlen(ints[i]);
		for (const char *p = host; (p = strstr(p, ints[i])); p += n)
			if ((p == host || p[-1] == ',') && (p[n] == ',' || !p[n])) {
				size_t used = strlen(out);
				snprintf(out + used, size - used, ",%s", ints[i]);
				break;
			}
	}
	LLVMDisposeMessage(host);
}

static LLVMTargetMachineRef make_tm(void)
{
	static int inited;
	if (!inited) {
		LLVMInitializeX86TargetInfo();
		LLVMInitializeX86Target();
		LLVMInitializeX86TargetMC();
		LLVMInitializeX86AsmPrinter();
		LLVMInitializeX86AsmParser();
		inited = 1;
	}
	LLVMTargetRef target;
	char *err = NULL;
	if (LLVMGetTargetFromTriple("x86_64-unknown-linux-gnu", &target, &err)) {
		LLVMDisposeMessage(err);
		return NULL;
	}
	char feats[128];
	host_int_features(feats, sizeof(feats));
	return LLVMCreateTargetMachine(target, "x86_64-unknown-linux-gnu", "x86-64", feats,
				       LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelSmall);
}

/*
 * Calls of the runtime functions that keep every register (abi.h,
 * RT_PRESERVING_FUNCS) use preserve_most, on the declaration and on every
 * call site (a call whose convention differs from its callee's is undefined
 * in LLVM IR), wherever in codegen the call was built.
 */
static void preserving_calls(struct cg *c)
{
	static const char *const names[] = {RT_PRESERVING_FUNCS};
	LLVMValueRef fns[sizeof(names) / sizeof(names[0])];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fns[i] = LLVMGetNamedFunction(c->mod, names[i]);
		if (fns[i])
			LLVMSetFunctionCallConv(fns[i], LLVMPreserveMostCallConv);
	}
	for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
		for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb;
		     bb = LLVMGetNextBasicBlock(bb))
			for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
			     in = LLVMGetNextInstruction(in)) {
				if (!LLVMIsACallInst(in))
					continue;
				LLVMValueRef callee = LLVMGetCalledValue(in);
				for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
					if (fns[i] && callee == fns[i])
						LLVMSetInstructionCallConv(
							in, LLVMPreserveMostCallConv);
			}
}

static int emit(struct cg *c, LLVMTargetMachineRef tm, bool keep_text, struct cg_object *obj)
{
	preserving_calls(c);
	char *err = NULL;
	LLVMMemoryBufferRef mb;
	if (LLVMVerifyModule(c->mod, LLVMReturnStatusAction, &err)) {
		diag_error(c->diags, (struct src_loc){0}, "internal: invalid IR: %s", err);
		LLVMDisposeMessage(err);
		return -1;
	}
	LLVMDisposeMessage(err);
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef e = LLVMRunPasses(c->mod, "default<O2>", tm, po);
	LLVMDisposePassBuilderOptions(po);
	if (e) {
		char *m = LLVMGetErrorMessage(e);
		diag_error(c->diags, (struct src_loc){0}, "internal: LLVM passes: %s", m);
		LLVMDisposeErrorMessage(m);
		return -1;
	}
	if (keep_text) {
		char *ir = LLVMPrintModuleToString(c->mod);
		obj->ir = xstrdup(ir);
		LLVMDisposeMessage(ir);
		if (!LLVMTargetMachineEmitToMemoryBuffer(tm, c->mod, LLVMAssemblyFile, &err, &mb)) {
			obj->asm_text = xstrndup(LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
			LLVMDisposeMemoryBuffer(mb);
		} else {
			LLVMDisposeMessage(err);
		}
	}
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, c->mod, LLVMObjectFile, &err, &mb)) {
		diag_error(c->diags, (struct src_loc){0}, "internal: LLVM code generation: %s",
			   err);
		LLVMDisposeMessage(err);
		return -1;
	}
	obj->pstack = c->uses_pstack;
	/* ustack reads the target's stack: the same fault handler (rt_stack.c) */
	obj->reads_target = LLVMGetNamedFunction(c->mod, "rt_read") ||
			    LLVMGetNamedFunction(c->mod, "rt_read_str") ||
			    LLVMGetNamedFunction(c->mod, "rt_stack_id");
	obj->uses_stack = LLVMGetNamedFunction(c->mod, "rt_stack_id") != NULL;
	obj->mid_regs = c->mid_regs;
	obj->ids_used = c->ids_used;
	obj->elf_size = LLVMGetBufferSize(mb);
	obj->elf = xmalloc(obj->elf_size);
	memcpy(obj->elf, LLVMGetBufferStart(mb), obj->elf_size);
	LLVMDisposeMemoryBuffer(mb);
	return 0;
}

/*
 * LLVM's diagnostics during code generation: handlers carry
 * "warn-stack-size"="0", so each reports its frame size (the registers it
 * saves included) as a warning, collected here by function name.
 */
static void on_diag(LLVMDiagnosticInfoRef di, void *arg)
{
	struct cg *c = arg;
	char *d = LLVMGetDiagInfoDescription(di);
	const char *at = strstr(d, "stack frame size ("); /* after "<unknown>:0:0: " */
	unsigned long long size, lim;
	char name[128];
	if (at && sscanf(at, "stack frame size (%llu) exceeds limit (%llu) in function '%127[^']'",
			 &size, &lim, name) == 3) {
		if (c->nframes == c->frames_cap) {
			c->frames_cap = c->frames_cap ? 2 * c->frames_cap : 64;
			c->frames = xrealloc(c->frames, (size_t)c->frames_cap * sizeof(*c->frames));
		}
		c->frames[c->nframes].name = xstrdup(name);
		c->frames[c->nframes++].size = size;
	} else if (LLVMGetDiagInfoSeverity(di) == LLVMDSError) {
		diag_error(c->diags, (struct src_loc){0}, "internal: LLVM: %s", d);
		c->failed = 1;
	}
	LLVMDisposeMessage(d);
}

/* (LLVM reports every frame above the limit of 0: one not reported has no frame) */
static uint64_t frame_of(const struct cg *c, const char *name)
{
	for (int i = 0; i < c->nframes; i++)
		if (!strcmp(c->frames[i].name, name))
			return c->frames[i].size;
	return 0;
}

/*
 * Checks every handler's frame after code generation: one on the target's
 * stack must fit RT_TARGET_FRAME (else it goes to the probe stack: its
 * name is added to c->forced and the module is built again); one on a
 * probe stack must fit CG_PSTACK_FRAME_MAX (else the script is refused).
 * Returns true when the module must be built again.
 */
static bool frame_sizes(struct cg *c, const struct ast_node *prog, struct cg_object *obj)
{
	bool again = false;
	for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f)) {
		size_t len;
		const char *name = LLVMGetValueName2(f, &len);
		if (LLVMIsDeclaration(f) || strncmp(name, "ubt_probe_", 10) ||
		    LLVMGetFunctionCallConv(f) != LLVMPreserveMostCallConv)
			continue;
		uint64_t size = frame_of(c, name);
		bool body = len > 5 && !strcmp(name + len - 5, "_body");
		if (!body && size > RT_TARGET_FRAME) {
			c->forced = xrealloc(c->forced, (size_t)(c->nforced + 1) * sizeof(char *));
			c->forced[c->nforced++] = xstrdup(name);
			again = true;
		} else if (body && size > obj->pstack_frame) {
			obj->pstack_frame = (uint32_t)(size < UINT32_MAX ? size : UINT32_MAX);
		}
		if (body && size > CG_PSTACK_FRAME_MAX) {
			int index = atoi(name + 10);
			const struct ast_node *probe = index < prog->nkids ? prog->kids[index] : NULL;
			diag_error(c->diags, probe ? probe->loc : (struct src_loc){0},
				   "the probe needs %llu bytes of stack, more than the %u ubt gives "
				   "one probe hit",
				   (unsigned long long)size, CG_PSTACK_FRAME_MAX);
			c->failed = 1;
		}
	}
	return again && !c->failed;
}

static void build_module(struct cg *c, const struct ast_node *prog, LLVMTargetMachineRef tm,
			 struct cg_object *obj)
{
	c->ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(c->ctx, on_diag, c);
	c->mod = LLVMModuleCreateWithNameInContext(c->side == CG_SIDE_HOST ? "ubt_host"
									  : "ubt_probes",
						   c->ctx);
	LLVMSetTarget(c->mod, "x86_64-unknown-linux-gnu");
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	char *dl = LLVMCopyStringRepOfTargetData(td);
	LLVMSetDataLayout(c->mod, dl);
	LLVMDisposeMessage(dl);
	LLVMDisposeTargetData(td);
	c->b = LLVMCreateBuilderInContext(c->ctx);
	c->i1 = LLVMInt1TypeInContext(c->ctx);
	c->i8 = LLVMInt8TypeInContext(c->ctx);
	c->i32 = LLVMInt32TypeInContext(c->ctx);
	c->i64 = LLVMInt64TypeInContext(c->ctx);
	c->ptr = LLVMPointerTypeInContext(c->ctx, 0);
	c->ptr_fs = LLVMPointerTypeInContext(c->ctx, 257);
	c->void_t = LLVMVoidTypeInContext(c->ctx);
	c->shm = LLVMAddGlobal(c->mod, c->i8, "ubt_shm");
	LLVMSetVisibility(c->shm, LLVMHiddenVisibility);
	c->priv = LLVMAddGlobal(c->mod, c->i8, "ubt_priv");
	LLVMSetVisibility(c->priv, LLVMHiddenVisibility);
	declare_runtime(c);
	obj->probes = xcalloc(prog->nkids ? prog->nkids : 1, sizeof(*obj->probes));
	for (int i = 0; i < prog->nkids; i++) {
		const struct ast_node *probe = prog->kids[i];
		if (!probe_on_side(probe, c->side))
			continue;
		if (!usdt_only(probe) && !named_sites(c, i)) {
			struct cg_probe *p = &obj->probes[obj->nprobes++];
			p->probe = probe;
			p->index = i;
			p->sym = xasprintf("ubt_probe_%d", i);
			gen_probe(c, probe, p->sym);
		}
		gen_usdt_variants(c, probe, i);
	}
}

static void drop_module(struct cg *c)
{
	c->names_table = NULL; /* it was the module's */
	LLVMDisposeBuilder(c->b);
	LLVMDisposeModule(c->mod);
	LLVMContextDispose(c->ctx);
	for (int i = 0; i < c->nframes; i++)
		free(c->frames[i].name);
	free(c->frames);
	c->frames = NULL;
	c->nframes = c->frames_cap = 0;
}

int cg_compile(const struct ast_node *prog, const struct sema_info *info,
	       const struct cg_layout *layout, const struct cg_facts *facts, enum cg_side side,
	       bool keep_text, struct cg_object *obj, struct diags *diags)
{
	struct cg c = {0};
	int ret = -1;
	memset(obj, 0, sizeof(*obj));
	LLVMTargetMachineRef tm = make_tm();
	if (!tm) {
		diag_error(diags, (struct src_loc){0}, "internal: no LLVM x86-64 target");
		return -1;
	}
	c.info = info;
	c.layout = layout;
	c.facts = facts;
	c.side = side;
	c.diags = diags;
	c.vars = xcalloc(info->nvars ? info->nvars : 1, sizeof(*c.vars));
	/* a second build only for handlers whose frames were too big for the
	 * target's stack (frame_sizes): they go to probe stacks then */
	for (int attempt = 0; attempt < 2; attempt++) {
		build_module(&c, prog, tm, obj);
		ret = c.failed ? -1 : emit(&c, tm, keep_text, obj);
		bool again = !ret && frame_sizes(&c, prog, obj);
		if (c.failed)
			ret = -1;
		drop_module(&c);
		if (!again)
			break;
		cg_object_free(obj);
		memset(obj, 0, sizeof(*obj));
	}
	free(c.vars);
	for (int i = 0; i < c.nforced; i++)
		free(c.forced[i]);
	free(c.forced);
	LLVMDisposeTargetMachine(tm);
	return ret;
}

void cg_object_free(struct cg_object *obj)
{
	for (int i = 0; i < obj->nprobes; i++)
		free(obj->probes[i].sym);
	free(obj->probes);
	free(obj->elf);
	free(obj->ir);
	free(obj->asm_text);
	memset(obj, 0, sizeof(*obj));
}
