/*
 * cg_expr.c - LLVM IR for statements, expressions, maps and builtins.
 *
 * Values: every integer is carried as i64 (sign- or zero-extended from its
 * type by sema's rules); a string is a pointer to a buffer of its type's
 * size.  Semantics follow bpftrace where it is sane and C otherwise:
 * division by zero gives 0 (as in BPF) and never traps the target, signed
 * division of INT64_MIN by -1 wraps, shift counts are taken modulo 64.
 *
 * Aggregations (count, sum) add into the value array of the current CPU
 * inside an rseq critical section, so concurrent threads never write the
 * same cache line and a preempted or migrated update restarts instead of
 * racing (see cg_percpu_add).
 */
#include "cg_internal.h"
#include "util/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static LLVMBasicBlockRef new_bb(struct cg *c, const char *name)
{
	return LLVMAppendBasicBlockInContext(c->ctx, c->fn, name);
}

/* Allocas go to the entry block, where mem2reg can promote them. */
LLVMValueRef cg_alloca(struct cg *c, LLVMTypeRef t, const char *name)
{
	LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
	LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(c->fn);
	LLVMValueRef first = LLVMGetFirstInstruction(entry);
	if (first)
		LLVMPositionBuilderBefore(b, first);
	else
		LLVMPositionBuilderAtEnd(b, entry);
	LLVMValueRef a = LLVMBuildAlloca(b, t, name);
	LLVMDisposeBuilder(b);
	return a;
}

static bool is_call(const struct ast_node *n, const char *name)
{
	return n && n->kind == AST_CALL && !strcmp(n->str, name);
}

