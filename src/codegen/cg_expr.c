/*
 * cg_expr.c - LLVM IR for statements and expressions (operators, scratch
 * variables, control flow).  Maps are in cg_map.c, builtins and calls in
 * cg_call.c.
 *
 * Values: every integer is carried as i64 (sign- or zero-extended from its
 * type by sema's rules); a string is a pointer to a buffer of its type's
 * size.  Semantics follow bpftrace where it is sane and C otherwise:
 * x / 0 gives 0 and x % 0 gives x (as in BPF), never a trap in the target;
 * signed division of INT64_MIN by -1 wraps; shift counts are taken modulo
 * 64.
 *
 * Loops: every turn of a loop draws on the budget of the whole hit
 * (cg_loop.c), so probe code can never hang its target; `unroll(N)` is a
 * counted loop.
 *
 * Reads of target memory (`*p`, `p->f`, `s.f` of a record in the target,
 * `a[i]`, `(struct x)e`) go through the runtime's fault-tolerant
 * rt_read() (runtime/mem/rt_read.c, DESIGN.md decision 7): a bad address
 * yields zero, never a fault.  An expression that names memory has a
 * place (struct place): an address in the target, or a pointer to a
 * buffer of the probe's own (a record or tuple value held in a variable).
 * `p->a->b` reads only the pointer `a` and then the member `b`, never the
 * whole record; through a NULL `p` both reads fail and yield 0.  Records,
 * tuples and arrays as values are buffers of their size, like strings.
 */
#include "cg_internal.h"
#include "util/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

LLVMBasicBlockRef cg_new_bb(struct cg *c, const char *name)
{
	return LLVMAppendBasicBlockInContext(c->ctx, c->fn, name);
}

/* Allocas go to the entry block, where mem2reg can promote them. */
/* A phi at the builder's position: a when coming from block ba, b from bb. */
LLVMValueRef cg_phi2(struct cg *c, LLVMTypeRef t, LLVMValueRef a, LLVMBasicBlockRef ba,
		     LLVMValueRef b, LLVMBasicBlockRef bb, const char *name)
{
	LLVMValueRef phi = LLVMBuildPhi(c->b, t, name);
	LLVMValueRef vals[] = {a, b};
	LLVMBasicBlockRef bbs[] = {ba, bb};
	LLVMAddIncoming(phi, vals, bbs, 2);
	return phi;
}

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


/* ---- operators -------------------------------------------------------- */

LLVMValueRef cg_bool64(struct cg *c, LLVMValueRef i1)
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
	/* BPF's rule, which bpftrace's probes follow: x / 0 is 0, x % 0 is x */
	return LLVMBuildSelect(c->b, rz, op == '/' ? zero : l, q, "");
}

static LLVMValueRef logical(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef res = cg_alloca(c, c->i64, "logic");
	LLVMValueRef l = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->lhs), cg_const(c, 0), "");
	LLVMBuildStore(c->b, cg_bool64(c, l), res);
	LLVMBasicBlockRef rhs_bb = cg_new_bb(c, "logic_rhs"), done = cg_new_bb(c, "logic_done");
	if (n->op == OP_LAND)
		LLVMBuildCondBr(c->b, l, rhs_bb, done);
	else
		LLVMBuildCondBr(c->b, l, done, rhs_bb);
	LLVMPositionBuilderAtEnd(c->b, rhs_bb);
	LLVMValueRef r = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->rhs), cg_const(c, 0), "");
	LLVMBuildStore(c->b, cg_bool64(c, r), res);
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
	case OP_EQ: return cg_bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, l, r, ""));
	case OP_NE: return cg_bool64(c, LLVMBuildICmp(c->b, LLVMIntNE, l, r, ""));
	case '<': return cg_bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSLT : LLVMIntULT, l, r, ""));
	case '>': return cg_bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSGT : LLVMIntUGT, l, r, ""));
	case OP_LE: return cg_bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSLE : LLVMIntULE, l, r, ""));
	case OP_GE: return cg_bool64(c, LLVMBuildICmp(c->b, sgn ? LLVMIntSGE : LLVMIntUGE, l, r, ""));
	}
	return cg_const(c, 0);
}

/*
 * `a == b`, `a != b` of values kept in buffers.  Strings compare as
 * bpftrace 0.17 does: character by character up to a NUL, over at most the
 * shorter buffer (`comm == "nginx"` reads 6 bytes of comm); arrays,
 * records and tuples byte for byte.  Both in the runtime (rt_str.c).
 */
