/*
 * cg_expr.c - LLVM IR for statements and expressions (operators, scratch
 * variables, control flow).  Maps are in cg_map.c, builtins and calls in
 * cg_call.c.
 *
 * Values: every integer is carried as i64 (sign- or zero-extended from its
 * type by sema's rules); a string is a pointer to a buffer of its type's
 * size.  Semantics follow bpftrace where it is sane and C otherwise:
 * division by zero gives 0 (as in BPF) and never traps the target, signed
 * division of INT64_MIN by -1 wraps, shift counts are taken modulo 64.
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
	return LLVMBuildSelect(c->b, rz, zero, q, "");
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
	LLVMBasicBlockRef t = cg_new_bb(c, "tern_t"), f = cg_new_bb(c, "tern_f"), d = cg_new_bb(c, "tern_d");
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
	LLVMValueRef delta = cg_const(c, n->op == OP_INC ? 1 : -1ull);
	const struct ast_node *t = n->lhs;
	LLVMValueRef res = cg_alloca(c, c->i64, "incdec");
	LLVMBuildStore(c->b, cg_const(c, 0), res);
	LLVMValueRef p;
	LLVMBasicBlockRef miss = NULL;
	if (t->kind == AST_VAR) {
		p = cg_var_ptr(c, t);
	} else {
		LLVMValueRef idx = cg_map_index(c, t, true, &miss);
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

LLVMValueRef cg_expr(struct cg *c, const struct ast_node *n)
{
	switch (n->kind) {
	case AST_INT:
		return cg_const(c, n->uval);
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
		return n->type.kind == TY_STR ? p : LLVMBuildLoad2(c->b, c->i64, p, "");
	}
	case AST_MAP:
		return cg_map_read(c, n);
	case AST_CALL:
		return cg_call(c, n);
	case AST_BINOP:
		return binop(c, n);
	case AST_UNOP: {
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
		cg_map_assign(c, t, n->rhs);
		return;
	}
	if (t->kind == AST_MAP) {
		/* @x op= v: read-modify-write of an integer map, like bpftrace */
		bool sgn = t->type.is_signed && n->rhs->type.is_signed;
		LLVMValueRef v = cg_expr(c, n->rhs);
		LLVMBasicBlockRef miss;
		LLVMValueRef idx = cg_map_index(c, t, true, &miss);
		LLVMValueRef p = cg_map_value_ptr(c, t, idx);
		LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, p, "");
		LLVMBuildStore(c->b, binop_values(c, op, sgn, old, v), p);
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
	if (t->type.kind == TY_STR) {
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, t->type.size), 1);
		uint64_t len = n->rhs->type.size < t->type.size ? n->rhs->type.size : t->type.size;
		cg_copy_str(c, p, v, len);
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