bool cg_needs_thread(const struct ast_node *n)
{
	if (!n)
		return false;
	if (is_call(n, "printf"))
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

static const struct cg_map_layout *map_layout(struct cg *c, const struct ast_node *n)
{
	return &c->layout->maps[n->map->id];
}

/* ---- per-CPU aggregation ---------------------------------------------- */

/*
 * Adds val to *(base + cpu * stride) for the current CPU, where base is the
 * CPU-0 slot of a per-CPU value.  With rseq (glibc >= 2.35 registers it for
 * every thread) this is a restartable sequence whose commit is the single
 * add; the kernel restarts it from .Lr if the thread is preempted,
 * migrated or signalled in between.  Threads without a CPU number (rseq
 * unregistered) and processes without rseq use the shared slot at index
 * ncpu with a locked add.  The kernel clears the thread's rseq_cs pointer
 * lazily; att_detach() clears any that still point into probe code before
 * unmapping it (a store here on every hit would cost ~0.4 ns).
 */
static void cg_percpu_add(struct cg *c, LLVMValueRef base, uint64_t stride, LLVMValueRef val)
{
	char tmpl[2048], scale[64];
	uint64_t fallback = stride * c->layout->ncpu;
	if (stride && !(stride & (stride - 1)))
		snprintf(scale, sizeof(scale), "shlq $$%d, %%rax", __builtin_ctzll(stride));
	else
		snprintf(scale, sizeof(scale), "imulq $$%llu, %%rax, %%rax",
			 (unsigned long long)stride);
	if (c->facts->has_rseq) {
		int64_t cs = c->facts->rseq_off + RT_RSEQ_CS, cpu = c->facts->rseq_off + RT_RSEQ_CPU_ID;
		snprintf(tmpl, sizeof(tmpl),
			 ".Lr${:uid}:\n"
			 "\tleaq .Lcs${:uid}(%%rip), %%rax\n"
			 "\tmovq %%rax, %%fs:%lld\n"
			 ".Ls${:uid}:\n"
			 "\tmovl %%fs:%lld, %%eax\n"
			 "\tcmpl $$%u, %%eax\n"
			 "\tjae .Lf${:uid}\n"
			 "\t%s\n"
			 "\taddq $1, ($0,%%rax)\n"
			 ".Lp${:uid}:\n"
			 "\tjmp .Ld${:uid}\n"
			 "\t.long 0x%x\n"
			 ".La${:uid}:\n"
			 "\tjmp .Lr${:uid}\n"
			 ".Lf${:uid}:\n"
			 "\tlock addq $1, %llu($0)\n"
			 ".Ld${:uid}:\n"
			 "\t.pushsection .data.rel.ro.ubt_rseq,\"aw\",@progbits\n"
			 "\t.balign 32\n"
			 ".Lcs${:uid}:\n"
			 "\t.long 0, 0\n"
			 "\t.quad .Ls${:uid}, .Lp${:uid} - .Ls${:uid}, .La${:uid}\n"
			 "\t.popsection\n",
			 (long long)cs, (long long)cpu, c->layout->ncpu, scale,
			 RT_RSEQ_SIG, (unsigned long long)fallback);
	} else {
		snprintf(tmpl, sizeof(tmpl), "lock addq $1, %llu($0)\n",
			 (unsigned long long)fallback);
	}
	const char *cons = "r,r,~{rax},~{memory},~{cc},~{dirflag},~{fpsr},~{flags}";
	LLVMTypeRef params[] = {c->ptr, c->i64};
	LLVMTypeRef fty = LLVMFunctionType(c->void_t, params, 2, 0);
	LLVMValueRef ia = LLVMGetInlineAsm(fty, tmpl, strlen(tmpl), (char *)cons, strlen(cons), 1,
					   0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef args[] = {base, val};
	LLVMBuildCall2(c->b, fty, ia, args, 2, "");
}

/* ---- maps ------------------------------------------------------------- */

/*
 * Emits the lookup of map node n's entry.  Returns the entry index (i64),
 * with the builder positioned in a block that runs only when the entry
 * exists (or was inserted); *miss receives the block where control goes
 * otherwise, for the caller to complete.  Scalar maps always hit.
 */
static LLVMValueRef map_index(struct cg *c, const struct ast_node *n, bool insert,
			      LLVMBasicBlockRef *miss)
{
	const struct cg_map_layout *ml = map_layout(c, n);
	*miss = NULL;
	if (n->nkids == 0)
		return cg_const(c, 0);
	LLVMTypeRef kt = LLVMArrayType(c->i64, n->nkids);
	LLVMValueRef key = cg_alloca(c, kt, "key");
	for (int i = 0; i < n->nkids; i++) {
		LLVMValueRef v = cg_expr(c, n->kids[i]);
		LLVMValueRef idx[] = {cg_const(c, 0), cg_const(c, i)};
		LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, kt, key, idx, 2, ""));
	}
	LLVMValueRef args[] = {cg_shm_ptr(c, ml->off), key,
			       LLVMConstInt(c->i32, insert ? 1 : 0, 0)};
	LLVMValueRef idx = LLVMBuildCall2(c->b, c->ty_map_lookup, c->fn_map_lookup, args, 3, "idx");
	LLVMBasicBlockRef hit = new_bb(c, "map_hit");
	*miss = new_bb(c, "map_miss");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, idx, cg_const(c, 0), ""), hit,
			*miss);
	LLVMPositionBuilderAtEnd(c->b, hit);
	return idx;
}

/* Address of the value of entry idx (CPU 0's copy for per-CPU maps). */
static LLVMValueRef map_value_ptr(struct cg *c, const struct ast_node *n, LLVMValueRef idx)
{
	const struct cg_map_layout *ml = map_layout(c, n);
	LLVMValueRef base = cg_shm_ptr(c, ml->off + ml->hdr.vals_off);
	LLVMValueRef off = LLVMBuildMul(c->b, idx, cg_const(c, ml->hdr.val_size), "");
	return LLVMBuildGEP2(c->b, c->i8, base, &off, 1, "val");
}

/* Finishes a map access: the miss block joins the hit path at `cont`. */
static void map_done(struct cg *c, LLVMBasicBlockRef miss)
{
	if (!miss)
		return;
	LLVMBasicBlockRef cont = new_bb(c, "map_cont");
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, miss);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

static void mark_written(struct cg *c, const struct ast_node *n)
{
	/* keyed maps have entries; an unwritten count() prints 0 anyway */
	if (n->nkids || map_layout(c, n)->hdr.kind == RT_MAP_COUNT)
		return;
	const struct cg_map_layout *ml = map_layout(c, n);
	LLVMValueRef p = cg_shm_ptr(c, ml->off + offsetof(struct rt_map, written));
	/* read first: after the first write the line stays shared, never bounced */
	LLVMValueRef cur = LLVMBuildLoad2(c->b, c->i64, p, "");
	LLVMBasicBlockRef set = new_bb(c, "mark"), cont = new_bb(c, "marked");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cur, cg_const(c, 0), ""), set, cont);
	LLVMPositionBuilderAtEnd(c->b, set);
	LLVMBuildStore(c->b, cg_const(c, 1), p);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