static LLVMValueRef compare_buffers(struct cg *c, const struct ast_node *n)
{
	const struct ast_type *lt = &n->lhs->type, *rt = &n->rhs->type;
	LLVMValueRef l = cg_expr(c, n->lhs), r = cg_expr(c, n->rhs), ne;
	uint64_t len = (uint64_t)(lt->size < rt->size ? lt->size : rt->size);
	LLVMTypeRef fty;
	if (lt->kind == TY_STR) {
		LLVMTypeRef p[] = {c->ptr, c->i64, c->ptr, c->i64, c->i64};
		LLVMValueRef f = cg_rt_fn(c, "rt_strncmp", c->i64, p, 5, &fty);
		LLVMValueRef a[] = {l, cg_const(c, (uint64_t)lt->size), r, cg_const(c, (uint64_t)rt->size),
				    cg_const(c, len)};
		ne = LLVMBuildCall2(c->b, fty, f, a, 5, "strcmp");
	} else {
		LLVMTypeRef p[] = {c->ptr, c->ptr, c->i64};
		LLVMValueRef f = cg_rt_fn(c, "rt_memneq", c->i64, p, 3, &fty);
		LLVMValueRef a[] = {l, r, cg_const(c, len)};
		ne = LLVMBuildCall2(c->b, fty, f, a, 3, "memcmp");
	}
	return cg_bool64(c, LLVMBuildICmp(c->b, n->op == OP_EQ ? LLVMIntEQ : LLVMIntNE, ne,
					  cg_const(c, 0), ""));
}

/*
 * Pointer arithmetic steps by the pointee's size, as in C: `(int32 *)32 + 1`
 * is 36, `$r + 1` of a `struct rec *` the next record.  A pointer to a
 * pointer steps by 8, `void *` by 1 (GNU C).
 */
static uint64_t ptr_step(const struct ast_type *t)
{
	if (t->kind != TY_PTR || !t->elem || t->elem->kind == TY_NONE || t->elem->size <= 0)
		return 1;
	return (uint64_t)t->elem->size;
}

/* l op r where the result type says whether this is pointer arithmetic
 * (`p + i`, `i + p`, `p - i`): the integer side scaled by ptr_step. */
static LLVMValueRef arith_values(struct cg *c, int op, const struct ast_type *res,
				 const struct ast_type *lt, const struct ast_type *rt, LLVMValueRef l,
				 LLVMValueRef r)
{
	if (res->kind == TY_PTR && (op == '+' || op == '-')) {
		uint64_t step = ptr_step(res);
		if (lt->kind != TY_PTR)
			l = LLVMBuildMul(c->b, l, cg_const(c, step), "");
		else if (rt->kind != TY_PTR)
			r = LLVMBuildMul(c->b, r, cg_const(c, step), "");
	}
	if (op == '-' && lt->kind == TY_PTR && rt->kind == TY_PTR) /* p - q: elements, as in C */
		return LLVMBuildSDiv(c->b, LLVMBuildSub(c->b, l, r, ""), cg_const(c, ptr_step(lt)), "");
	return binop_values(c, op, lt->is_signed && rt->is_signed, l, r);
}

static LLVMValueRef binop(struct cg *c, const struct ast_node *n)
{
	if (n->op == OP_LAND || n->op == OP_LOR)
		return logical(c, n);
	if ((n->op == OP_EQ || n->op == OP_NE) && cg_is_buffer(&n->lhs->type) &&
	    cg_is_buffer(&n->rhs->type))
		return compare_buffers(c, n);
	/* signed only when both sides are (C's rule for 64-bit operands) */
	LLVMValueRef l = cg_expr(c, n->lhs);
	LLVMValueRef r = cg_expr(c, n->rhs);
	return arith_values(c, n->op, &n->type, &n->lhs->type, &n->rhs->type, l, r);
}

/* One arm of a ternary into res: an i64, or a string copied into the
 * result's buffer (the arms may be smaller: `$c ? "a" : str(p)`). */
static void ternary_arm(struct cg *c, const struct ast_node *n, const struct ast_node *arm,
			LLVMValueRef res)
{
	LLVMValueRef v = cg_expr(c, arm);
	if (n->type.kind == TY_STR)
		cg_store_as(c, res, &n->type, v, &arm->type);
	else
		LLVMBuildStore(c->b, v, res);
}

/* c ? a : b, and `if (c) { a } else { b }` as a value: one arm's value, of
 * n's type, in a slot both arms store to */
static LLVMValueRef branch_value(struct cg *c, const struct ast_node *n, const struct ast_node *cnd,
				 const struct ast_node *a, const struct ast_node *b)
{
	bool str = n->type.kind == TY_STR;
	LLVMValueRef res = str ? cg_alloca(c, LLVMArrayType(c->i8, (unsigned)n->type.size), "tern")
			       : cg_alloca(c, c->i64, "tern");
	LLVMValueRef cond = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, cnd), cg_const(c, 0), "");
	LLVMBasicBlockRef t = cg_new_bb(c, "tern_t"), f = cg_new_bb(c, "tern_f"), d = cg_new_bb(c, "tern_d");
	LLVMBuildCondBr(c->b, cond, t, f);
	LLVMPositionBuilderAtEnd(c->b, t);
	ternary_arm(c, n, a, res);
	LLVMBuildBr(c->b, d);
	LLVMPositionBuilderAtEnd(c->b, f);
	ternary_arm(c, n, b, res);
	LLVMBuildBr(c->b, d);
	LLVMPositionBuilderAtEnd(c->b, d);
	return str ? res : LLVMBuildLoad2(c->b, c->i64, res, "");
}

