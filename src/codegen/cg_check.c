/*
 * cg_check.c - bpftrace's helper error checks (-k, -kk) in probe code.
 *
 * Pipeline position: part of cg_compile(); called right after code that
 * bpftrace performs with a BPF helper whose failure it reports per event
 * under -k or -kk.  With -k an update a full map dropped, and with -kk
 * also a failed read of target memory (rt_read, rt_read_str), calls
 * rt_warn() (runtime/data/rt_warn.c) with the script location of the
 * operation; ubt prints, in the thread's event order, exactly what
 * bpftrace 0.17 prints:
 *
 *   stdin:1:26-32: WARNING: Failed to probe_read_str: Bad address (-14)
 *   BEGIN { printf("%s\n", str(0)); }
 *                          ~~~~~~
 *
 * bpftrace names the helper by the address space of the pointer: user
 * memory (argN, retval of a uprobe, and what is derived from them, casts
 * to struct pointers inside a uprobe) is read with probe_read_user(_str),
 * an address without address space (`*(uint8 *)0`, `str(0)`, a scratch
 * variable holding a literal) with probe_read(_str).  Sema keeps that
 * address space in ast_type.as.  Without -k no check is emitted.
 */
#include "cg_internal.h"

#include <stddef.h>

/* The location, helper and error as rt_warn's three integer arguments. */
static void emit_warn(struct cg *c, const struct ast_node *n, uint32_t helper, LLVMValueRef err)
{
	LLVMTypeRef params[] = {c->ptr, c->i64, c->i64, c->i64};
	LLVMTypeRef fty = LLVMFunctionType(c->void_t, params, 4, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, "rt_warn");
	if (!f) {
		f = LLVMAddFunction(c->mod, "rt_warn", fty);
		LLVMSetVisibility(f, LLVMHiddenVisibility);
	}
	const struct src_loc *l = &n->loc;
	uint64_t where = (uint64_t)(uint32_t)l->line << 32 | (uint32_t)l->col;
	uint64_t to = (uint64_t)(uint32_t)(l->end_line ? l->end_line : l->line) << 32 |
		      (uint32_t)l->end_col;
	LLVMValueRef e32 = LLVMBuildAnd(c->b, err, cg_const(c, 0xffffffffull), "");
	LLVMValueRef what = LLVMBuildOr(c->b, e32, cg_const(c, (uint64_t)helper << 32), "");
	LLVMValueRef args[] = {c->thread ? c->thread : LLVMConstNull(c->ptr), cg_const(c, where),
			       cg_const(c, to), what};
	LLVMBuildCall2(c->b, fty, f, args, 4, "");
}

/*
 * ret: what rt_read/rt_read_str returned (0 or -errno).  n: the expression
 * whose location bpftrace reports (the `*`, the `a->b`, the str() call);
 * as: the address space of the pointer read through; str: str().
 */
void cg_check_read(struct cg *c, const struct ast_node *n, LLVMValueRef ret,
		   enum ast_addrspace as, bool str)
{
	if (c->layout->helper_checks < 2 || !c->thread)
		return;
	uint32_t helper = as == AS_USER ? (str ? RT_WH_PROBE_READ_USER_STR : RT_WH_PROBE_READ_USER)
					: (str ? RT_WH_PROBE_READ_STR : RT_WH_PROBE_READ);
	LLVMBasicBlockRef warn = cg_new_bb(c, "read_failed"), cont = cg_new_bb(c, "read_ok");
	LLVMValueRef bad = LLVMBuildICmp(c->b, LLVMIntSLT, ret, cg_const(c, 0), "");
	LLVMBuildCondBr(c->b, bad, warn, cont);
	LLVMPositionBuilderAtEnd(c->b, warn);
	emit_warn(c, n, helper, ret);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

/*
 * -kk: bpftrace looks a map's entry up before it reads it, and before it
 * updates an aggregation, `@m[k]++` or `@m[k] += v`, and a lookup that
 * finds nothing prints `Failed to map_lookup_elem: 0` (a key seen for the
 * first time, a scalar map not yet written).  ubt's updates insert as
 * they look up, so under -kk a separate lookup (no insert) of the key
 * buffer `key` (NULL: a scalar map) comes first (cg_map.c's map_index
 * calls this); nothing is emitted without -kk.  site: what bpftrace
 * underlines.
 */
void cg_check_map_lookup(struct cg *c, const struct ast_node *map, LLVMValueRef key,
			 const struct ast_node *site)
{
	if (c->layout->helper_checks < 2)
		return;
	/* a scalar count() exists from the start in bpftrace (it prints 0) */
	if (!map->nkids && cg_map_of(c, map)->hdr.kind == RT_MAP_COUNT)
		return;
	LLVMBasicBlockRef warn = cg_new_bb(c, "lookup_failed"), cont = cg_new_bb(c, "lookup_ok");
	LLVMValueRef absent;
	if (key) {
		absent = LLVMBuildICmp(c->b, LLVMIntSLT, cg_map_find(c, map, key), cg_const(c, 0), "");
		LLVMBuildCondBr(c->b, absent, warn, cont);
	} else {
		const struct cg_map_layout *ml = cg_map_of(c, map);
		LLVMValueRef p = cg_shm_ptr(c, ml->off + offsetof(struct rt_map, written));
		absent = LLVMBuildICmp(c->b, LLVMIntEQ, LLVMBuildLoad2(c->b, c->i64, p, ""),
				       cg_const(c, 0), "");
		LLVMBuildCondBr(c->b, absent, warn, cont);
	}
	LLVMPositionBuilderAtEnd(c->b, warn);
	emit_warn(c, site, RT_WH_MAP_LOOKUP, cg_const(c, 0));
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

/* -kk: the same warning when v (i64) is 0 (a hist bucket never hit) */
void cg_check_empty(struct cg *c, LLVMValueRef v, const struct ast_node *site)
{
	if (c->layout->helper_checks < 2)
		return;
	LLVMBasicBlockRef warn = cg_new_bb(c, "bucket_new"), cont = cg_new_bb(c, "bucket_seen");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, v, cg_const(c, 0), ""), warn, cont);
	LLVMPositionBuilderAtEnd(c->b, warn);
	emit_warn(c, site, RT_WH_MAP_LOOKUP, cg_const(c, 0));
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

/* -k: delete() of a key that is not in the map, in the block that found
 * it absent (bpftrace: map_delete_elem fails with ENOENT). */
void cg_check_map_delete(struct cg *c, const struct ast_node *site)
{
	if (c->layout->helper_checks < 1)
		return;
	emit_warn(c, site, RT_WH_MAP_DELETE, cg_const(c, (uint64_t)-2 /* -ENOENT */));
}

/*
 * -k: an update that found no entry (the map is full, or its insert lock
 * stayed busy) lands in `miss`; bpftrace reports map_update_elem failing
 * with E2BIG there.  site: the aggregation call (`count()`) or the `=`.
 * The probe may have no thread slot (it needs none for maps); rt_warn()
 * then claims one for the event.
 */
void cg_check_map_update(struct cg *c, LLVMBasicBlockRef miss, const struct ast_node *site)
{
	if (c->layout->helper_checks < 1 || !miss)
		return;
	LLVMBasicBlockRef cur = LLVMGetInsertBlock(c->b);
	LLVMPositionBuilderAtEnd(c->b, miss);
	emit_warn(c, site, RT_WH_MAP_UPDATE, cg_const(c, (uint64_t)-7 /* -E2BIG */));
	LLVMPositionBuilderAtEnd(c->b, cur);
}