static void copy_str(struct cg *c, LLVMValueRef dst, LLVMValueRef src, uint64_t n)
{
	LLVMBuildMemCpy(c->b, dst, 1, src, 1, cg_const(c, n));
}

/* @m[k] = rhs, for every map kind (aggregations included). */
static void map_assign(struct cg *c, const struct ast_node *map, const struct ast_node *rhs)
{
	const struct cg_map_layout *ml = map_layout(c, map);
	LLVMValueRef val = NULL;
	if (is_call(rhs, "sum"))
		val = cg_expr(c, rhs->kids[0]);
	else if (!is_call(rhs, "count"))
		val = cg_expr(c, rhs);
	LLVMBasicBlockRef miss;
	LLVMValueRef idx = map_index(c, map, true, &miss);
	LLVMValueRef p = map_value_ptr(c, map, idx);
	switch (ml->hdr.kind) {
	case RT_MAP_COUNT:
		cg_percpu_add(c, p, ml->hdr.cpu_stride, cg_const(c, 1));
		break;
	case RT_MAP_SUM:
		cg_percpu_add(c, p, ml->hdr.cpu_stride, val);
		break;
	case RT_MAP_STR: {
		uint64_t n = (uint64_t)rhs->type.size < ml->hdr.val_size ? (uint64_t)rhs->type.size
									  : ml->hdr.val_size;
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, ml->hdr.val_size),
				1);
		copy_str(c, p, val, n);
		break;
	}
	default:
		LLVMBuildStore(c->b, val, p);
		break;
	}
	mark_written(c, map);
	map_done(c, miss);
}

/* Value of a map read in an expression; 0 (or "") for a missing key. */
static LLVMValueRef map_read(struct cg *c, const struct ast_node *n)
{
	const struct cg_map_layout *ml = map_layout(c, n);
	bool str = ml->hdr.kind == RT_MAP_STR;
	LLVMTypeRef rt = str ? c->ptr : c->i64;
	LLVMValueRef res = cg_alloca(c, rt, "mapval");
	LLVMValueRef zero = str ? cg_alloca(c, LLVMArrayType(c->i8, ml->hdr.val_size), "")
				: cg_const(c, 0);
	if (str)
		LLVMBuildMemSet(c->b, zero, LLVMConstInt(c->i8, 0, 0),
				cg_const(c, ml->hdr.val_size), 1);
	LLVMBuildStore(c->b, zero, res);
	LLVMBasicBlockRef miss;
	LLVMValueRef idx = map_index(c, n, false, &miss);
	LLVMValueRef p = map_value_ptr(c, n, idx);
	LLVMValueRef v;
	if (str) {
		v = p;
	} else if (cg_map_percpu(&ml->hdr)) {
		/* sum the per-CPU copies, including the shared fallback one */
		v = cg_const(c, 0);
		for (uint32_t cpu = 0; cpu <= c->layout->ncpu; cpu++) {
			LLVMValueRef o = cg_const(c, cpu * ml->hdr.cpu_stride);
			LLVMValueRef q = LLVMBuildGEP2(c->b, c->i8, p, &o, 1, "");
			v = LLVMBuildAdd(c->b, v, LLVMBuildLoad2(c->b, c->i64, q, ""), "");
		}
	} else {
		v = LLVMBuildLoad2(c->b, c->i64, p, "");
	}
	LLVMBuildStore(c->b, v, res);
	map_done(c, miss);
	return LLVMBuildLoad2(c->b, rt, res, "");
}

/* ---- operators -------------------------------------------------------- */

static LLVMValueRef bool64(struct cg *c, LLVMValueRef i1)
{
	return LLVMBuildZExt(c->b, i1, c->i64, "");
}

