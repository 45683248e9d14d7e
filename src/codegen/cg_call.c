/*
 * cg_call.c - LLVM IR for builtins (pid, tid, argN, ...) and function
 * calls (printf, exit, ...).  printf events go to the thread's ring
 * (runtime/data/rt_ring.c); ubt formats them.
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
	    cg_is_call(n, "zero") || cg_is_call(n, "time") || cg_is_call(n, "system") ||
	    cg_is_call(n, "cat") || cg_is_call(n, "join") || cg_is_call(n, "macaddr") ||
	    cg_is_call(n, "errorf") || cg_is_call(n, "warnf"))
		return true;
	if (cg_reads_target(n) || cg_is_stack(n)) /* rt_read's per-thread state (cg_expr.c) */
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

LLVMValueRef cg_fs_load32(struct cg *c, int64_t off)
{
	LLVMValueRef p = LLVMBuildIntToPtr(c->b, cg_const(c, (uint64_t)off), c->ptr_fs, "");
	return LLVMBuildZExt(c->b, LLVMBuildLoad2(c->b, c->i32, p, ""), c->i64, "");
}

/*
 * pid or tid (fast, as the process's own threads have them), unless this
 * thread's %fs:0 is the one that last called vfork or posix_spawn
 * (rt_priv.vfork_tp): its child may be running on that TCB, and the
 * kernel knows whose ids these are (rt_vfork_id).  One load and compare.
 */
static LLVMValueRef vfork_checked(struct cg *c, LLVMValueRef fast, int want_tid)
{
	LLVMValueRef off = cg_const(c, offsetof(struct rt_priv, vfork_tp));
	LLVMValueRef vt = LLVMBuildLoad2(c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->priv, &off, 1, ""),
					 "vfork_tp");
	LLVMSetVolatile(vt, 1);
	LLVMValueRef tp = LLVMBuildLoad2(c->b, c->i64, LLVMConstNull(c->ptr_fs), "tp");
	LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
	LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "vfork_child");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "vfork_done");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, vt, tp, ""), slow, done);
	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMTypeRef fty, pt = c->i32;
	LLVMValueRef fn = cg_rt_fn(c, "rt_vfork_id", c->i64, &pt, 1, &fty);
	LLVMValueRef arg = LLVMConstInt(c->i32, (unsigned)want_tid, 0);
	LLVMValueRef real = LLVMBuildCall2(c->b, fty, fn, &arg, 1, "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	LLVMValueRef phi = LLVMBuildPhi(c->b, c->i64, want_tid ? "tid" : "pid");
	LLVMValueRef vals[2] = {fast, real};
	LLVMBasicBlockRef blocks[2] = {from, slow};
	LLVMAddIncoming(phi, vals, blocks, 2);
	return phi;
}

/* A runtime function, declared on first use. */
LLVMValueRef cg_rt_fn(struct cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
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
	return cg_nsecs(c); /* cg_time.c */
}

/*
 * nsecs(mode): ubt's nsecs is CLOCK_BOOTTIME; another clock is it plus that
 * clock's distance from CLOCK_BOOTTIME, read now, as the code is compiled
 * (a suspend, or a step of the TAI clock while tracing, is not followed).
 */
static LLVMValueRef clock_of(struct cg *c, LLVMValueRef boot_ns, enum ast_clock mode)
{
	clockid_t id = mode == AST_CLOCK_MONOTONIC			   ? CLOCK_MONOTONIC
		       : mode == AST_CLOCK_TAI || mode == AST_CLOCK_SW_TAI ? CLOCK_TAI
									   : CLOCK_BOOTTIME;
	if (id == CLOCK_BOOTTIME)
		return boot_ns;
	/* the other clock read between two reads of CLOCK_BOOTTIME, whose
	 * middle it is compared with; the closest bracket of a few */
	int64_t d = 0, best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		struct timespec a, b, e;
		clock_gettime(CLOCK_BOOTTIME, &a);
		clock_gettime(id, &b);
		clock_gettime(CLOCK_BOOTTIME, &e);
		int64_t ta = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
		int64_t te = (int64_t)e.tv_sec * 1000000000 + e.tv_nsec;
		int64_t tb = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
		if (te - ta < best) {
			best = te - ta;
			d = tb - (ta + (te - ta) / 2);
		}
	}
	return LLVMBuildAdd(c->b, boot_ns, cg_const(c, (uint64_t)d), "nsecs_clock");
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

/*
 * A private constant table of n strings, each size bytes (cut to size - 1
 * and NUL-padded), for a `probe` chosen at run time: by site id here, by
 * system-call number in cg_args.c.
 */
LLVMValueRef cg_string_table(struct cg *c, char *const *names, int n, int size, const char *name)
{
	LLVMTypeRef row = LLVMArrayType(c->i8, (unsigned)size);
	LLVMValueRef *rows = xcalloc((size_t)n, sizeof(*rows));
	char *bytes = xcalloc(1, (size_t)size);
	for (int i = 0; i < n; i++) {
		memset(bytes, 0, (size_t)size);
		strncpy(bytes, names[i], (size_t)size - 1);
		rows[i] = LLVMConstStringInContext(c->ctx, bytes, (unsigned)size, 1);
	}
	LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMArrayType(row, (unsigned)n), name);
	LLVMSetInitializer(g, LLVMConstArray(row, rows, (unsigned)n));
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	free(rows);
	free(bytes);
	return g;
}

/*
 * The probe's names as one constant table of `size`-byte strings, made
 * once per probe (its variants share it).  Thousands of names cost the
 * code image ~80 bytes each, and the compiler no time to speak of.
 */
static LLVMValueRef names_table(struct cg *c, int size)
{
	const struct cg_usdt_variants *v = c->site_names;
	if (c->names_table && c->names_table_probe == v->probe_index && c->names_table_size == size)
		return c->names_table;
	LLVMValueRef g = cg_string_table(c, v->names, v->nnames, size, "probe_names");
	c->names_table = g;
	c->names_table_probe = v->probe_index;
	c->names_table_size = size;
	return g;
}

/*
 * `probe` at a site of a variant with several names: the entry of the
 * names table its trampoline's site id selects.  The id is the u32 at the
 * handler's return address + 3 (runtime/abi.h, "Site ids"); the return
 * address is the word below F, as for `func` (cg_sym_func).  An id past
 * the table (our own code holds it, but the target can write anywhere)
 * reads entry 0 rather than out of bounds.
 */
