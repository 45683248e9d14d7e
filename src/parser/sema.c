/*
 * sema.c - semantic analysis: types every expression, resolves maps and
 * scratch variables, checks calls, printf formats and builtins, and fills
 * struct sema_info for the code generator and the output stage.
 *
 * Pipeline position: parse_script() -> sema_check() -> cg_compile().
 *
 * Messages and their ranges are bpftrace 0.17's, and so is the order they
 * come out in.  bpftrace walks the program several times: the first walk
 * learns map types from assignments (so a map may be read before the
 * statement that assigns it), later walks also compare map keys, and the
 * last one checks what needs every type known (printf formats, conditions,
 * operand types).  It stops after the first walk that found errors, and so
 * do we, with three walks:
 *
 *   pass 1  types, calls, variables, map values
 *   pass 2  + map key consistency ("Argument mismatch for @m: ...")
 *   pass 3  + final checks, warnings, printf records
 *
 * Every walk recurses over the tree; the parser refuses trees deeper than
 * AST_MAX_DEPTH, which bounds the recursion.
 */
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"
#include "../util/util.h"

const char *sema_type_name(const struct ast_type *t, char *buf, size_t len)
{
	switch (t->kind) {
	case TY_INT:
		snprintf(buf, len, "%sint%d", t->is_signed ? "" : "unsigned ", t->size * 8);
		return buf;
	case TY_STR:
		snprintf(buf, len, "string[%d]", t->size);
		return buf;
	case TY_COUNT:
		return "count";
	case TY_SUM:
		return "sum";
	case TY_PTR: {
		char inner[256];
		snprintf(buf, len, "%s *", sema_type_name(t->elem, inner, sizeof(inner)));
		return buf;
	}
	case TY_ARRAY: {
		char inner[256];
		snprintf(buf, len, "%s[%d]", sema_type_name(t->elem, inner, sizeof(inner)), t->count);
		return buf;
	}
	case TY_STRUCT:
		snprintf(buf, len, "%s", t->rec->name);
		return buf;
	case TY_TUPLE: {
		struct buf b = { 0 };
		char inner[256];
		buf_printf(&b, "(");
		for (int i = 0; i < t->tup->count; i++)
			buf_printf(&b, "%s%s", i ? "," : "",
				   sema_type_name(&t->tup->types[i], inner, sizeof(inner)));
		buf_printf(&b, ")");
		snprintf(buf, len, "%s", b.data);
		buf_free(&b);
		return buf;
	}
	case TY_NONE:
	case TY_VOID:
	default:
		return "none";
	}
}

/* bpftrace's name for the kind alone: "integer", "string", ... */
const char *sema_kind_name(const struct ast_type *t)
{
	switch (t->kind) {
	case TY_INT: return "integer";
	case TY_STR: return "string";
	case TY_COUNT: return "count";
	case TY_SUM: return "sum";
	case TY_PTR: return "pointer";
	case TY_STRUCT: return "record";
	case TY_ARRAY: return "array";
	case TY_TUPLE: return "tuple";
	default: return "none";
	}
}

const char *sema_tn(const struct ast_type *t, char buf[64])
{
	return sema_type_name(t, buf, 64);
}

static struct src_loc join(struct src_loc a, struct src_loc b)
{
	a.end_line = b.end_line;
	a.end_col = b.end_col;
	return a;
}

/* ---- maps and variables ------------------------------------------------- */

/* sema_map plus what only sema needs; pub must stay first (the info list
 * holds pointers to it, and sema_info_free() frees them as such). */
struct map_priv {
	struct sema_map pub;
	bool keys_known; /* pub.nkeys/keys hold the first use's keys */
	bool has_value;  /* an assignment was seen (its type may be none) */
};

static struct map_priv *map_find(struct sema *s, const char *name, bool create)
{
	for (int i = 0; i < s->info->nmaps; i++)
		if (!strcmp(s->info->maps[i]->name, name))
			return (struct map_priv *)s->info->maps[i];
	if (!create)
		return NULL;
	struct map_priv *m = xcalloc(1, sizeof(*m));
	m->pub.name = xstrdup(name);
	m->pub.id = s->info->nmaps;
	s->info->maps = xrealloc(s->info->maps, (s->info->nmaps + 1) * sizeof(*s->info->maps));
	s->info->maps[s->info->nmaps++] = &m->pub;
	return m;
}

static struct sema_var *var_find(struct sema *s, const char *name)
{
	for (int i = 0; i < s->info->nvars; i++)
		if (s->info->vars[i]->probe == s->probe && !strcmp(s->info->vars[i]->name, name))
			return s->info->vars[i];
	return NULL;
}