static LLVMValueRef div_mod(struct cg *c, int op, bool sgn, LLVMValueRef l, LLVMValueRef r)
{
	LLVMValueRef zero = cg_const(c, 0), one = cg_const(c, 1), m1 = cg_const(c, -1ull);
	LLVMValueRef rz = LLVMBuildICmp(c->b, LLVMIntEQ, r, zero, "");
	LLVMValueRef bad = rz;
	LLVMValueRef rm1 = NULL;
	if (sgn) {
		rm1 = LLVMBuildICmp(c->b, LLVMIntEQ, r, m1, "");
		bad = LLVMBuildOr(c->b, rz, rm1, "");
	}
	LLVMValueRef safe = LLVMBuildSelect(c->b, bad, one, r, "");
	LLVMValueRef q = op == '/' ? (sgn ? LLVMBuildSDiv(c->b, l, safe, "")
					  : LLVMBuildUDiv(c->b, l, safe, ""))
				   : (sgn ? LLVMBuildSRem(c->b, l, safe, "")
					  : LLVMBuildURem(c->b, l, safe, ""));
	if (sgn) {
		LLVMValueRef neg = op == '/' ? LLVMBuildNeg(c->b, l, "") : zero;
		q = LLVMBuildSelect(c->b, rm1, neg, q, "");
	}
	return LLVMBuildSelect(c->b, rz, zero, q, "");
}

static LLVMValueRef logical(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef res = cg_alloca(c, c->i64, "logic");
	LLVMValueRef l = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->lhs), cg_const(c, 0), "");
	LLVMBuildStore(c->b, bool64(c, l), res);
	LLVMBasicBlockRef rhs_bb = new_bb(c, "logic_rhs"), done = new_bb(c, "logic_done");
	if (n->op == OP_LAND)
		LLVMBuildCondBr(c->b, l, rhs_bb, done);
	else
		LLVMBuildCondBr(c->b, l, done, rhs_bb);
	LLVMPositionBuilderAtEnd(c->b, rhs_bb);
	LLVMValueRef r = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->rhs), cg_const(c, 0), "");
	LLVMBuildStore(c->b, bool64(c, r), res);
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return LLVMBuildLoad2(c->b, c->i64, res, "");
}

static LLVMValueRef binop_values(struct cg *c, int op, bool sgn, LLVMValueRef l, LLVMValueRef r)
{
	switch (op) {
	case '+': return LLVMBuildAdd(c->b, l, r, "");
	case '-': return LLVMBuildSub(c->b, l, r, "");
	case '*': return LLVMBuildMul(c->b, l, r, "");
	case '/':
	case '%': return div_mod(c, op, sgn, l, r);
	case '&': return LLVMBuildAnd(c->b, l, r, "");
	case '|': return LLVMBuildOr(c->b, l, r, "");
	case '^': return LLVMBuildXor(c->b, l, r, "");
	case OP_SHL: return LLVMBuildShl(c->b, l, LLVMBuildAnd(c->b, r, cg_const(c, 63), ""), "");
	case OP_SHR: {
		LLVMValueRef s = LLVMBuildAnd(c->b, r, cg_const(c, 63), "");
		return sgn ? LLVMBuildAShr(c->b, l, s, "") : LLVMBuildLShr(c->b, l, s, "");
	}
	case OP_EQ: return bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, l, r, ""));
	case OP_NE: return bool64(c, LLVMBuildICmp(c->b, LLVMIntNE, l, r, ""));
	case '<': return bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSLT : LLVMIntULT, l, r, ""));
	case '>': return bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSGT : LLVMIntUGT, l, r, ""));
	case OP_LE: return bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSLE : LLVMIntULE, l, r, ""));
	case OP_GE: return bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSGE : LLVMIntUGE, l, r, ""));
	}
	return cg_const(c, 0);
}

static LLVMValueRef binop(struct cg *c, const struct ast_node *n)
{
	if (n->op == OP_LAND || n->op == OP_LOR)
		return logical(c, n);
	/* signed only when both sides are (C's rule for 64-bit operands) */
	bool sgn = n->lhs->type.is_signed && n->rhs->type.is_signed;
	LLVMValueRef l = cg_expr(c, n->lhs);
	LLVMValueRef r = cg_expr(c, n->rhs);
	return binop_values(c, n->op, sgn, l, r);
}