static LLVMValueRef site_probe_name(struct cg *c, int size)
{
	LLVMValueRef table = names_table(c, size);
	LLVMValueRef ra = LLVMBuildIntToPtr(c->b, cg_sym_func(c), c->ptr, "site_ra");
	LLVMValueRef at = cg_gep_const(c, ra, RT_SITE_ID_OFF);
	LLVMValueRef id = LLVMBuildLoad2(c->b, c->i32, at, "site_id");
	LLVMSetAlignment(id, 1);
	id = LLVMBuildZExt(c->b, id, c->i64, "");
	LLVMValueRef ok =
	    LLVMBuildICmp(c->b, LLVMIntULT, id, cg_const(c, (uint64_t)c->site_names->nnames), "");
	id = LLVMBuildSelect(c->b, ok, id, cg_const(c, 0), "");
	LLVMValueRef off = LLVMBuildMul(c->b, id, cg_const(c, (uint64_t)size), "");
	return LLVMBuildGEP2(c->b, c->i8, table, &off, 1, "probe_name");
}

static LLVMValueRef builtin_probe(struct cg *c, const struct ast_node *n, bool func)
{
	const struct ast_node *ap = c->probe->nkids ? c->probe->kids[0] : NULL;
	char *text;
	if (c->sys_idx && !func) /* a site whose number only %rax knows (cg_args.c) */
		return cg_sys_probe_name(c, n->type.size);
	if (c->site_names && !func)
		return site_probe_name(c, n->type.size);
	if (c->site_name && !func) /* this variant's sites (attach/resolve/names.c) */
		text = xstrdup(c->site_name);
	else if (!ap)
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
	LLVMValueRef f = cg_rt_fn(c, name, ret, p, arg == ~0u ? 0 : 1, &fty);
	LLVMValueRef a = LLVMConstInt(c->i32, arg, 0);
	LLVMValueRef v = LLVMBuildCall2(c->b, fty, f, &a, arg == ~0u ? 0 : 1, "");
	return ret == c->i64 ? v : LLVMBuildZExt(c->b, v, c->i64, "");
}

/*
 * cpu, numaid: a field of the thread's struct rseq; a thread rseq does not
 * know (cpu_id -1: not registered) asks getcpu (rt_ids(what)).
 */
static LLVMValueRef rseq_field(struct cg *c, int64_t field, uint32_t what)
{
	LLVMValueRef cpu = cg_fs_load32(c, c->facts->rseq_off + RT_RSEQ_CPU_ID);
	LLVMValueRef v =
	    field == RT_RSEQ_CPU_ID ? cpu : cg_fs_load32(c, c->facts->rseq_off + field);
	LLVMValueRef bad = LLVMBuildICmp(c->b, LLVMIntEQ, cpu, cg_const(c, 0xffffffffu), "");
	LLVMValueRef res = cg_alloca(c, c->i64, "rseq_field");
	LLVMBuildStore(c->b, v, res);
	LLVMBasicBlockRef slow = cg_new_bb(c, "rseq_slow"), done = cg_new_bb(c, "rseq_done");
	LLVMBuildCondBr(c->b, bad, slow, done);
	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMBuildStore(c->b, builtin_call(c, "rt_ids", c->i64, what), res);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return LLVMBuildLoad2(c->b, c->i64, res, "");
}

/*
 * comm, uid, gid: the thread's cached copy (struct rt_ids in its slot,
 * rt_builtin.c), good while its gen equals the header's ids_gen:
 *
 *   t = this thread's slot (c->thread, or found inline without the guard)
 *   p = t found && t->ids.gen == hdr->ids_gen ? &t->ids : rt_ids_load(&tmp), &tmp
 *
 * Returns p (struct rt_ids *), or NULL where the cache cannot serve: in
 * ubt (BEGIN/END run once), and where the kernel tid's place in the TCB is
 * unknown, since a new thread reusing a dead one's TCB would then find the
 * dead thread's copy.
 */