static LLVMValueRef ternary(struct cg *c, const struct ast_node *n)
{
	return branch_value(c, n, n->cond, n->lhs, n->rhs);
}

/* `$s[i]`: the string's byte i, sign-extended as a char; 0 past its buffer */
static LLVMValueRef str_index(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef s = cg_expr(c, n->lhs), i = cg_expr(c, n->rhs);
	LLVMValueRef in =
	    LLVMBuildICmp(c->b, LLVMIntULT, i, cg_const(c, (uint64_t)n->lhs->type.size), "");
	LLVMValueRef safe = LLVMBuildSelect(c->b, in, i, cg_const(c, 0), "");
	LLVMValueRef b =
	    LLVMBuildLoad2(c->b, c->i8, LLVMBuildGEP2(c->b, c->i8, s, &safe, 1, ""), "");
	LLVMValueRef v = LLVMBuildSExt(c->b, b, c->i64, "");
	return LLVMBuildSelect(c->b, in, v, cg_const(c, 0), "ch");
}

static LLVMValueRef if_value(struct cg *c, const struct ast_node *n)
{
	return branch_value(c, n, n->cond, n->body, n->els);
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

LLVMValueRef cg_var_ptr(struct cg *c, const struct ast_node *n)
{
	for (int i = 0; i < c->info->nvars; i++)
		if (c->info->vars[i] == n->var)
			return c->vars[i];
	return NULL;
}

/* ++/-- on a map or a variable; yields the old (postfix) or new (prefix) value. */
static LLVMValueRef incdec(struct cg *c, const struct ast_node *n)
{
	const struct ast_node *t = n->lhs;
	uint64_t step = ptr_step(&t->type);
	LLVMValueRef delta = cg_const(c, n->op == OP_INC ? step : -step);
	LLVMValueRef res = cg_alloca(c, c->i64, "incdec");
	LLVMBuildStore(c->b, cg_const(c, 0), res);
	LLVMValueRef p;
	LLVMBasicBlockRef miss = NULL;
	if (t->kind == AST_VAR) {
		p = cg_var_ptr(c, t);
	} else {
		LLVMValueRef idx = cg_map_index_checked(c, t, true, &miss, n);
		p = cg_map_value_ptr(c, t, idx);
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
		cg_mark_written(c, t);
	cg_map_done(c, miss);
	return LLVMBuildLoad2(c->b, c->i64, res, "");
}

/* ---- reading target memory ------------------------------------------- */

/* Where an expression's bytes are. */
struct place {
	bool target;       /* addr is an i64 address in the target, else a local ptr */
	LLVMValueRef addr;
};

/* A value kept in a buffer of its type's size (strings, records, tuples, arrays). */
bool cg_is_buffer(const struct ast_type *t)
{
	return t->kind == TY_STR || t->kind == TY_STRUCT || ast_type_is_blob(t->kind) ||
	       t->kind == TY_ARRAY;
}

/* Does evaluating n itself (not its operands) read target memory? */
bool cg_reads_target(const struct ast_node *n)
{
	switch (n->kind) {
	case AST_UNOP:
		return n->op == '*';
	case AST_FIELD:
	case AST_INDEX:
		return true;
	case AST_CAST:
		return n->type.kind == TY_STRUCT;
	case AST_CALL:
		return !strcmp(n->str, "str") || !strcmp(n->str, "buf");
	default:
		return false;
	}
}

/* rt_read(thread, dst, src, n): 0, or -EFAULT with dst zeroed. */
LLVMValueRef cg_read_target(struct cg *c, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef n)
{
	LLVMTypeRef params[] = {c->ptr, c->ptr, c->i64, c->i64};
	LLVMTypeRef fty = LLVMFunctionType(c->i64, params, 4, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, "rt_read");
	if (!f) {
		f = LLVMAddFunction(c->mod, "rt_read", fty);
		LLVMSetVisibility(f, LLVMHiddenVisibility);
	}
	LLVMValueRef t = c->thread ? c->thread : LLVMConstNull(c->ptr);
	LLVMValueRef args[] = {t, dst, src, n};
	return LLVMBuildCall2(c->b, fty, f, args, 4, "");
}

static LLVMValueRef place_offset(struct cg *c, struct place pl, LLVMValueRef off)
{
	if (pl.target)
		return LLVMBuildAdd(c->b, pl.addr, off, "");
	return LLVMBuildGEP2(c->b, c->i8, pl.addr, &off, 1, "");
}

static bool place_of(struct cg *c, const struct ast_node *n, struct place *pl);

/* The place of a record or array value: in the target if the expression
 * designates target memory, else the buffer cg_expr() makes of it. */
static struct place base_place(struct cg *c, const struct ast_node *n)
{
	struct place pl;
	if (!place_of(c, n, &pl))
		pl = (struct place){false, cg_expr(c, n)};
	return pl;
}

/* Expressions that designate memory (lvalues, in C's terms). */
static bool place_of(struct cg *c, const struct ast_node *n, struct place *pl)
{
	switch (n->kind) {
	case AST_UNOP:
		if (n->op != '*')
			return false;
		*pl = (struct place){true, cg_expr(c, n->lhs)};
		return true;
	case AST_CAST:
		if (n->type.kind != TY_STRUCT)
			return false;
		*pl = (struct place){true, cg_expr(c, n->lhs)};
		return true;
	case AST_FIELD: {
		if (!n->field) {
			cg_fail(c, n, "internal: unresolved field");
			return false;
		}
		LLVMValueRef off = cg_const(c, (uint64_t)n->field->offset);
		if (n->op == OP_PTR && !cg_is_args(n->lhs)) /* args->f is args.f */
			*pl = (struct place){true, LLVMBuildAdd(c->b, cg_expr(c, n->lhs), off, "")};
		else {
			struct place b = base_place(c, n->lhs);
			*pl = (struct place){b.target, place_offset(c, b, off)};
		}
		return true;
	}
	case AST_INDEX: {
		const struct ast_type *lt = &n->lhs->type;
		uint64_t esz = lt->elem ? (uint64_t)lt->elem->size : 1;
		LLVMValueRef off = LLVMBuildMul(c->b, cg_expr(c, n->rhs), cg_const(c, esz), "");
		if (lt->kind == TY_PTR) {
			*pl = (struct place){true, LLVMBuildAdd(c->b, cg_expr(c, n->lhs), off, "")};
			return true;
		}
		struct place b = base_place(c, n->lhs);
		*pl = (struct place){b.target, place_offset(c, b, off)};
		return true;
	}
	default:
		return false;
	}
}

/* Sign- or zero-extends the low `bits` bits of v (i64). */
static LLVMValueRef extend(struct cg *c, LLVMValueRef v, int bits, bool sgn)
{
	if (bits >= 64)
		return v;
	LLVMTypeRef nt = LLVMIntTypeInContext(c->ctx, (unsigned)bits);
	LLVMValueRef tr = LLVMBuildTrunc(c->b, v, nt, "");
	return sgn ? LLVMBuildSExt(c->b, tr, c->i64, "") : LLVMBuildZExt(c->b, tr, c->i64, "");
}

/*
 * The value of type t at pl: an i64 for integers and pointers (a bitfield
 * when field says so), a buffer pointer for the other kinds.  Target
 * memory is copied with rt_read(); a failed read yields zeros.
 */
static LLVMValueRef load_place(struct cg *c, struct place pl, const struct ast_type *t,
			       const struct ast_member *field, const struct ast_node *site)
{
	LLVMValueRef rd;
	if (cg_is_buffer(t)) {
		if (!pl.target)
			return pl.addr;
		LLVMValueRef buf = cg_alloca(c, LLVMArrayType(c->i8, t->size > 0 ? t->size : 1), "rd");
		rd = cg_read_target(c, buf, pl.addr, cg_const(c, (uint64_t)t->size));
		if (site) /* -kk (cg_check.c) */
			cg_check_read(c, site, rd, site->type.as, false);
		return buf;
	}
	int bytes = t->size > 0 && t->size <= 8 ? t->size : 8;
	int bit_off = 0, width = bytes * 8;
	if (field && field->bit_width) {
		bit_off = field->bit_off;
		width = field->bit_width;
		bytes = (bit_off + width + 7) / 8;
	}
	LLVMValueRef v;
	if (pl.target) {
		LLVMValueRef tmp = cg_alloca(c, c->i64, "rd");
		LLVMBuildStore(c->b, cg_const(c, 0), tmp);
		rd = cg_read_target(c, tmp, pl.addr, cg_const(c, (uint64_t)bytes));
		if (site) /* -kk (cg_check.c) */
			cg_check_read(c, site, rd, site->type.as, false);
		v = LLVMBuildLoad2(c->b, c->i64, tmp, "");
	} else {
		LLVMTypeRef nt = LLVMIntTypeInContext(c->ctx, (unsigned)bytes * 8);
		LLVMValueRef l = LLVMBuildLoad2(c->b, nt, pl.addr, "");
		LLVMSetAlignment(l, 1);
		v = LLVMBuildZExt(c->b, l, c->i64, "");
	}
	if (bit_off)
		v = LLVMBuildLShr(c->b, v, cg_const(c, (uint64_t)bit_off), "");
	/* bpftrace 0.17 reads a bitfield as its bits, never sign-extended: an
	 * `int e:9` holding 500 reads 500 */
	return extend(c, v, width, t->is_signed && t->kind == TY_INT && !(field && field->bit_width));
}

/* `*p`, `p->f`, `s.f`, `a[i]`, `(struct x)e` */
static LLVMValueRef read_expr(struct cg *c, const struct ast_node *n)
{
	struct place pl;
	if (!place_of(c, n, &pl))
		return cg_const(c, 0);
	return load_place(c, pl, &n->type, n->kind == AST_FIELD ? n->field : NULL, n);
}

/* ---- tuples ----------------------------------------------------------- */

/* Stores value v of type t into the buffer at dst (t->size bytes). */
static void store_value(struct cg *c, LLVMValueRef dst, const struct ast_type *t, LLVMValueRef v)
{
	if (cg_is_buffer(t)) {
		LLVMBuildMemCpy(c->b, dst, 1, v, 1, cg_const(c, (uint64_t)t->size));
		return;
	}
	int bytes = t->size > 0 && t->size <= 8 ? t->size : 8;
	LLVMValueRef tr = LLVMBuildTrunc(c->b, v, LLVMIntTypeInContext(c->ctx, (unsigned)bytes * 8), "");
	LLVMValueRef st = LLVMBuildStore(c->b, tr, dst);
	LLVMSetAlignment(st, 1);
}

/*
 * Stores value v of type st at dst, laid out as type dt: the same type, or
 * one sema grew to hold it (sema.c's widen_type: `@ = ("hello", 0);
 * @ = ("hi", 1)`): tuples element by element, strings cut or NUL-padded,
 * integers at dt's size.  dst holds dt->size bytes.
 */
void cg_store_as(struct cg *c, LLVMValueRef dst, const struct ast_type *dt, LLVMValueRef v,
		 const struct ast_type *st)
{
	if (dt->kind == TY_TUPLE && st->kind == TY_TUPLE && !ast_type_eq(dt, st) &&
	    dt->tup->count == st->tup->count) {
		for (int i = 0; i < dt->tup->count; i++) {
			const struct ast_type *se = &st->tup->types[i];
			LLVMValueRef so = cg_const(c, (uint64_t)st->tup->offsets[i]);
			LLVMValueRef dof = cg_const(c, (uint64_t)dt->tup->offsets[i]);
			LLVMValueRef sp = LLVMBuildGEP2(c->b, c->i8, v, &so, 1, "");
			LLVMValueRef ev = cg_is_buffer(se) ? sp
							   : load_place(c, (struct place){false, sp}, se,
									NULL, NULL);
			cg_store_as(c, LLVMBuildGEP2(c->b, c->i8, dst, &dof, 1, ""), &dt->tup->types[i],
				    ev, se);
		}
		return;
	}
	if (cg_is_buffer(dt)) {
		uint64_t n = (uint64_t)(st->size < dt->size ? st->size : dt->size);
		if (n < (uint64_t)dt->size)
			LLVMBuildMemSet(c->b, dst, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)dt->size),
					1);
		LLVMBuildMemCpy(c->b, dst, 1, v, 1, cg_const(c, n));
		return;
	}
	store_value(c, dst, dt, v);
}