static LLVMValueRef ternary(struct cg *c, const struct ast_node *n)
{
	bool str = n->type.kind == TY_STR;
	LLVMTypeRef rt = str ? c->ptr : c->i64;
	LLVMValueRef res = cg_alloca(c, rt, "tern");
	LLVMValueRef cond = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->cond), cg_const(c, 0), "");
	LLVMBasicBlockRef t = new_bb(c, "tern_t"), f = new_bb(c, "tern_f"), d = new_bb(c, "tern_d");
	LLVMBuildCondBr(c->b, cond, t, f);
	LLVMPositionBuilderAtEnd(c->b, t);
	LLVMBuildStore(c->b, cg_expr(c, n->lhs), res);
	LLVMBuildBr(c->b, d);
	LLVMPositionBuilderAtEnd(c->b, f);
	LLVMBuildStore(c->b, cg_expr(c, n->rhs), res);
	LLVMBuildBr(c->b, d);
	LLVMPositionBuilderAtEnd(c->b, d);
	return LLVMBuildLoad2(c->b, rt, res, "");
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

static LLVMValueRef builtin(struct cg *c, const struct ast_node *n)
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
	if (!strncmp(n->str, "arg", 3) && n->builtin_arg >= 0 && n->builtin_arg < 6 &&
	    c->side == CG_SIDE_TARGET) {
		LLVMValueRef off = cg_const(c, arg_reg_off[n->builtin_arg]);
		LLVMValueRef p = LLVMBuildGEP2(c->b, c->i8, c->regs, &off, 1, "");
		return LLVMBuildLoad2(c->b, c->i64, p, n->str);
	}
	cg_fail(c, n, "this builtin is not supported by the code generator yet");
	return cg_const(c, 0);
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
	LLVMBasicBlockRef fill = new_bb(c, "printf_fill"), done = new_bb(c, "printf_done");
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
			copy_str(c, dst, vals[i], a->type.size);
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
	LLVMPositionBuilderAtEnd(c->b, new_bb(c, "after_exit"));
}

static LLVMValueRef call(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "printf"))
		call_printf(c, n);
	else if (!strcmp(n->str, "exit"))
		call_exit(c);
	else
		cg_fail(c, n, "this function is not supported by the code generator yet");
	return cg_const(c, 0);
}

/* ---- expressions ------------------------------------------------------ */

static LLVMValueRef str_literal(struct cg *c, const struct ast_node *n)
{
	int size = n->type.size > (int)n->slen ? n->type.size : (int)n->slen + 1;
	char *bytes = xcalloc(1, size);
	memcpy(bytes, n->str, n->slen);
	LLVMValueRef init = LLVMConstStringInContext(c->ctx, bytes, size, 1);
	free(bytes);
	LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMArrayType(c->i8, size), "str");
	LLVMSetInitializer(g, init);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
	return g;
}

static LLVMValueRef var_ptr(struct cg *c, const struct ast_node *n)
{
	for (int i = 0; i < c->info->nvars; i++)
		if (c->info->vars[i] == n->var)
			return c->vars[i];
	return NULL;
}

/* ++/-- on a map or a variable; yields the old (postfix) or new (prefix) value. */
static LLVMValueRef incdec(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef delta = cg_const(c, n->op == OP_INC ? 1 : -1ull);
	const struct ast_node *t = n->lhs;
	LLVMValueRef res = cg_alloca(c, c->i64, "incdec");
	LLVMBuildStore(c->b, cg_const(c, 0), res);
	LLVMValueRef p;
	LLVMBasicBlockRef miss = NULL;
	if (t->kind == AST_VAR) {
		p = var_ptr(c, t);
	} else {
		LLVMValueRef idx = map_index(c, t, true, &miss);
		p = map_value_ptr(c, t, idx);
	}
	if (!p) {
		cg_fail(c, n, "internal: unknown variable");
		return cg_const(c, 0);
	}
	LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, p, "");
	LLVMValueRef nw = LLVMBuildAdd(c->b, old, delta, "");
	LLVMBuildStore(c->b, nw, p);
	LLVMBuildStore(c->b, n->uval ? nw : old, res);
	if (t->kind == AST_MAP)
		mark_written(c, t);
	map_done(c, miss);
	return LLVMBuildLoad2(c->b, c->i64, res, "");
}