static LLVMValueRef ids_ptr(struct cg *c, uint32_t use)
{
	if (c->side != CG_SIDE_TARGET || !c->facts || !c->facts->has_tid)
		return NULL;
	c->ids_used |= use;
	LLVMValueRef ok, t;
	if (c->thread) {
		t = c->thread;
		ok = LLVMConstInt(c->i1, 1, 0);
	} else {
		t = cg_thread_slot(c, &ok);
	}
	LLVMValueRef ids = cg_gep_const(c, t, offsetof(struct rt_thread, ids));
	LLVMValueRef tg = LLVMBuildLoad2(c->b, c->i64, ids, "ids_gen");
	LLVMValueRef hg = LLVMBuildLoad2(c->b, c->i64,
					 cg_shm_ptr(c, offsetof(struct rt_shm_header, ids_gen)), "");
	LLVMSetVolatile(tg, 1);
	LLVMSetVolatile(hg, 1);
	ok = LLVMBuildAnd(c->b, ok, LLVMBuildICmp(c->b, LLVMIntEQ, tg, hg, ""), "");
	LLVMValueRef tmp = cg_alloca(c, LLVMArrayType(c->i8, sizeof(struct rt_ids)), "ids");
	LLVMBasicBlockRef here = LLVMGetInsertBlock(c->b);
	LLVMBasicBlockRef slow = cg_new_bb(c, "ids_slow"), done = cg_new_bb(c, "ids_done");
	LLVMBuildCondBr(c->b, ok, done, slow);
	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMTypeRef fty, p[] = {c->ptr};
	LLVMValueRef f = cg_rt_fn(c, "rt_ids_load", c->void_t, p, 1, &fty);
	LLVMBuildCall2(c->b, fty, f, &tmp, 1, "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return cg_phi2(c, c->ptr, ids, here, tmp, slow, "ids");
}

/* uid (what 0) or gid (what 1) */
static LLVMValueRef builtin_cred(struct cg *c, uint32_t what)
{
	LLVMValueRef p = ids_ptr(c, RT_IDS_CRED);
	if (!p)
		return builtin_call(c, "rt_ids", c->i64, what);
	uint64_t off = what ? offsetof(struct rt_ids, gid) : offsetof(struct rt_ids, uid);
	return LLVMBuildZExt(c->b, LLVMBuildLoad2(c->b, c->i32, cg_gep_const(c, p, off), ""), c->i64,
			     "");
}

static LLVMValueRef builtin_comm(struct cg *c)
{
	LLVMValueRef buf = cg_alloca(c, LLVMArrayType(c->i8, 16), "comm");
	LLVMValueRef p = ids_ptr(c, RT_IDS_COMM);
	if (p) {
		LLVMBuildMemCpy(c->b, buf, 8, cg_gep_const(c, p, offsetof(struct rt_ids, comm)), 8,
				cg_const(c, 16));
		return buf;
	}
	LLVMTypeRef fty, pt[] = {c->ptr};
	LLVMValueRef f = cg_rt_fn(c, "rt_comm", c->void_t, pt, 1, &fty);
	LLVMBuildCall2(c->b, fty, f, &buf, 1, "");
	return buf;
}

LLVMValueRef cg_builtin_uid(struct cg *c)
{
	return builtin_cred(c, 0);
}

static LLVMValueRef builtin_sarg(struct cg *c, const struct ast_node *n);

LLVMValueRef cg_builtin(struct cg *c, const struct ast_node *n)
{
	if (cg_is_stack(n))
		return cg_stack(c, n);
	if (!strcmp(n->str, "nsecs"))
		return clock_of(c, builtin_nsecs(c), (enum ast_clock)n->uval);
	if (!strcmp(n->str, "elapsed"))
		return LLVMBuildSub(c->b, builtin_nsecs(c),
				    hdr_load(c, offsetof(struct rt_shm_header, start_ns), c->i64), "");
	if (!strcmp(n->str, "cgroup"))
		return hdr_load(c, offsetof(struct rt_shm_header, cgroup_id), c->i64);
	if (!strcmp(n->str, "cpid"))
		return hdr_load(c, offsetof(struct rt_shm_header, cpid), c->i32);
	if (!strcmp(n->str, "uid"))
		return cg_builtin_uid(c);
	if (!strcmp(n->str, "gid"))
		return builtin_cred(c, 1);
	if (!strcmp(n->str, "numaid")) {
		if (c->facts->has_rseq && c->facts->rseq_node)
			return rseq_field(c, RT_RSEQ_NODE_ID, 2);
		return builtin_call(c, "rt_ids", c->i64, 2);
	}
	if (!strcmp(n->str, "rand"))
		return builtin_call(c, "rt_rand", c->i32, ~0u);
	if (!strcmp(n->str, "cpu")) {
		if (c->facts->has_rseq)
			return rseq_field(c, RT_RSEQ_CPU_ID, 3);
		return builtin_call(c, "rt_ids", c->i64, 3);
	}
	if (!strcmp(n->str, "comm"))
		return builtin_comm(c);
	if (!strcmp(n->str, "kstack"))
		return const_str(c, "", 1);
	if (!strcmp(n->str, "username")) {
		/* a blob (ast_type_is_blob): the uid in an 8-byte buffer */
		LLVMValueRef buf = cg_alloca(c, c->i64, "username");
		LLVMBuildStore(c->b, cg_builtin_uid(c), buf);
		return buf;
	}
	if (!strcmp(n->str, "probe"))
		return builtin_probe(c, n, false);
	if (!strcmp(n->str, "func") && n->type.kind == TY_STR)
		return builtin_probe(c, n, true);
	if (!strcmp(n->str, "pid")) {
		if (c->side == CG_SIDE_HOST)
			return cg_const(c, (uint64_t)getpid());
		/* the private page's: a fork child's own (runtime rt_fork_enable) */
		LLVMValueRef off = cg_const(c, offsetof(struct rt_priv, pid));
		LLVMValueRef p = LLVMBuildGEP2(c->b, c->i8, c->priv, &off, 1, "");
		return vfork_checked(c, LLVMBuildZExt(c->b, LLVMBuildLoad2(c->b, c->i32, p, ""),
						      c->i64, ""), 0);
	}
	if (!strcmp(n->str, "tid")) {
		if (c->side == CG_SIDE_HOST)
			return cg_own_tid(c);
		LLVMValueRef t = c->host_tid;
		if (!t)
			t = c->facts->pidns ? cg_host_tid(c) : cg_own_tid(c);
		return vfork_checked(c, t, 1);
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
	if (!strncmp(n->str, "arg", 3) && n->builtin_arg >= 6 && c->side == CG_SIDE_TARGET) {
		/* at a function entry the probed function's sp is &regs->ret (the
		 * return address); argument N > 5 is the word at sp + 8 * (N - 5),
		 * in the caller's frame, so the load cannot fault (sema allows it
		 * only at entries, cg_sym_is_entry) */
		if (!cg_sym_is_entry(c)) {
			cg_fail(c, n, "arguments past arg5 are read only at a function's entry");
			return cg_const(c, 0);
		}
		LLVMValueRef off = cg_const(c, offsetof(struct rt_regs, ret) +
						   8 * (uint64_t)(n->builtin_arg - 5));
		LLVMValueRef p = LLVMBuildGEP2(c->b, c->i8, c->frame_regs, &off, 1, "");
		return LLVMBuildLoad2(c->b, c->i64, p, n->str);
	}
	if (!strncmp(n->str, "sarg", 4))
		return builtin_sarg(c, n);
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
	if (a->kind == CG_USDT_BAD) {
		cg_fail(c, n, "internal: usdt argument cannot be read"); /* usdt.c refused it */
		return cg_const(c, 0);
	}
	if (a->kind == CG_USDT_CONST) {
		v = cg_const(c, (uint64_t)a->val);
		if (a->pcrel)
			v = LLVMBuildAdd(c->b, v, usdt_reg(c, offsetof(struct rt_regs_mid, pc)), "");
	} else if (a->kind == CG_USDT_REG) {
		v = usdt_reg(c, a->reg);
		if (a->shift)
			v = LLVMBuildLShr(c->b, v, cg_const(c, a->shift), "");
	} else {
		LLVMValueRef addr = cg_const(c, (uint64_t)a->val);
		if (a->pcrel) /* a symbol: relative to the location's run-time address */
			addr = LLVMBuildAdd(c->b, addr, usdt_reg(c, offsetof(struct rt_regs_mid, pc)), "");
		if (a->seg == CG_USDT_SEG_FS) /* the probe runs on the thread: %fs:0 is its base */
			addr = LLVMBuildAdd(c->b, addr,
					    LLVMBuildLoad2(c->b, c->i64, LLVMConstNull(c->ptr_fs), ""), "");
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
 * value; the probed function is in the word below the block (abi.h).  nsecs is cg_nsecs() (cg_time.c, as runtime
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
	if (!strcmp(n->str, "nsecs")) /* cg_time.c */
		return clock_of(c, cg_nsecs(c), (enum ast_clock)n->uval);
	return NULL;
}

/* ---- calls ------------------------------------------------------------ */

const struct sema_printf *cg_find_printf(struct cg *c, const struct ast_node *call)
{
	for (int i = 0; i < c->info->nprintfs; i++)
		if (c->info->printfs[i]->call == call)
			return c->info->printfs[i];
	return NULL;
}

/* Byte-array values (strings, buf, tuples) travel by their size; everything else as 8 bytes. */
static bool cg_is_bytes(const struct ast_type *t)
{
	return cg_is_buffer(t);
}

static uint32_t arg_bytes(const struct ast_node *a)
{
	return cg_is_bytes(&a->type) ? ALIGN_UP((uint32_t)a->type.size, 8u) : 8;
}

static void emit_args_event(struct cg *c, uint32_t type, uint32_t id, const struct ast_node **args,
			    int nargs);

/* ---- the thread slot and its ring, inline ------------------------------ */

LLVMValueRef cg_gep_const(struct cg *c, LLVMValueRef p, uint64_t off)
{
	LLVMValueRef o = cg_const(c, off);
	return LLVMBuildGEP2(c->b, c->i8, p, &o, 1, "");
}

static void signal_fence(struct cg *c)
{
	LLVMBuildFence(c->b, LLVMAtomicOrderingSequentiallyConsistent, 1, "");
}

/*
 * The thread's slot, as rt_thread_enter() finds it (rt_thread.c), or NULL,
 * with its depth raised.  The common case is inline: the slot the thread
 * pointer hashes to holds this thread (tp, and tid where its place in the
 * TCB is known).  Anything else (first hit, a collision, a reused TCB)
 * calls rt_thread_enter().
 */
/* The slot the thread pointer hashes to; *ok: it holds this thread. */
LLVMValueRef cg_thread_slot(struct cg *c, LLVMValueRef *okp)
{
	const struct cg_layout *l = c->layout;
	LLVMValueRef tpp = LLVMConstNull(c->ptr_fs);
	LLVMValueRef tp = LLVMBuildLoad2(c->b, c->i64, tpp, "tp");
	LLVMValueRef h = LLVMBuildMul(c->b, tp, cg_const(c, RT_TP_HASH_MUL), "");
	h = LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, h, cg_const(c, RT_TP_HASH_SHIFT), ""),
			 cg_const(c, l->nthreads - 1), "");
	LLVMValueRef off = LLVMBuildAdd(c->b, LLVMBuildShl(c->b, h, cg_const(c, RT_THREAD_SHIFT), ""),
					cg_const(c, l->threads_off), "");
	LLVMValueRef t = LLVMBuildGEP2(c->b, c->i8, c->shm, &off, 1, "slot");
	LLVMValueRef ok = LLVMBuildICmp(c->b, LLVMIntEQ, LLVMBuildLoad2(c->b, c->i64, t, ""), tp, "");
	/* %fs:0 of 0 (a Go thread's, rt.h rt_thread_pointer) matches free
	 * slots: the runtime finds the thread by its %fs base */
	ok = LLVMBuildAnd(c->b, ok, LLVMBuildICmp(c->b, LLVMIntNE, tp, cg_const(c, 0), ""), "");
	if (c->facts && c->facts->has_tid) {
		LLVMValueRef tid = LLVMBuildLoad2(
			c->b, c->i32,
			LLVMBuildIntToPtr(c->b, cg_const(c, (uint64_t)(int64_t)c->facts->tid_off),
					  c->ptr_fs, ""), "");
		LLVMValueRef st = LLVMBuildLoad2(
			c->b, c->i32, cg_gep_const(c, t, offsetof(struct rt_thread, tid)), "");
		ok = LLVMBuildAnd(c->b, ok, LLVMBuildICmp(c->b, LLVMIntEQ, tid, st, ""), "");
	}
	*okp = ok;
	return t;
}

/* depth += d: a plain increment (a signal handler that interrupts it
 * restores the value before this code goes on, rt_thread.c) */
static void add_depth(struct cg *c, LLVMValueRef t, int d)
{
	LLVMValueRef p = cg_gep_const(c, t, offsetof(struct rt_thread, depth));
	LLVMValueRef v = LLVMBuildLoad2(c->b, c->i32, p, "depth");
	LLVMSetVolatile(v, 1);
	LLVMValueRef st = LLVMBuildStore(c->b, LLVMBuildAdd(c->b, v, LLVMConstInt(c->i32, (uint64_t)(int64_t)d, 1), ""), p);
	LLVMSetVolatile(st, 1);
}

LLVMValueRef cg_thread_enter(struct cg *c)
{
	LLVMValueRef ok, t = cg_thread_slot(c, &ok);
	LLVMBasicBlockRef fast = cg_new_bb(c, "th_fast"), slow = cg_new_bb(c, "th_slow"),
			  done = cg_new_bb(c, "th_done");
	LLVMBuildCondBr(c->b, ok, fast, slow);
	LLVMPositionBuilderAtEnd(c->b, fast);
	add_depth(c, t, 1);
	signal_fence(c);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMValueRef st2 = LLVMBuildCall2(c->b, c->ty_thread_enter, c->fn_thread_enter, NULL, 0, "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return cg_phi2(c, c->ptr, t, fast, st2, slow, "thread");
}

/* rt_thread_exit(), inline: depth goes down after everything else. */
void cg_thread_exit(struct cg *c)
{
	signal_fence(c);
	add_depth(c, c->thread, -1);
}

/*
 * Reserves len bytes (a multiple of 8) in the thread's ring and writes the
 * record header; returns the record, with the builder in a block that runs
 * only when the reservation succeeded (a full ring goes to *skip, where
 * the slow path counted the loss).  The common case is inline: the record
 * fits before the ring's end and the ring has room.  Otherwise
 * rt_ring_reserve() pads, or counts the loss.  A probe that interrupted
 * another's write into this ring (`writing`, rt_ring.c) drops its event,
 * counted.  *newhead is what cg_ring_commit() publishes.
 */
LLVMValueRef cg_ring_reserve(struct cg *c, uint32_t len, uint32_t type, uint32_t id,
			     LLVMValueRef *newhead, LLVMBasicBlockRef *skip)
{
	const struct cg_layout *l = c->layout;
	uint64_t size = l->ring_size;
	len = ALIGN_UP(len, 8u);
	LLVMValueRef t = c->thread;
	/* another write of this thread's is half done: this probe interrupted it */
	LLVMValueRef wp = cg_gep_const(c, t, offsetof(struct rt_thread, writing));
	LLVMValueRef w = LLVMBuildLoad2(c->b, c->i32, wp, "writing");
	LLVMSetVolatile(w, 1);
	LLVMBasicBlockRef nested = cg_new_bb(c, "ring_nested"), free_ = cg_new_bb(c, "ring_free");
	*skip = cg_new_bb(c, "ring_done");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, w, LLVMConstInt(c->i32, 0, 0), ""),
			nested, free_);
	LLVMPositionBuilderAtEnd(c->b, nested);
	LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpAdd,
			   cg_shm_ptr(c, offsetof(struct rt_shm_header, reentered)), cg_const(c, 1),
			   LLVMAtomicOrderingMonotonic, 0);
	LLVMBuildBr(c->b, *skip);
	LLVMPositionBuilderAtEnd(c->b, free_);
	LLVMSetVolatile(LLVMBuildStore(c->b, LLVMConstInt(c->i32, 1, 0), wp), 1);
	signal_fence(c);
	LLVMValueRef head = LLVMBuildLoad2(c->b, c->i64,
					   cg_gep_const(c, t, offsetof(struct rt_thread, ring_head)), "");
	/* the tail this thread last saw: ubt only ever moves the real one
	 * forward, so room counted from it is there; short of room, the slow
	 * path reads the real tail */
	LLVMValueRef tail = LLVMBuildLoad2(c->b, c->i64,
					   cg_gep_const(c, t, offsetof(struct rt_thread, tail_seen)), "");
	LLVMValueRef pos = LLVMBuildAnd(c->b, head, cg_const(c, size - 1), "");
	LLVMValueRef nh = LLVMBuildAdd(c->b, head, cg_const(c, len), "");
	LLVMValueRef fits = LLVMBuildICmp(c->b, LLVMIntULE, pos, cg_const(c, size - len), "");
	LLVMValueRef room = LLVMBuildICmp(c->b, LLVMIntULE, LLVMBuildSub(c->b, nh, tail, ""),
					  cg_const(c, size), "");
	LLVMBasicBlockRef fast = cg_new_bb(c, "ring_fast"), slow = cg_new_bb(c, "ring_slow"),
			  fill = cg_new_bb(c, "ring_fill");
	if (len > size / 2) {
		LLVMBuildBr(c->b, slow);
	} else {
		LLVMBuildCondBr(c->b, LLVMBuildAnd(c->b, fits, room, ""), fast, slow);
	}
	/* ring i is at rings_off + i * size, where i = (t - threads) / sizeof(struct rt_thread) */
	LLVMPositionBuilderAtEnd(c->b, fast);
	LLVMValueRef ti = LLVMBuildSub(c->b, LLVMBuildPtrToInt(c->b, t, c->i64, ""),
				       LLVMBuildPtrToInt(c->b, cg_shm_ptr(c, l->threads_off), c->i64,
							 ""), "");
	LLVMValueRef roff = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, ti, cg_const(c, size >> RT_THREAD_SHIFT), ""),
					 cg_const(c, l->rings_off), "");
	roff = LLVMBuildAdd(c->b, roff, pos, "");
	LLVMValueRef rec_fast = LLVMBuildGEP2(c->b, c->i8, c->shm, &roff, 1, "");
	LLVMBuildBr(c->b, fill);

	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMValueRef args[] = {t, LLVMConstInt(c->i32, len, 0)};
	LLVMValueRef rec_slow = LLVMBuildCall2(c->b, c->ty_ring_reserve, c->fn_ring_reserve, args, 2,
					       "");
	LLVMBasicBlockRef slow_ok = cg_new_bb(c, "ring_slow_ok");
	LLVMBuildCondBr(c->b, LLVMBuildIsNull(c->b, rec_slow, ""), *skip, slow_ok);
	LLVMPositionBuilderAtEnd(c->b, slow_ok);
	LLVMValueRef nh_slow = LLVMBuildLoad2(
		c->b, c->i64, cg_gep_const(c, t, offsetof(struct rt_thread, ring_resv)), "");
	LLVMBuildBr(c->b, fill);

	LLVMPositionBuilderAtEnd(c->b, fill);
	LLVMValueRef rec = cg_phi2(c, c->ptr, rec_fast, fast, rec_slow, slow_ok, "rec");
	*newhead = cg_phi2(c, c->i64, nh, fast, nh_slow, slow_ok, "newhead");
	uint64_t hdr = (uint64_t)len | ((uint64_t)type << 32) | ((uint64_t)id << 48);
	LLVMBuildStore(c->b, cg_const(c, hdr), rec);
	return rec;
}