/* (a, b, ...): a buffer laid out as the tuple type says (ast_tuple_of) */
static LLVMValueRef tuple_value(struct cg *c, const struct ast_node *n)
{
	const struct ast_tuple *tu = n->type.tup;
	LLVMValueRef buf = cg_alloca(c, LLVMArrayType(c->i8, n->type.size > 0 ? n->type.size : 1),
				     "tuple");
	LLVMBuildMemSet(c->b, buf, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)n->type.size), 1);
	for (int i = 0; i < n->nkids && i < tu->count; i++) {
		const struct ast_type *et = &tu->types[i];
		LLVMValueRef v = cg_expr(c, n->kids[i]);
		LLVMValueRef off = cg_const(c, (uint64_t)tu->offsets[i]);
		LLVMValueRef dst = LLVMBuildGEP2(c->b, c->i8, buf, &off, 1, "");
		if (et->kind == TY_STR && n->kids[i]->type.size < et->size)
			LLVMBuildMemCpy(c->b, dst, 1, v, 1, cg_const(c, (uint64_t)n->kids[i]->type.size));
		else
			store_value(c, dst, et, v);
	}
	return buf;
}

/* t.N */
static LLVMValueRef tuple_index(struct cg *c, const struct ast_node *n)
{
	const struct ast_tuple *tu = n->lhs->type.tup;
	if (!tu || n->uval >= (uint64_t)tu->count) {
		cg_fail(c, n, "internal: tuple index");
		return cg_const(c, 0);
	}
	LLVMValueRef base = cg_expr(c, n->lhs);
	LLVMValueRef off = cg_const(c, (uint64_t)tu->offsets[n->uval]);
	struct place pl = {false, LLVMBuildGEP2(c->b, c->i8, base, &off, 1, "")};
	return load_place(c, pl, &tu->types[n->uval], NULL, n);
}