LLVMValueRef cg_expr(struct cg *c, const struct ast_node *n)
{
	switch (n->kind) {
	case AST_INT:
		return cg_const(c, n->uval);
	case AST_STR:
		return str_literal(c, n);
	case AST_BUILTIN:
		return builtin(c, n);
	case AST_VAR: {
		LLVMValueRef p = var_ptr(c, n);
		if (!p) {
			cg_fail(c, n, "internal: unknown variable");
			return cg_const(c, 0);
		}
		return n->type.kind == TY_STR ? p : LLVMBuildLoad2(c->b, c->i64, p, "");
	}
	case AST_MAP:
		return map_read(c, n);
	case AST_CALL:
		return call(c, n);
	case AST_BINOP:
		return binop(c, n);
	case AST_UNOP: {
		LLVMValueRef v = cg_expr(c, n->lhs);
		if (n->op == '-')
			return LLVMBuildNeg(c->b, v, "");
		if (n->op == '~')
			return LLVMBuildNot(c->b, v, "");
		return bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, v, cg_const(c, 0), ""));
	}
	case AST_INCDEC:
		return incdec(c, n);
	case AST_TERNARY:
		return ternary(c, n);
	default:
		cg_fail(c, n, "internal: unexpected expression");
		return cg_const(c, 0);
	}
}

/* ---- statements ------------------------------------------------------- */

static int compound_op(int op)
{
	return op == '=' ? 0 : op;
}

static void assign(struct cg *c, const struct ast_node *n)
{
	const struct ast_node *t = n->lhs;
	int op = compound_op(n->op);
	if (t->kind == AST_MAP && !op) {
		map_assign(c, t, n->rhs);
		return;
	}
	if (t->kind == AST_MAP) {
		/* @x op= v: read-modify-write of an integer map, like bpftrace */
		bool sgn = t->type.is_signed && n->rhs->type.is_signed;
		LLVMValueRef v = cg_expr(c, n->rhs);
		LLVMBasicBlockRef miss;
		LLVMValueRef idx = map_index(c, t, true, &miss);
		LLVMValueRef p = map_value_ptr(c, t, idx);
		LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, p, "");
		LLVMBuildStore(c->b, binop_values(c, op, sgn, old, v), p);
		mark_written(c, t);
		map_done(c, miss);
		return;
	}
	LLVMValueRef p = var_ptr(c, t);
	if (!p) {
		cg_fail(c, n, "internal: unknown variable");
		return;
	}
	LLVMValueRef v = cg_expr(c, n->rhs);
	if (t->type.kind == TY_STR) {
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, t->type.size), 1);
		uint64_t len = n->rhs->type.size < t->type.size ? n->rhs->type.size : t->type.size;
		copy_str(c, p, v, len);
		return;
	}
	if (op) {
		bool sgn = t->type.is_signed && n->rhs->type.is_signed;
		v = binop_values(c, op, sgn, LLVMBuildLoad2(c->b, c->i64, p, ""), v);
	}
	LLVMBuildStore(c->b, v, p);
}

static void if_stmt(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef cond = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->cond), cg_const(c, 0), "");
	LLVMBasicBlockRef t = new_bb(c, "if_then"), e = new_bb(c, "if_else"),
			  d = new_bb(c, "if_done");
	LLVMBuildCondBr(c->b, cond, t, e);
	LLVMPositionBuilderAtEnd(c->b, t);
	cg_stmt(c, n->body);
	LLVMBuildBr(c->b, d);
	LLVMPositionBuilderAtEnd(c->b, e);
	if (n->els)
		cg_stmt(c, n->els);
	LLVMBuildBr(c->b, d);
	LLVMPositionBuilderAtEnd(c->b, d);
}

void cg_stmt(struct cg *c, const struct ast_node *n)
{
	if (!n)
		return;
	switch (n->kind) {
	case AST_BLOCK:
		for (int i = 0; i < n->nkids; i++)
			cg_stmt(c, n->kids[i]);
		break;
	case AST_EXPR_STMT:
		cg_expr(c, n->lhs);
		break;
	case AST_ASSIGN:
		assign(c, n);
		break;
	case AST_IF:
		if_stmt(c, n);
		break;
	default:
		/* a bare expression used as a statement */
		cg_expr(c, n);
		break;
	}
}