/* Publishes the record: a release store of ring_head, then the write is
 * over (rt_ring_commit). */
void cg_ring_commit(struct cg *c, LLVMValueRef newhead, LLVMBasicBlockRef skip)
{
	LLVMValueRef st = LLVMBuildStore(c->b, newhead,
					 cg_gep_const(c, c->thread, offsetof(struct rt_thread, ring_head)));
	LLVMSetOrdering(st, LLVMAtomicOrderingRelease);
	LLVMSetAlignment(st, 8);
	signal_fence(c);
	LLVMSetVolatile(LLVMBuildStore(c->b, LLVMConstInt(c->i32, 0, 0),
				       cg_gep_const(c, c->thread, offsetof(struct rt_thread, writing))),
			1);
	LLVMBuildBr(c->b, skip);
	LLVMPositionBuilderAtEnd(c->b, skip);
}

/*
 * Stores the values of args (AST nodes) at rec + off in printf's argument
 * layout: integers as 8 bytes, strings zero-padded to their size rounded
 * up to 8.
 */
static void store_args(struct cg *c, LLVMValueRef rec, uint64_t off, const struct ast_node **args,
		       LLVMValueRef *vals, int n)
{
	for (int i = 0; i < n; i++) {
		const struct ast_node *a = args[i];
		LLVMValueRef dst = cg_gep_const(c, rec, off);
		if (a->type.kind == TY_STR || cg_is_bytes(&a->type)) {
			LLVMBuildMemSet(c->b, dst, LLVMConstInt(c->i8, 0, 0), cg_const(c, arg_bytes(a)),
					1);
			cg_copy_str(c, dst, vals[i], a->type.size);
		} else {
			LLVMBuildStore(c->b, vals[i], dst);
		}
		off += arg_bytes(a);
	}
}