/* (type)e for integers and pointers: truncate to the target's size, then
 * extend back to 64 bits by the target's sign.  A record cast reads the
 * record at address e; an array member cast to a pointer is its address. */
static LLVMValueRef cast(struct cg *c, const struct ast_node *n)
{
	const struct ast_type *t = &n->type;
	if (t->kind == TY_STRUCT)
		return read_expr(c, n);
	if (t->kind == TY_PTR && cg_is_buffer(&n->lhs->type)) {
		struct place pl;
		if (place_of(c, n->lhs, &pl) && pl.target)
			return pl.addr;
		cg_fail(c, n, "only members of records in the target decay to pointers");
		return cg_const(c, 0);
	}
	LLVMValueRef v = cg_expr(c, n->lhs);
	if (t->kind == TY_INT && t->is_bool) {
		/* (bool)x: x is not 0; a string is not empty */
		if (cg_is_buffer(&n->lhs->type))
			v = LLVMBuildZExt(c->b, LLVMBuildLoad2(c->b, c->i8, v, ""), c->i64, "");
		LLVMValueRef nz =
		    LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
		return LLVMBuildZExt(c->b, nz, c->i64, "bool");
	}
	if (t->kind != TY_INT)
		return v;
	if (t->size >= 8)
		return v;
	LLVMTypeRef nt = LLVMIntTypeInContext(c->ctx, (unsigned)t->size * 8);
	LLVMValueRef tr = LLVMBuildTrunc(c->b, v, nt, "");
	return t->is_signed ? LLVMBuildSExt(c->b, tr, c->i64, "") : LLVMBuildZExt(c->b, tr, c->i64, "");
}

