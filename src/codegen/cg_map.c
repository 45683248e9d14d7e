/*
 * cg_map.c - LLVM IR for map access: key lookup, value addresses, the
 * per-CPU aggregation update, assignment and reads of every map kind
 * (layout in runtime/abi.h, chosen by cg_layout.c).
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
#include <string.h>

const struct cg_map_layout *cg_map_of(struct cg *c, const struct ast_node *n)
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
LLVMValueRef cg_map_index(struct cg *c, const struct ast_node *n, bool insert,
			      LLVMBasicBlockRef *miss)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
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
	LLVMBasicBlockRef hit = cg_new_bb(c, "map_hit");
	*miss = cg_new_bb(c, "map_miss");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, idx, cg_const(c, 0), ""), hit,
			*miss);
	LLVMPositionBuilderAtEnd(c->b, hit);
	return idx;
}

/* Address of the value of entry idx (CPU 0's copy for per-CPU maps). */
LLVMValueRef cg_map_value_ptr(struct cg *c, const struct ast_node *n, LLVMValueRef idx)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
	LLVMValueRef base = cg_shm_ptr(c, ml->off + ml->hdr.vals_off);
	LLVMValueRef off = LLVMBuildMul(c->b, idx, cg_const(c, ml->hdr.val_size), "");
	return LLVMBuildGEP2(c->b, c->i8, base, &off, 1, "val");
}

/* Finishes a map access: the miss block joins the hit path at `cont`. */
void cg_map_done(struct cg *c, LLVMBasicBlockRef miss)
{
	if (!miss)
		return;
	LLVMBasicBlockRef cont = cg_new_bb(c, "map_cont");
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, miss);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

void cg_mark_written(struct cg *c, const struct ast_node *n)
{
	/* keyed maps have entries; an unwritten count() prints 0 anyway */
	if (n->nkids || cg_map_of(c, n)->hdr.kind == RT_MAP_COUNT)
		return;
	const struct cg_map_layout *ml = cg_map_of(c, n);
	LLVMValueRef p = cg_shm_ptr(c, ml->off + offsetof(struct rt_map, written));
	/* read first: after the first write the line stays shared, never bounced */
	LLVMValueRef cur = LLVMBuildLoad2(c->b, c->i64, p, "");
	LLVMBasicBlockRef set = cg_new_bb(c, "mark"), cont = cg_new_bb(c, "marked");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cur, cg_const(c, 0), ""), set, cont);
	LLVMPositionBuilderAtEnd(c->b, set);
	LLVMBuildStore(c->b, cg_const(c, 1), p);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

void cg_copy_str(struct cg *c, LLVMValueRef dst, LLVMValueRef src, uint64_t n)
{
	LLVMBuildMemCpy(c->b, dst, 1, src, 1, cg_const(c, n));
}

/* @m[k] = rhs, for every map kind (aggregations included). */
void cg_map_assign(struct cg *c, const struct ast_node *map, const struct ast_node *rhs)
{
	const struct cg_map_layout *ml = cg_map_of(c, map);
	LLVMValueRef val = NULL;
	if (cg_is_call(rhs, "sum"))
		val = cg_expr(c, rhs->kids[0]);
	else if (!cg_is_call(rhs, "count"))
		val = cg_expr(c, rhs);
	LLVMBasicBlockRef miss;
	LLVMValueRef idx = cg_map_index(c, map, true, &miss);
	LLVMValueRef p = cg_map_value_ptr(c, map, idx);
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
		cg_copy_str(c, p, val, n);
		break;
	}
	default:
		LLVMBuildStore(c->b, val, p);
		break;
	}
	cg_mark_written(c, map);
	cg_map_done(c, miss);
}

/* Value of a map read in an expression; 0 (or "") for a missing key. */
LLVMValueRef cg_map_read(struct cg *c, const struct ast_node *n)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
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
	LLVMValueRef idx = cg_map_index(c, n, false, &miss);
	LLVMValueRef p = cg_map_value_ptr(c, n, idx);
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
	cg_map_done(c, miss);
	return LLVMBuildLoad2(c->b, rt, res, "");
}