/*
 * printf: a record [rt_event_hdr id=printf id][args...] in the thread's
 * ring; ubt formats it.  Arguments are evaluated before reserving, so a
 * map lookup inside an argument never runs with a record half-written.
 */
static void call_printf(struct cg *c, const struct ast_node *n)
{
	const struct sema_printf *pf = cg_find_printf(c, n);
	if (!pf || !c->thread) {
		cg_fail(c, n, "internal: printf without format information");
		return;
	}
	emit_args_event(c, RT_EV_PRINTF, (uint32_t)pf->id, (const struct ast_node **)n->kids + 1,
			n->nkids - 1);
}

/* An event whose payload is the values of args, as for printf. */
static void emit_args_event(struct cg *c, uint32_t type, uint32_t id, const struct ast_node **args,
			    int nargs)
{
	LLVMValueRef vals[64];
	uint32_t len = sizeof(struct rt_event_hdr);
	if (nargs > 64)
		nargs = 64;
	for (int i = 0; i < nargs; i++) {
		vals[i] = cg_expr(c, args[i]);
		len += arg_bytes(args[i]);
	}
	LLVMValueRef nh;
	LLVMBasicBlockRef skip;
	LLVMValueRef rec = cg_ring_reserve(c, len, type, id, &nh, &skip);
	store_args(c, rec, sizeof(struct rt_event_hdr), args, vals, nargs);
	cg_ring_commit(c, nh, skip);
}