static LLVMValueRef const_str(struct cg *c, const char *s, int size)
{
	struct ast_node tmp = { .kind = AST_STR, .str = (char *)s, .slen = strlen(s) };
	tmp.type.size = size;
	return str_literal(c, &tmp);
}

LLVMValueRef cg_expr(struct cg *c, const struct ast_node *n)
{
	switch (n->kind) {
	case AST_INT:
		return cg_const(c, n->uval);
	case AST_POSPARAM:
		if (n->type.kind == TY_STR)
			return const_str(c, n->cstr ? n->cstr : "", n->type.size);
		return cg_const(c, n->cval);
	case AST_PARAMCOUNT:
	case AST_SIZEOF:
		return cg_const(c, n->cval);
	case AST_IDENT:
		if (n->cstr)
			return const_str(c, n->cstr, n->type.size);
		return cg_const(c, n->cval);
	case AST_CAST:
		return cast(c, n);
	case AST_FIELD:
	case AST_INDEX:
		if (n->lhs->type.kind == TY_STR)
			return str_index(c, n);
		return read_expr(c, n);
	case AST_TUPLE:
		return tuple_value(c, n);
	case AST_TUPLE_INDEX:
		return tuple_index(c, n);
	case AST_STR:
		return str_literal(c, n);
	case AST_BUILTIN:
		return cg_builtin(c, n);
	case AST_VAR: {
		LLVMValueRef p = cg_var_ptr(c, n);
		if (!p) {
			cg_fail(c, n, "internal: unknown variable");
			return cg_const(c, 0);
		}
		return cg_is_buffer(&n->type) ? p : LLVMBuildLoad2(c->b, c->i64, p, "");
	}
	case AST_MAP:
		return cg_map_read(c, n);
	case AST_CALL:
		return cg_call(c, n);
	case AST_BINOP:
		if (n->type.kind == TY_STR && n->cstr) /* str($1 + 2): sema_str_param_offset */
			return const_str(c, n->cstr, n->type.size);
		return binop(c, n);
	case AST_UNOP: {
		if (n->op == '*')
			return read_expr(c, n);
		if (n->op == '&') { /* the variable's slot, in this thread's frame */
			LLVMValueRef p = cg_var_ptr(c, n->lhs);
			return p ? LLVMBuildPtrToInt(c->b, p, c->i64, "addr") : cg_const(c, 0);
		}
		LLVMValueRef v = cg_expr(c, n->lhs);
		if (n->op == '-')
			return LLVMBuildNeg(c->b, v, "");
		if (n->op == '~')
			return LLVMBuildNot(c->b, v, "");
		return cg_bool64(c, LLVMBuildICmp(c->b, LLVMIntEQ, v, cg_const(c, 0), ""));
	}
	case AST_INCDEC:
		return incdec(c, n);
	case AST_TERNARY:
		return ternary(c, n);
	case AST_BLOCK: { /* a block's value: its statements, then its last expression */
		for (int i = 0; i + 1 < n->nkids; i++)
			cg_stmt(c, n->kids[i]);
		const struct ast_node *last = n->kids[n->nkids - 1];
		return cg_expr(c, last->kind == AST_EXPR_STMT ? last->lhs : last);
	}
	case AST_IF: /* if as a value: a ternary whose arms are block values */
		return if_value(c, n);
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
		cg_map_assign(c, t, n->rhs, n);
		return;
	}
	if (t->kind == AST_MAP) {
		/* @x op= v: read-modify-write of an integer map, like bpftrace */
		LLVMValueRef v = cg_expr(c, n->rhs);
		LLVMBasicBlockRef miss;
		LLVMValueRef idx = cg_map_index_checked(c, t, true, &miss, t);
		LLVMValueRef p = cg_map_value_ptr(c, t, idx);
		LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, p, "");
		LLVMBuildStore(c->b, arith_values(c, op, &n->optype, &t->type, &n->rhs->type, old, v),
			       p);
		cg_mark_written(c, t);
		cg_map_done(c, miss);
		return;
	}
	LLVMValueRef p = cg_var_ptr(c, t);
	if (!p) {
		cg_fail(c, n, "internal: unknown variable");
		return;
	}
	LLVMValueRef v = cg_expr(c, n->rhs);
	if (t->type.kind != TY_STR && cg_is_buffer(&t->type)) {
		cg_store_as(c, p, &t->type, v, &n->rhs->type);
		return;
	}
	if (t->type.kind == TY_STR) {
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, t->type.size), 1);
		uint64_t len = n->rhs->type.size < t->type.size ? n->rhs->type.size : t->type.size;
		cg_copy_str(c, p, v, len);
		return;
	}
	if (op)
		v = arith_values(c, op, &n->optype, &t->type, &n->rhs->type,
				 LLVMBuildLoad2(c->b, c->i64, p, ""), v);
	LLVMBuildStore(c->b, v, p);
}