static struct sema_var *var_add(struct sema *s, const char *name, struct ast_type t)
{
	struct sema_var *v = xcalloc(1, sizeof(*v));
	v->name = xstrdup(name);
	v->type = t;
	v->probe = s->probe;
	s->info->vars = xrealloc(s->info->vars, (s->info->nvars + 1) * sizeof(*s->info->vars));
	s->info->vars[s->info->nvars++] = v;
	return v;
}

/* "[unsigned int64, string[2]]" */
static void key_list(struct buf *b, const struct ast_type *keys, int n)
{
	char t[64];
	buf_printf(b, "[");
	for (int i = 0; i < n; i++)
		buf_printf(b, "%s%s", i ? ", " : "", sema_tn(&keys[i], t));
	buf_printf(b, "]");
}

/* map -> '@name' ['[' expr (',' expr)* ']'] */
static void check_map(struct sema *s, struct ast_node *n)
{
	struct ast_type keys[SEMA_MAX_KEYS];
	int nkeys = n->nkids < SEMA_MAX_KEYS ? n->nkids : SEMA_MAX_KEYS;
	bool keys_ok = true;
	for (int i = 0; i < n->nkids; i++) {
		struct ast_node *k = n->kids[i];
		sema_expr(s, k, USE_KEY, n);
		if (s->final && k->type.kind == TY_NONE)
			diag_error(s->diags, k->loc, "Invalid expression for assignment: ");
		if (k->type.kind == TY_STR && s->pass == 1)
			diag_error(s->diags, k->loc, "string map keys are not supported yet");
		if (k->type.kind != TY_INT && k->type.kind != TY_STR)
			keys_ok = false;
		if (i < SEMA_MAX_KEYS) {
			keys[i] = k->type;
			keys[i].as = AS_NONE;
			/* bpftrace compares integer keys without their sign */
			if (keys[i].kind == TY_INT)
				keys[i] = ty_uint64;
		}
	}
	if (n->nkids > SEMA_MAX_KEYS && s->pass == 1)
		diag_error(s->diags, n->loc, "%s: more than %d map keys are not supported", n->str,
			   SEMA_MAX_KEYS);

	struct map_priv *m = map_find(s, n->str, false);
	if (s->pass > 1 && keys_ok) {
		if (!m)
			m = map_find(s, n->str, true);
		if (!m->keys_known) {
			m->keys_known = true;
			m->pub.nkeys = nkeys;
			memcpy(m->pub.keys, keys, nkeys * sizeof(keys[0]));
		} else {
			bool same = m->pub.nkeys == nkeys;
			for (int i = 0; same && i < nkeys; i++) {
				struct ast_type *a = &m->pub.keys[i];
				if (a->kind == TY_STR && keys[i].kind == TY_STR) {
					if (keys[i].size > a->size)
						a->size = keys[i].size;
				} else if (a->kind != keys[i].kind || a->size != keys[i].size ||
					   a->is_signed != keys[i].is_signed) {
					same = false;
				}
			}
			if (!same) {
				struct buf b = { 0 };
				buf_printf(&b, "Argument mismatch for %s: trying to access with arguments: ",
					   n->str);
				key_list(&b, keys, nkeys);
				buf_printf(&b, " when map expects arguments: ");
				key_list(&b, m->pub.keys, m->pub.nkeys);
				diag_error(s->diags, n->loc, "%s", b.data);
				buf_free(&b);
			}
		}
	}
	if (m && m->has_value) {
		n->type = m->pub.value;
	} else {
		if (s->final)
			diag_error(s->diags, n->loc, "Undefined map: %s", n->str);
		n->type = ty_none;
	}
	n->map = m ? &m->pub : NULL;
}

/* Records the value type of an assignment to a map, or reports a clash. */
static void assign_map_type(struct sema *s, struct ast_node *map, struct ast_type t)
{
	struct map_priv *m = map_find(s, map->str, false);
	char a[64], b[64];
	if (m && m->has_value) {
		struct ast_type *mt = &m->pub.value;
		if (mt->kind == TY_NONE) {
			if (s->final)
				diag_error(s->diags, map->loc, "Undefined map: %s", map->str);
			else
				*mt = t;
		} else if (mt->kind != t.kind) {
			/* sic: bpftrace 0.17 leaves the last quote out */
			diag_error(s->diags, map->loc,
				   "Type mismatch for %s: trying to assign value of type '%s' when map already contains a value of type '%s",
				   map->str, sema_tn(&t, a), sema_tn(mt, b));
		} else if (mt->kind == TY_STR && t.size > mt->size) {
			mt->size = t.size;
		}
	} else {
		if (!m)
			m = map_find(s, map->str, true);
		m->pub.value = t;
		m->has_value = true;
		if (t.kind == TY_INT)
			m->pub.value.size = 8;
	}
	map->map = &m->pub;
	if (m->pub.value.kind != TY_NONE)
		map->type = m->pub.value;
}