/* Reserves a ring record of len bytes with its header written; returns the
 * record (the caller ends with event_end). */
static LLVMValueRef event_begin(struct cg *c, uint32_t len, uint32_t type,
				LLVMBasicBlockRef *skip, LLVMValueRef *nh)
{
	return cg_ring_reserve(c, len, type, 0, nh, skip);
}

static void event_store(struct cg *c, LLVMValueRef rec, uint64_t off, LLVMValueRef v)
{
	LLVMValueRef o = cg_const(c, off);
	LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, c->i8, rec, &o, 1, ""));
}

static void event_end(struct cg *c, LLVMBasicBlockRef skip, LLVMValueRef nh)
{
	cg_ring_commit(c, nh, skip);
}

static uint64_t literal_arg(const struct ast_node *n, int i)
{
	if (i >= n->nkids)
		return 0;
	int64_t v;
	return ast_int_literal(n->kids[i], &v) ? (uint64_t)v : 0;
}

/* print(@m, top, div), clear(@m), zero(@m): an RT_EV_MAP event for ubt */
static void call_map_op(struct cg *c, const struct ast_node *n, uint32_t op)
{
	if (!c->thread || !n->nkids || !n->kids[0]->map) {
		cg_fail(c, n, "internal: map operation without a map");
		return;
	}
	LLVMBasicBlockRef skip;
	LLVMValueRef nh;
	uint32_t len = sizeof(struct rt_event_hdr) + sizeof(struct rt_ev_map);
	LLVMValueRef rec = event_begin(c, len, RT_EV_MAP, &skip, &nh);
	uint64_t h = sizeof(struct rt_event_hdr);
	event_store(c, rec, h, cg_const(c, op | ((uint64_t)n->kids[0]->map->id << 32)));
	/* stats maps ignore top and div, as in bpftrace 0.17 (sema warns) */
	bool stats = n->kids[0]->map->value.kind == TY_STATS;
	event_store(c, rec, h + offsetof(struct rt_ev_map, top),
		    cg_const(c, stats ? 0 : literal_arg(n, 1)));
	event_store(c, rec, h + offsetof(struct rt_ev_map, div),
		    cg_const(c, stats ? 0 : literal_arg(n, 2)));
	event_end(c, skip, nh);
}

/*
 * exit(): the request in the shared header (the trace loop stops), and an
 * RT_EV_EXIT record in this thread's ring, after this thread's earlier
 * output: ubt prints nothing it reads after that record (output.c), as
 * bpftrace prints nothing after its exit event, so a hot probe that calls
 * exit() prints once however often it ran before the detach.
 */
static void call_exit(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef code = NULL;
	if (n->nkids == 1) {
		code = cg_expr(c, n->kids[0]);
		LLVMBuildStore(c->b, LLVMBuildTrunc(c->b, code, c->i32, ""),
			       cg_shm_ptr(c, offsetof(struct rt_shm_header, exit_code)));
	}
	LLVMValueRef p = cg_shm_ptr(c, offsetof(struct rt_shm_header, exit_req));
	LLVMValueRef st = LLVMBuildStore(c->b, LLVMConstInt(c->i32, 1, 0), p);
	LLVMSetVolatile(st, 1);
	if (c->thread) {
		LLVMBasicBlockRef skip;
		LLVMValueRef nh;
		LLVMValueRef rec = event_begin(c, sizeof(struct rt_event_hdr) + 8, RT_EV_EXIT, &skip,
					       &nh);
		event_store(c, rec, sizeof(struct rt_event_hdr),
			    code ? LLVMBuildZExtOrBitCast(c->b, code, c->i64, "") : cg_const(c, 0));
		event_end(c, skip, nh);
	}
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
		/* already a string (`str($1)`): copied and cut at size - 1, and at
		 * the length when there is one (`str($2, 3)`) */
		LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, size), 1);
		cg_copy_str(c, buf, src, (uint64_t)(a->type.size < size ? a->type.size : size - 1));
		if (n->nkids == 2) {
			LLVMValueRef want = cg_expr(c, n->kids[1]), last = cg_const(c, size - 1);
			LLVMValueRef at = LLVMBuildSelect(
				c->b, LLVMBuildICmp(c->b, LLVMIntULT, want, last, ""), want, last, "");
			LLVMBuildStore(c->b, LLVMConstInt(c->i8, 0, 0),
				       LLVMBuildGEP2(c->b, c->i8, buf, &at, 1, ""));
		}
		return buf;
	}
	LLVMValueRef len = cg_const(c, size);
	if (n->nkids == 2) {
		/* str(p, n) keeps at most n characters (and at most size - 1), as
		 * bpftrace 0.17: str(p, 10) of "abcdefghijk..." is "abcdefghij" */
		LLVMValueRef want = cg_expr(c, n->kids[1]);
		LLVMValueRef lt = LLVMBuildICmp(c->b, LLVMIntULT, want, len, "");
		LLVMValueRef want1 = LLVMBuildAdd(c->b, want, cg_const(c, 1), "");
		len = LLVMBuildSelect(c->b, lt, want1, len, "");
	}
	/* fault-tolerant (runtime/mem/rt_read.c); the thread slot says how to read */
	LLVMValueRef th = c->thread ? c->thread : LLVMConstNull(c->ptr);
	LLVMTypeRef fty, p[] = {c->ptr, c->ptr, c->i64, c->i64};
	LLVMValueRef f = cg_rt_fn(c, "rt_read_str", c->i64, p, 4, &fty);
	LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, size), 1);
	LLVMValueRef args[] = {th, buf, src, len};
	LLVMValueRef rd = LLVMBuildCall2(c->b, fty, f, args, 4, "");
	cg_check_read(c, n, rd, a->type.as, true); /* -kk (cg_check.c) */
	return buf;
}