static void if_stmt(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef cond = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->cond), cg_const(c, 0), "");
	LLVMBasicBlockRef t = cg_new_bb(c, "if_then"), e = cg_new_bb(c, "if_else"),
			  d = cg_new_bb(c, "if_done");
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

/* After break/continue/return: code that follows goes to a fresh block
 * no branch reaches (LLVM removes it). */
static void jump(struct cg *c, LLVMBasicBlockRef to)
{
	LLVMBuildBr(c->b, to);
	LLVMPositionBuilderAtEnd(c->b, cg_new_bb(c, "dead"));
}

static void loop_body(struct cg *c, const struct ast_node *body, LLVMBasicBlockRef brk,
		      LLVMBasicBlockRef cont)
{
	LLVMBasicBlockRef ob = c->loop_break, oc = c->loop_continue;
	c->loop_break = brk;
	c->loop_continue = cont;
	cg_stmt(c, body);
	c->loop_break = ob;
	c->loop_continue = oc;
}

/*
 * The rest of a counted loop n (for_range, cg_map_for), from its body
 * block: body (break -> done, continue -> step); step: the hit's budget
 * pays for the turn, ++*iv, back to cond; the builder ends at done.
 */
void cg_loop_rest(struct cg *c, const struct ast_node *n, LLVMValueRef iv,
		  LLVMBasicBlockRef cond, LLVMBasicBlockRef step, LLVMBasicBlockRef done)
{
	loop_body(c, n->body, done, step);
	LLVMBuildBr(c->b, step);
	LLVMPositionBuilderAtEnd(c->b, step);
	cg_loop_charge(c, n);
	LLVMBuildStore(c->b, LLVMBuildAdd(c->b, LLVMBuildLoad2(c->b, c->i64, iv, ""), cg_const(c, 1), ""),
		       iv);
	LLVMBuildBr(c->b, cond);
	LLVMPositionBuilderAtEnd(c->b, done);
}

/*
 * while (cond) body:
 *   cond: the hit's budget pays for the turn (cg_loop.c); if (!cond) goto done;
 *         body;  goto cond
 */
static void while_stmt(struct cg *c, const struct ast_node *n)
{
	LLVMBasicBlockRef cond = cg_new_bb(c, "while_cond"), body = cg_new_bb(c, "while_body"),
			  done = cg_new_bb(c, "while_done");
	LLVMBuildBr(c->b, cond);
	LLVMPositionBuilderAtEnd(c->b, cond);
	cg_loop_charge(c, n);
	LLVMValueRef v = LLVMBuildICmp(c->b, LLVMIntNE, cg_expr(c, n->cond), cg_const(c, 0), "");
	LLVMBuildCondBr(c->b, v, body, done);
	LLVMPositionBuilderAtEnd(c->b, body);
	loop_body(c, n->body, done, cond);
	LLVMBuildBr(c->b, cond);
	LLVMPositionBuilderAtEnd(c->b, done);
}

/* for ($i : a..b) body: $i = a; while ($i < b) { body; $i++ } */
static void for_range(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef iv = cg_var_ptr(c, n->lhs);
	if (!iv) {
		cg_fail(c, n, "internal: unknown loop variable");
		return;
	}
	LLVMValueRef end = cg_alloca(c, c->i64, "range_end");
	LLVMBuildStore(c->b, cg_expr(c, n->kids[0]), iv);
	LLVMBuildStore(c->b, cg_expr(c, n->kids[1]), end);
	LLVMBasicBlockRef cond = cg_new_bb(c, "for_cond"), body = cg_new_bb(c, "for_body"),
			  step = cg_new_bb(c, "for_step"), done = cg_new_bb(c, "for_done");
	LLVMBuildBr(c->b, cond);
	LLVMPositionBuilderAtEnd(c->b, cond);
	LLVMValueRef in = LLVMBuildICmp(c->b, LLVMIntSLT, LLVMBuildLoad2(c->b, c->i64, iv, ""),
					LLVMBuildLoad2(c->b, c->i64, end, ""), "");
	LLVMBuildCondBr(c->b, in, body, done);
	LLVMPositionBuilderAtEnd(c->b, body);
	cg_loop_rest(c, n, iv, cond, step, done);
}