/* ---- expressions -------------------------------------------------------- */

static bool is_int_literal(const struct ast_node *n, int64_t *v)
{
	if (n->kind != AST_INT)
		return false;
	*v = (int64_t)n->uval;
	return true;
}

/* bpftrace's warnings for integer operands of different signedness. */
static void binop_int_warnings(struct sema *s, const struct ast_node *n, const struct ast_node *l,
			       const struct ast_node *r, struct src_loc oploc, int op)
{
	bool ls = l->type.is_signed, rs = r->type.is_signed;
	int64_t v;
	if (ls == rs)
		return;
	if (ls && !rs && is_int_literal(l, &v) && v >= 0)
		return;
	if (!ls && rs && is_int_literal(r, &v) && v >= 0)
		return;
	char a[64], b[64];
	const char *what = NULL;
	switch (op) {
	case OP_EQ: case OP_NE: case OP_LE: case OP_GE: case '<': case '>':
		what = "comparison of";
		break;
	case '+': case '-': case '*': case '/': case '%':
		what = "arithmetic on";
		break;
	default:
		return;
	}
	(void)n;
	diag_warning(s->diags, oploc,
		     "%s integers of different signs: '%s' and '%s' can lead to undefined behavior",
		     what, sema_tn(&l->type, a), sema_tn(&r->type, b));
}


/* The type of `l op r`; also the checks bpftrace makes on it.  Used for
 * AST_BINOP and for compound assignments (`@x += r` is `@x = @x + r`). */
static struct ast_type binop_type(struct sema *s, const struct ast_node *n,
				  const struct ast_node *l, const struct ast_node *r, int op,
				  struct src_loc oploc)
{
	const struct ast_type *lt = &l->type, *rt = &r->type;
	bool sign = lt->is_signed && rt->is_signed;
	if (op == OP_SHL || op == OP_SHR)
		sign = lt->is_signed;
	struct ast_type t = { TY_INT, 8, sign, AS_NONE };
	if (lt->as != rt->as && lt->as != AS_NONE && rt->as != AS_NONE)
		t.as = AS_NONE;
	else
		t.as = lt->as != AS_NONE ? lt->as : rt->as;
	if (!s->final)
		return t;
	char a[64], b[64];
	if (lt->kind == TY_INT && rt->kind == TY_INT) {
		binop_int_warnings(s, n, l, r, oploc, op);
	} else if (lt->kind != rt->kind) {
		diag_error(s->diags, join(l->loc, r->loc),
			   "Type mismatch for '%s': comparing '%s' with '%s'", ast_op_text(op), sema_tn(lt, a),
			   sema_tn(rt, b));
	} else if (op != OP_EQ && op != OP_NE) {
		diag_error(s->diags, oploc,
			   "The %s operator can not be used on expressions of types %s, %s",
			   ast_op_text(op), sema_tn(lt, a), sema_tn(rt, b));
	}
	return t;
}

/* unary -> ('-' | '!' | '~') expr */
static void check_unop(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->lhs, USE_NONE, NULL);
	const struct ast_type *t = &n->lhs->type;
	char a[64];
	if (n->op == '*') {
		diag_error(s->diags, n->loc, "pointer dereference is not supported yet");
		n->type = ty_uint64;
		return;
	}
	if (s->final && t->kind != TY_INT)
		diag_error(s->diags, n->loc,
			   "The %s operator can not be used on expressions of type '%s'",
			   ast_op_text(n->op), sema_tn(t, a));
	if (n->op == '!')
		n->type = (struct ast_type){ TY_INT, t->size ? t->size : 0, false, AS_NONE };
	else
		n->type = (struct ast_type){ TY_INT, 8, t->is_signed, AS_NONE };
	if (n->type.size == 0 || n->type.size > 8)
		n->type.size = 8;
}