/*
 * print(value), time(fmt), system(fmt, ...), cat(fmt, ...): carried out by
 * ubt (output/calls.c) when it reaches the event, in the thread's event
 * order: an RT_EV_VALUE / RT_EV_CALL record with the call's id and its
 * argument values, as printf's.
 */
static void call_deferred(struct cg *c, const struct ast_node *n)
{
	const struct sema_printf *pf = cg_find_printf(c, n);
	if (!pf || !c->thread) {
		cg_fail(c, n, "internal: call without format information");
		return;
	}
	bool value = !strcmp(n->str, "print");
	int first = value ? 0 : (n->nkids && n->kids[0]->kind == AST_STR ? 1 : 0);
	emit_args_event(c, value ? RT_EV_VALUE : RT_EV_CALL, (uint32_t)pf->id,
			(const struct ast_node **)n->kids + first, pf->nargs);
}

/* bswap(x): the bytes of x's type reversed */
static LLVMValueRef call_bswap(struct cg *c, const struct ast_node *n)
{
	int bits = n->type.size * 8;
	LLVMValueRef v = cg_expr(c, n->kids[0]);
	if (bits == 8)
		return LLVMBuildAnd(c->b, v, cg_const(c, 0xff), "");
	LLVMTypeRef ity = LLVMIntTypeInContext(c->ctx, bits);
	unsigned id = LLVMLookupIntrinsicID("llvm.bswap", 10);
	LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->mod, id, &ity, 1);
	LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, &ity, 1);
	LLVMValueRef x = bits == 64 ? v : LLVMBuildTrunc(c->b, v, ity, "");
	LLVMValueRef r = LLVMBuildCall2(c->b, fty, f, &x, 1, "bswap");
	return bits == 64 ? r : LLVMBuildZExt(c->b, r, c->i64, "");
}

/* has_key(@m[k]): the key's entry exists (no insert) */
static LLVMValueRef call_has_key(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef res = cg_alloca(c, c->i64, "has_key");
	LLVMBuildStore(c->b, cg_const(c, 0), res);
	LLVMBasicBlockRef miss;
	cg_map_index(c, n->kids[0], false, &miss);
	LLVMBuildStore(c->b, cg_const(c, 1), res);
	cg_map_done(c, miss);
	return LLVMBuildLoad2(c->b, c->i64, res, "");
}

/* len(@m): live entries (rt_map.c counts them; a scalar map has one) */
static LLVMValueRef call_len(struct cg *c, const struct ast_node *n)
{
	const struct cg_map_layout *ml = cg_map_of(c, n->kids[0]);
	if (!ml->hdr.key_size)
		return cg_const(c, 1);
	LLVMTypeRef fty, p[] = {c->ptr};
	LLVMValueRef f = cg_rt_fn(c, "rt_map_len", c->i64, p, 1, &fty);
	LLVMValueRef m = cg_shm_ptr(c, ml->off);
	return LLVMBuildCall2(c->b, fty, f, &m, 1, "len");
}

/*
 * reg("name") (sema_reg_call says where each is available): a profile probe
 * reads its struct rt_regs_mid (runtime/thread/rt_profile.c filled every word from
 * the interrupted context); entry and return probes read their struct
 * rt_regs, and sp is where the return address is (entry) or was (return).
 */