/*
 * unroll(N) body (1 <= N <= 100): a counted loop, so neither the code nor
 * the compile time grows with N (nested unrolls used to multiply into
 * thousands of copies of the body in one function, and LLVM's passes are
 * not linear in a function's size); LLVM unrolls it again where the body
 * is small.  It is not a loop of the language: break and continue inside
 * still mean the enclosing while or for.
 */
static void unroll_stmt(struct cg *c, const struct ast_node *n)
{
	if (n->uval <= 1) {
		cg_stmt(c, n->body);
		return;
	}
	LLVMValueRef k = cg_alloca(c, c->i64, "unroll_k");
	LLVMBuildStore(c->b, cg_const(c, 0), k);
	LLVMBasicBlockRef cond = cg_new_bb(c, "unroll_cond"), body = cg_new_bb(c, "unroll_body"),
			  done = cg_new_bb(c, "unroll_done");
	LLVMBuildBr(c->b, cond);
	LLVMPositionBuilderAtEnd(c->b, cond);
	LLVMValueRef kv = LLVMBuildLoad2(c->b, c->i64, k, "");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, kv, cg_const(c, n->uval), ""), body,
			done);
	LLVMPositionBuilderAtEnd(c->b, body);
	cg_stmt(c, n->body);
	cg_loop_charge(c, n);
	LLVMBuildStore(c->b, LLVMBuildAdd(c->b, LLVMBuildLoad2(c->b, c->i64, k, ""), cg_const(c, 1), ""),
		       k);
	LLVMBuildBr(c->b, cond);
	LLVMPositionBuilderAtEnd(c->b, done);
}

/* let $x [: type] [= e]: (re)initialised each time it runs */
static void let_stmt(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef p = cg_var_ptr(c, n->lhs);
	if (!p) {
		cg_fail(c, n, "internal: unknown variable");
		return;
	}
	const struct ast_type *t = &n->lhs->type;
	if (ast_type_is_blob(t->kind)) { /* `let $t;` of a tuple or record: zeros, then the value */
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)t->size),
				1);
		if (n->rhs)
			cg_store_as(c, p, t, cg_expr(c, n->rhs), &n->rhs->type);
		return;
	}
	if (t->kind != TY_INT && t->kind != TY_STR && t->kind != TY_PTR) {
		cg_fail(c, n, "variables of this type are not supported by the code generator yet");
		return;
	}
	if (t->kind == TY_STR)
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, t->size), 1);
	else
		LLVMBuildStore(c->b, cg_const(c, 0), p);
	if (!n->rhs)
		return;
	LLVMValueRef v = cg_expr(c, n->rhs);
	if (t->kind == TY_STR) {
		uint64_t len = n->rhs->type.size < t->size ? n->rhs->type.size : t->size;
		cg_copy_str(c, p, v, len);
		return;
	}
	if (t->kind == TY_INT && t->size < 8) {
		LLVMTypeRef nt = LLVMIntTypeInContext(c->ctx, (unsigned)t->size * 8);
		LLVMValueRef tr = LLVMBuildTrunc(c->b, v, nt, "");
		v = t->is_signed ? LLVMBuildSExt(c->b, tr, c->i64, "") : LLVMBuildZExt(c->b, tr, c->i64, "");
	}
	LLVMBuildStore(c->b, v, p);
}

void cg_stmt(struct cg *c, const struct ast_node *n)
{
	if (!n)
		return;
	switch (n->kind) {
	case AST_WHILE:
		while_stmt(c, n);
		break;
	case AST_UNROLL:
		unroll_stmt(c, n);
		break;
	case AST_FOR_RANGE:
		for_range(c, n);
		break;
	case AST_FOR_MAP: {
		LLVMValueRef kv = cg_var_ptr(c, n->lhs);
		if (!kv)
			cg_fail(c, n, "internal: unknown loop variable");
		else
			cg_map_for(c, n, kv); /* cg_map.c */
		break;
	}
	case AST_BREAK:
	case AST_CONTINUE:
		if (!c->loop_break) {
			cg_fail(c, n, "internal: break/continue outside a loop");
			break;
		}
		jump(c, n->kind == AST_BREAK ? c->loop_break : c->loop_continue);
		break;
	case AST_RETURN:
		jump(c, c->exit_bb);
		break;
	case AST_LET:
		let_stmt(c, n);
		break;
	case AST_BLOCK:
		for (int i = 0; i < n->nkids; i++)
			cg_stmt(c, n->kids[i]);
		break;
	case AST_EXPR_STMT:
		if (cg_is_call(n->lhs, "delete")) /* its value unused: a plain store */
			cg_map_delete(c, n->lhs->kids[0], n->lhs, false);
		else
			cg_expr(c, n->lhs);
		break;
	case AST_ASSIGN:
		assign(c, n);
		break;
	case AST_IF:
		if_stmt(c, n);
		break;
	default:
		/* a bare expression used as a statement; a delete() whose value
		 * is unused is a plain store (the latency idiom's) */
		if (cg_is_call(n, "delete"))
			cg_map_delete(c, n->kids[0], n, false);
		else
			cg_expr(c, n);
		break;
	}
}