/* ++x, x++, --x, x-- on a map or variable */
static void check_incdec(struct sema *s, struct ast_node *n)
{
	struct ast_node *t = n->lhs;
	if (t->kind == AST_MAP) {
		struct map_priv *m = map_find(s, t->str, false);
		if (!m || !m->has_value)
			assign_map_type(s, t, ty_int64);
	}
	sema_expr(s, t, USE_NONE, NULL);
	char a[64];
	if (s->final && t->type.kind != TY_INT)
		diag_error(s->diags, n->loc,
			   "The %s operator can not be used on expressions of type '%s'",
			   ast_op_text(n->op), sema_tn(&t->type, a));
	n->type = (struct ast_type){ TY_INT, 8, t->type.is_signed, AS_NONE };
}

/* ternary -> expr '?' expr ':' expr */
static void check_ternary(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->cond, USE_NONE, NULL);
	sema_expr(s, n->lhs, USE_NONE, NULL);
	sema_expr(s, n->rhs, USE_NONE, NULL);
	const struct ast_type *c = &n->cond->type, *l = &n->lhs->type, *r = &n->rhs->type;
	if (s->final) {
		if (l->kind != r->kind && !(l->kind == TY_VOID && r->kind == TY_NONE) &&
		    !(l->kind == TY_NONE && r->kind == TY_VOID))
			diag_error(s->diags, n->loc,
				   "Ternary operator must return the same type: have '%s' and '%s'",
				   sema_kind_name(l), sema_kind_name(r));
		if (c->kind != TY_INT)
			diag_error(s->diags, n->loc, "Invalid condition in ternary: %s", sema_kind_name(c));
	}
	if (l->kind == TY_STR)
		n->type = ty_str(64);
	else if (l->kind == TY_INT)
		n->type = (struct ast_type){ TY_INT, 8, l->is_signed, AS_NONE };
	else if (l->kind == TY_NONE || l->kind == TY_VOID)
		n->type = ty_none;
	else {
		diag_error(s->diags, n->loc, "Ternary return type unsupported %s", sema_kind_name(l));
		n->type = ty_none;
	}
}

void sema_expr(struct sema *s, struct ast_node *n, enum call_use use,
		const struct ast_node *user)
{
	switch (n->kind) {
	case AST_INT:
		n->type = ty_int64;
		break;
	case AST_STR:
		n->type = ty_str((int)n->slen + 1);
		/* printf's format is not a value the probe handles */
		if (s->func && !strcmp(s->func, "printf") && s->func_arg == 0)
			break;
		if (n->slen > 63 && s->pass == 1)
			diag_error(s->diags, n->loc, "String is too long (over 64 bytes): %.*s",
				   (int)n->slen, n->str);
		n->type.as = AS_KERNEL;
		break;
	case AST_BUILTIN:
		sema_builtin(s, n);
		break;
	case AST_TUPLE:
		for (int i = 0; i < n->nkids; i++)
			sema_expr(s, n->kids[i], USE_NONE, NULL);
		n->type = ty_none;
		diag_error(s->diags, n->loc, "tuples are not supported yet");
		break;
	case AST_IDENT:
		n->type = ty_none;
		diag_error(s->diags, n->loc, "Unknown identifier: '%s'", n->str);
		break;
	case AST_VAR: {
		struct sema_var *v = var_find(s, n->str);
		n->var = v;
		if (v) {
			n->type = v->type;
		} else {
			diag_error(s->diags, n->loc, "Undefined or undeclared variable: %s", n->str);
			n->type = ty_none;
		}
		break;
	}
	case AST_MAP:
		check_map(s, n);
		break;
	case AST_CALL:
		sema_call(s, n, use, user);
		break;
	case AST_BINOP:
		sema_expr(s, n->lhs, USE_NONE, NULL);
		sema_expr(s, n->rhs, USE_NONE, NULL);
		n->type = binop_type(s, n, n->lhs, n->rhs, n->op, n->loc);
		break;
	case AST_UNOP:
		check_unop(s, n);
		break;
	case AST_INCDEC:
		check_incdec(s, n);
		break;
	case AST_TERNARY:
		check_ternary(s, n);
		break;
	default:
		diag_error(s->diags, n->loc, "internal error: unexpected node in an expression");
		break;
	}
}

/* ---- statements --------------------------------------------------------- */

static void check_block(struct sema *s, struct ast_node *blk);

/* assign -> map ('=' | op'=') expr */
static void check_assign_map(struct sema *s, struct ast_node *n)
{
	struct ast_node *map = n->lhs;
	check_map(s, map);
	struct ast_type t;
	if (n->op == '=') {
		sema_expr(s, n->rhs, USE_MAP, map);
		t = n->rhs->type;
	} else {
		check_map(s, map);
		sema_expr(s, n->rhs, USE_NONE, NULL);
		n->optype = binop_type(s, n, map, n->rhs, n->op, n->pred_loc);
		t = n->optype;
	}
	assign_map_type(s, map, t);
	if (s->final && t.kind == TY_NONE)
		diag_error(s->diags, n->rhs->loc, "Invalid expression for assignment: none");
}