static LLVMValueRef cg_reg(struct cg *c, const struct ast_node *n)
{
	static const int mid_off[SEMA_NREGS] = {
		offsetof(struct rt_regs_mid, r15), offsetof(struct rt_regs_mid, r14),
		offsetof(struct rt_regs_mid, r13), offsetof(struct rt_regs_mid, r12),
		offsetof(struct rt_regs_mid, rbp), offsetof(struct rt_regs_mid, rbx),
		offsetof(struct rt_regs_mid, r11), offsetof(struct rt_regs_mid, r10),
		offsetof(struct rt_regs_mid, r9),  offsetof(struct rt_regs_mid, r8),
		offsetof(struct rt_regs_mid, rax), offsetof(struct rt_regs_mid, rcx),
		offsetof(struct rt_regs_mid, rdx), offsetof(struct rt_regs_mid, rsi),
		offsetof(struct rt_regs_mid, rdi), -1, offsetof(struct rt_regs_mid, pc), -1,
		offsetof(struct rt_regs_mid, flags), offsetof(struct rt_regs_mid, rsp), -1,
	};
	const char *r = sema_reg_names[n->cval];
	const char *prov = c->probe->nkids ? c->probe->kids[0]->attach.provider : "";
	if (!strcmp(r, "orig_ax"))
		return cg_const(c, ~0ull); /* not in a system call */
	if (!strcmp(r, "cs"))
		return cg_const(c, 0x33); /* x86-64 Linux user code and stack selectors */
	if (!strcmp(r, "ss"))
		return cg_const(c, 0x2b);
	if (c->side == CG_SIDE_HOST || !c->regs)
		return cg_const(c, 0);
	if (!strcmp(prov, "profile")) {
		LLVMValueRef o = cg_const(c, (uint64_t)mid_off[n->cval]);
		return LLVMBuildLoad2(c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->regs, &o, 1, ""), r);
	}
	if (sema_stack_kind(c->probe) == 1) {
		/* usdt, FUNC+OFF: the mid-function trampoline's block, which saves
		 * what is read here (attach ORs mid_regs into each site's plan) */
		int off = !strcmp(r, "ip") ? (int)offsetof(struct rt_regs_mid, pc) : mid_off[n->cval];
		if (off < 0)
			return cg_const(c, 0);
		c->mid_regs |= 1u << (off / 8);
		LLVMValueRef o = cg_const(c, (uint64_t)off);
		return LLVMBuildLoad2(c->b, c->i64,
				      LLVMBuildGEP2(c->b, c->i8, c->frame_regs, &o, 1, ""), r);
	}
	bool ret = sema_stack_kind(c->probe) == 2;
	if (!strcmp(r, "sp")) {
		LLVMValueRef o = cg_const(c, offsetof(struct rt_regs, ret) + (ret ? 8 : 0));
		return LLVMBuildPtrToInt(c->b, LLVMBuildGEP2(c->b, c->i8, c->frame_regs, &o, 1, ""),
					 c->i64, "sp");
	}
	/* every other name sema allows lies at the same offset in struct rt_regs */
	int off = !strcmp(r, "ip") ? (int)offsetof(struct rt_regs, ret) : mid_off[n->cval];
	LLVMValueRef o = cg_const(c, (uint64_t)off);
	return LLVMBuildLoad2(c->b, c->i64, LLVMBuildGEP2(c->b, c->i8, c->regs, &o, 1, ""), r);
}

/*
 * sargN: the word at sp + 8 * (N + 1), sp as reg("sp") has it (the return
 * address's slot at an entry, the function's sp inside it), read
 * fault-tolerantly: sarg9 of a function without stack arguments is
 * whatever lies there, and a bad address yields 0.
 */
static LLVMValueRef builtin_sarg(struct cg *c, const struct ast_node *n)
{
	struct ast_node sp = {.kind = AST_CALL, .str = "reg"};
	for (int i = 0; i < SEMA_NREGS; i++)
		if (!strcmp(sema_reg_names[i], "sp"))
			sp.cval = (uint64_t)i;
	LLVMValueRef at = LLVMBuildAdd(c->b, cg_reg(c, &sp),
				       cg_const(c, 8 * (uint64_t)(n->builtin_arg + 1)), "");
	LLVMValueRef tmp = cg_alloca(c, c->i64, n->str);
	LLVMBuildStore(c->b, cg_const(c, 0), tmp);
	LLVMValueRef rd = cg_read_target(c, tmp, at, cg_const(c, 8));
	cg_check_read(c, n, rd, AS_USER, false); /* -kk (cg_check.c) */
	return LLVMBuildLoad2(c->b, c->i64, tmp, n->str);
}

/* signal(SIG): the number sema found (cval), else the computed value */
static void call_signal(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef sig = n->cval ? cg_const(c, n->cval) : cg_expr(c, n->kids[0]);
	LLVMTypeRef fty, p[] = {c->i64};
	LLVMValueRef f = cg_rt_fn(c, "rt_signal", c->void_t, p, 1, &fty);
	LLVMBuildCall2(c->b, fty, f, &sig, 1, "");
}

LLVMValueRef cg_call(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef fv = cg_fmt_call(c, n); /* buf, strftime, join, ...: cg_fmt.c */
	if (fv)
		return fv;
	if (!strcmp(n->str, "str"))
		return call_str(c, n);
	LLVMValueRef sv = cg_str_call(c, n); /* strncmp, strlen, ...: cg_str.c */
	if (sv)
		return sv;
	if (!strcmp(n->str, "kstack"))
		return const_str(c, "", 1);
	if (cg_is_stack(n))
		return cg_stack(c, n);
	if (!strcmp(n->str, "printf"))
		call_printf(c, n);
	else if (!strcmp(n->str, "exit"))
		call_exit(c, n);
	else if (!strcmp(n->str, "print") && n->kids[0]->kind == AST_MAP && !n->kids[0]->nkids)
		call_map_op(c, n, RT_MOP_PRINT);
	else if (!strcmp(n->str, "print") || !strcmp(n->str, "time") || !strcmp(n->str, "system") ||
		 !strcmp(n->str, "cat") || !strcmp(n->str, "errorf") || !strcmp(n->str, "warnf"))
		call_deferred(c, n);
	else if (!strcmp(n->str, "bswap"))
		return call_bswap(c, n);
	else if (!strcmp(n->str, "has_key"))
		return call_has_key(c, n);
	else if (!strcmp(n->str, "len"))
		return call_len(c, n);
	else if (!strcmp(n->str, "clear"))
		call_map_op(c, n, RT_MOP_CLEAR);
	else if (!strcmp(n->str, "zero"))
		call_map_op(c, n, RT_MOP_ZERO);
	else if (!strcmp(n->str, "delete"))
		return cg_map_delete(c, n->kids[0], n, true);
	else if (!strcmp(n->str, "usym"))
		return cg_expr(c, n->kids[0]); /* the address; output/sym.c names it */
	else if (!strcmp(n->str, "reg"))
		return cg_reg(c, n);
	else if (!strcmp(n->str, "signal"))
		call_signal(c, n);
	else if (!strcmp(n->str, "uaddr"))
		return cg_const(c, n->cval); /* the global's address in the target (attach/resolve/dwarf.c) */
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
 * func in a uprobe: the return address of the trampoline's call of the
 * handler, which lies in the trampoline of the site (one trampoline per
 * site, so a wildcard probe learns which function it is in for one load):
 * the word below the handler's frame F (abi.h), the handler's own return
 * address unless it runs on a probe stack.  The output maps trampoline
 * addresses back to their site (out_sym_alias).
 */
LLVMValueRef cg_sym_func(struct cg *c)
{
	return LLVMBuildLoad2(c->b, c->i64, cg_gep_const(c, c->frame, (uint64_t)-8), "func");
}