/* assign -> var ('=' | op'=') expr */
static void check_assign_var(struct sema *s, struct ast_node *n)
{
	struct ast_node *var = n->lhs;
	struct ast_type t;
	char a[64], b[64];
	if (n->op == '=') {
		sema_expr(s, n->rhs, USE_VAR, var);
		t = n->rhs->type;
	} else {
		sema_expr(s, var, USE_NONE, NULL);
		sema_expr(s, n->rhs, USE_NONE, NULL);
		n->optype = binop_type(s, n, var, n->rhs, n->op, n->pred_loc);
		t = n->optype;
	}
	struct sema_var *v = var_find(s, var->str);
	if (v) {
		if (v->type.kind == TY_NONE) {
			if (s->final)
				diag_error(s->diags, n->loc, "Undefined variable: %s", var->str);
			else
				v->type = t;
		} else if (v->type.kind == TY_STR && t.kind == TY_STR) {
			if (t.size > v->type.size)
				v->type.size = t.size;
		} else if (v->type.kind != t.kind) {
			diag_error(s->diags, n->loc,
				   "Type mismatch for %s: trying to assign value of type '%s' when variable already contains a value of type '%s'",
				   var->str, sema_tn(&t, a), sema_tn(&v->type, b));
		}
	} else {
		v = var_add(s, var->str, t);
	}
	var->var = v;
	var->type = v->type;
	if (s->final && t.kind == TY_NONE)
		diag_error(s->diags, n->rhs->loc, "Invalid expression for assignment: none");
}

static void check_stmt(struct sema *s, struct ast_node *n)
{
	switch (n->kind) {
	case AST_EXPR_STMT:
		sema_expr(s, n->lhs, USE_NONE, NULL);
		break;
	case AST_ASSIGN:
		if (n->lhs->kind == AST_MAP)
			check_assign_map(s, n);
		else
			check_assign_var(s, n);
		break;
	case AST_IF:
		sema_expr(s, n->cond, USE_NONE, NULL);
		if (s->final && n->cond->type.kind != TY_INT)
			diag_error(s->diags, n->loc, "Invalid condition in if(): %s",
				   sema_kind_name(&n->cond->type));
		check_block(s, n->body);
		if (n->els && n->els->kind == AST_IF)
			check_stmt(s, n->els);
		else if (n->els)
			check_block(s, n->els);
		break;
	case AST_BLOCK:
		check_block(s, n);
		break;
	default:
		sema_expr(s, n, USE_NONE, NULL);
		break;
	}
}

static void check_block(struct sema *s, struct ast_node *blk)
{
	for (int i = 0; i < blk->nkids; i++)
		check_stmt(s, blk->kids[i]);
}

/* probe -> attach_points ['/' pred '/'] block */
static void check_probe(struct sema *s, struct ast_node *probe)
{
	s->probe = probe;
	if (probe->pred) {
		sema_expr(s, probe->pred, USE_NONE, NULL);
		if (s->final && probe->pred->type.kind != TY_INT)
			diag_error(s->diags, probe->pred_loc, "Invalid type for predicate: %s",
				   sema_kind_name(&probe->pred->type));
	}
	if (probe->body)
		check_block(s, probe->body);
}

int sema_check(struct ast_node *prog, struct diags *diags, struct sema_info *info)
{
	memset(info, 0, sizeof(*info));
	struct sema s = { .diags = diags, .info = info };
	int errors_before = diags->nerrors;
	for (s.pass = 1; s.pass <= SEMA_PASSES; s.pass++) {
		s.final = s.pass == SEMA_PASSES;
		for (int i = 0; i < prog->nkids; i++)
			check_probe(&s, prog->kids[i]);
		if (diags->nerrors > errors_before)
			return -1;
	}
	return 0;
}

void sema_info_free(struct sema_info *info)
{
	for (int i = 0; i < info->nmaps; i++) {
		free(info->maps[i]->name);
		free(info->maps[i]); /* the struct map_priv it heads */
	}
	free(info->maps);
	for (int i = 0; i < info->nvars; i++) {
		free(info->vars[i]->name);
		free(info->vars[i]);
	}
	free(info->vars);
	for (int i = 0; i < info->nprintfs; i++) {
		free(info->printfs[i]->fmt);
		free(info->printfs[i]);
	}
	free(info->printfs);
	memset(info, 0, sizeof(*info));
}
