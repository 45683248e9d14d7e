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
#include <strings.h>

#include "sema_internal.h"
#include "../util/util.h"

/* bpftrace's name for the kind alone: "integer", "string", ... */
const char *sema_kind_name(const struct ast_type *t)
{
	switch (t->kind) {
	case TY_INT: return "integer";
	case TY_STR: return "string";
	case TY_COUNT: return "count";
	case TY_SUM: return "sum";
	case TY_AVG: case TY_MIN: case TY_MAX: case TY_STATS: case TY_HIST: case TY_LHIST:
		return ast_type_name(t, (char[16]){0}, 16);
	case TY_USYM: return "usym";
	case TY_USTACK: return "ustack";
	case TY_PTR: return "pointer";
	case TY_STRUCT: return "record";
	case TY_ARRAY: return "array";
	case TY_TUPLE: return "tuple";
	case TY_BUF: return "buffer";
	case TY_TSTAMP: return "timestamp";
	case TY_INET: return "inet";
	case TY_STRERROR: return "strerror";
	case TY_USERNAME: return "string"; /* bpftrace 0.17's printf message says so */
	case TY_MACADDR: return "mac_address";
	case TY_CGPATH: return "cgroup_path";
	default: return "none";
	}
}

const char *sema_tn(const struct ast_type *t, char buf[64])
{
	return ast_type_name(t, buf, 64);
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

bool sema_map_is_scalar(struct sema *s, const char *name)
{
	const struct map_priv *m = map_find(s, name, false);
	return m && m->keys_known && !m->pub.nkeys;
}

static bool scope_open(const struct sema *s, const struct ast_node *scope)
{
	if (!scope)
		return true;
	for (int i = 0; i < s->nscopes; i++)
		if (s->scopes[i] == scope)
			return true;
	return false;
}

/* The variable `name` visible here: probe-wide, or declared in an open block. */
static struct sema_var *var_find(struct sema *s, const char *name)
{
	for (int i = 0; i < s->info->nvars; i++) {
		struct sema_var *v = s->info->vars[i];
		if (v->probe == s->probe && !strcmp(v->name, name) && scope_open(s, v->scope))
			return v;
	}
	return NULL;
}

static struct sema_var *var_add_scoped(struct sema *s, const char *name, struct ast_type t,
				       const struct ast_node *scope)
{
	struct sema_var *v = xcalloc(1, sizeof(*v));
	v->name = xstrdup(name);
	v->type = t;
	v->probe = s->probe;
	v->scope = scope;
	s->info->vars = xrealloc(s->info->vars, (s->info->nvars + 1) * sizeof(*s->info->vars));
	s->info->vars[s->info->nvars++] = v;
	return v;
}

static struct sema_var *var_add(struct sema *s, const char *name, struct ast_type t)
{
	return var_add_scoped(s, name, t, NULL);
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

/*
 * The type a map keeps for a key of type t: integers as unsigned 8 bytes
 * (bpftrace compares integer keys without their sign), pointers as 8-byte
 * pointers to their pointee, so `@[(uint8 *)arg0]` prints `@[0x4014d0]` as
 * in bpftrace while `@[arg0]` prints `@[4199632]`, and mixing the two (or
 * two pointee types) is an argument mismatch as in bpftrace.
 */
static struct ast_type key_type(struct ast_type t)
{
	t.as = AS_NONE;
	if (t.kind == TY_INT) /* a bool key prints true/false (bpftrace 0.24) */
		return t.is_bool ? (struct ast_type){TY_INT, 8, false, AS_NONE, true} : ty_uint64;
	if (t.kind == TY_PTR)
		return (struct ast_type){ .kind = TY_PTR, .size = 8, .elem = t.elem };
	return t;
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
		if (k->type.kind != TY_INT && k->type.kind != TY_STR && !ast_type_is_blob(k->type.kind) &&
		    k->type.kind != TY_PTR && k->type.kind != TY_USYM &&
		    k->type.kind != TY_USTACK)
			keys_ok = false;
		if (i < SEMA_MAX_KEYS) {
			keys[i] = key_type(k->type);
		}
	}
	if (n->nkids > SEMA_MAX_KEYS && s->pass == 1)
		diag_error(s->diags, n->loc, "%s: more than %d map keys are not supported", n->str,
			   SEMA_MAX_KEYS);
	/* `@m[(1, "a")]` is `@m[1, "a"]`: newer bpftrace makes every multi-key
	 * a tuple, so one tuple key stands for its elements (bpftrace 0.17
	 * refuses tuple keys; docs/compat.md).  A tuple among several keys
	 * stays one key, printed `(1, a)`. */
	if (n->nkids == 1 && n->kids[0]->type.kind == TY_TUPLE && n->kids[0]->type.tup) {
		const struct ast_tuple *tu = n->kids[0]->type.tup;
		nkeys = tu->count < SEMA_MAX_KEYS ? tu->count : SEMA_MAX_KEYS;
		if (tu->count > SEMA_MAX_KEYS && s->pass == 1)
			diag_error(s->diags, n->loc, "%s: more than %d map keys are not supported",
				   n->str, SEMA_MAX_KEYS);
		for (int i = 0; i < nkeys; i++) {
			keys[i] = key_type(tu->types[i]);
			if (keys[i].kind != TY_INT && keys[i].kind != TY_STR &&
			    !ast_type_is_blob(keys[i].kind) && keys[i].kind != TY_USYM &&
			    keys[i].kind != TY_PTR)
				keys_ok = false;
		}
	}

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
				} else if ((ast_type_is_blob(a->kind) || a->kind == TY_PTR) &&
					   a->kind == keys[i].kind) {
					if (!ast_type_eq(a, &keys[i]))
						same = false;
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

/*
 * Strings grow to hold both values, in tuples too, as bpftrace's
 * update_string_size: `@ = ("hello", 0); @ = ("hi", 1)` keeps a
 * (string[6], int64).  Codegen converts a value to the grown layout where
 * it stores it (cg_store_as).
 */
static void widen_strings(struct sema *s, struct ast_type *stored, const struct ast_type *t)
{
	if (stored->kind == TY_STR && t->kind == TY_STR) {
		if (t->size > stored->size)
			stored->size = t->size;
		return;
	}
	if (stored->kind != TY_TUPLE || t->kind != TY_TUPLE)
		return;
	int n = stored->tup->count;
	if (n != t->tup->count || n > 64)
		return;
	struct ast_type el[64];
	bool changed = false;
	for (int i = 0; i < n; i++) {
		el[i] = stored->tup->types[i];
		widen_strings(s, &el[i], &t->tup->types[i]);
		changed |= el[i].size != stored->tup->types[i].size;
	}
	if (changed)
		*stored = ast_tuple_of(s->prog, el, n);
}

/* bpftrace's FitsInto: a t fits where stored values are kept. */
static bool fits_into(const struct ast_type *t, const struct ast_type *stored)
{
	if (t->kind == TY_STR && stored->kind == TY_STR)
		return t->size <= stored->size;
	if (t->kind != TY_TUPLE || stored->kind != TY_TUPLE)
		return ast_type_eq(t, stored);
	if (t->tup->count != stored->tup->count)
		return false;
	for (int i = 0; i < t->tup->count; i++)
		if (!fits_into(&t->tup->types[i], &stored->tup->types[i]))
			return false;
	return true;
}

/* A tuple assigned to a map or variable whose tuple type it does not fit,
 * after string sizes grew (bpftrace checks in its last pass). */
static void check_tuple_fits(struct sema *s, struct ast_type *stored, const struct ast_type *t,
			     struct src_loc loc)
{
	char a[64], b[64];
	widen_strings(s, stored, t);
	if (s->final && !fits_into(t, stored))
		diag_error(s->diags, loc, "Tuple type mismatch: %s != %s.", sema_tn(stored, a),
			   sema_tn(t, b));
}

/* Records the value type of an assignment to a map, or reports a clash. */
/* A comparison or a logical operation: 0 or 1, which bpftrace 0.24 types
 * bool and ubt int64 (0.17's), so it may be stored where a bool is. */
static bool is_truth(const struct ast_node *n);

bool sema_is_truth(const struct ast_node *n)
{
	if (n->kind == AST_CALL && (!strcmp(n->str, "has_key") || !strcmp(n->str, "strcontains") ||
				    !strcmp(n->str, "delete")))
		return true;
	return is_truth(n);
}

static bool is_truth(const struct ast_node *n)
{
	if (n->kind == AST_UNOP)
		return n->op == '!';
	return n->kind == AST_BINOP &&
	       (n->op == OP_EQ || n->op == OP_NE || n->op == '<' || n->op == '>' ||
		n->op == OP_LE || n->op == OP_GE || n->op == OP_LAND || n->op == OP_LOR);
}

static void assign_map_type(struct sema *s, struct ast_node *map, struct ast_type t,
			    const struct ast_node *value, struct src_loc site)
{
	struct map_priv *m = map_find(s, map->str, false);
	char a[64], b[64];
	/* a pointer keeps its type, so `@p += 1` and `@p[0]` step by and read
	 * its pointee (bpftrace prints it in decimal, output/values.c) */
	if (m && m->has_value) {
		struct ast_type *mt = &m->pub.value;
		if (mt->kind == TY_NONE) {
			if (s->final)
				diag_error(s->diags, map->loc, "Undefined map: %s", map->str);
			else
				*mt = t;
		} else if (mt->kind != t.kind || (t.kind == TY_INT && mt->is_bool != t.is_bool &&
						  !(mt->is_bool && value && is_truth(value)))) {
			/* sic: bpftrace 0.17 leaves the last quote out */
			diag_error(s->diags, map->loc,
				   "Type mismatch for %s: trying to assign value of type '%s' when map already contains a value of type '%s",
				   map->str, sema_tn(&t, a), sema_tn(mt, b));
		} else if (mt->kind == TY_STR && t.size > mt->size) {
			mt->size = t.size;
		} else if (mt->kind == TY_TUPLE) {
			check_tuple_fits(s, mt, &t, site);
		} else if (mt->kind == TY_STRUCT && mt->rec != t.rec) {
			/* sic: bpftrace 0.17 ends with two quotes */
			diag_error(s->diags, site,
				   "Type mismatch for %s: trying to assign value of type '%s' when map already contains a value of type '%s''",
				   map->str, sema_tn(&t, a), sema_tn(mt, b));
		} else if (mt->kind == TY_ARRAY && !ast_type_eq(mt, &t)) {
			diag_error(s->diags, site, "Array type mismatch: %s != %s.", sema_tn(mt, a),
				   sema_tn(&t, b));
		} else if (ast_type_is_blob(mt->kind) && !ast_type_eq(mt, &t)) {
			diag_error(s->diags, map->loc,
				   "Type mismatch for %s: trying to assign value of type '%s' when map already contains a value of type '%s",
				   map->str, sema_tn(&t, a), sema_tn(mt, b));
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


/* bpftrace's warnings for integer operands of different signedness. */
static void binop_int_warnings(struct sema *s, const struct ast_node *n, const struct ast_node *l,
			       const struct ast_node *r, struct src_loc oploc, int op)
{
	bool ls = l->type.is_signed, rs = r->type.is_signed;
	int64_t v;
	if (ls == rs)
		return;
	if (ls && !rs && ast_int_literal(l, &v) && v >= 0)
		return;
	if (!ls && rs && ast_int_literal(r, &v) && v >= 0)
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


/* Arrays compare element by element, as bpftrace 0.17: only == and !=,
 * only arrays of integers of one type and count. */
static void binop_array_checks(struct sema *s, const struct ast_type *lt,
			       const struct ast_type *rt, int op, struct src_loc oploc)
{
	if (op != OP_EQ && op != OP_NE)
		diag_error(s->diags, oploc, "The %s operator cannot be used on arrays.",
			   ast_op_text(op));
	if (lt->count != rt->count)
		diag_error(s->diags, oploc, "Only arrays of same size support comparison operators.");
	if (lt->elem->kind != TY_INT || !ast_type_eq(lt, rt))
		diag_error(s->diags, oploc,
			   "Only arrays of same sized integer support comparison operators.");
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
	/* pointer arithmetic: p + i and p - i are pointers (scaled by the
	 * pointee's size), p - q and comparisons are integers */
	bool lp = lt->kind == TY_PTR, rp = rt->kind == TY_PTR;
	if ((lp || rp) && (lp || lt->kind == TY_INT) && (rp || rt->kind == TY_INT)) {
		bool cmp = op == OP_EQ || op == OP_NE || op == '<' || op == '>' || op == OP_LE ||
			   op == OP_GE || op == OP_LAND || op == OP_LOR;
		if (cmp || (lp && rp && op == '-'))
			return (struct ast_type){ TY_INT, 8, lp && rp && op == '-', AS_NONE };
		if ((op == '+' && !(lp && rp)) || (op == '-' && lp))
			return lp ? *lt : *rt;
		if (s->final) {
			char a[64], b[64];
			diag_error(s->diags, oploc,
				   "The %s operator can not be used on expressions of types %s, %s",
				   ast_op_text(op), sema_tn(lt, a), sema_tn(rt, b));
		}
		return t;
	}
	if (!s->final)
		return t;
	char a[64], b[64];
	if (lt->kind == TY_INT && rt->kind == TY_INT) {
		binop_int_warnings(s, n, l, r, oploc, op);
	} else if (lt->kind == TY_ARRAY && rt->kind == TY_ARRAY) {
		binop_array_checks(s, lt, rt, op, oploc);
	} else if (lt->kind != rt->kind) {
		diag_error(s->diags, join(l->loc, r->loc),
			   "Type mismatch for '%s': comparing '%s' with '%s'", ast_op_text(op), sema_tn(lt, a),
			   sema_tn(rt, b));
	} else if (op != OP_EQ && op != OP_NE) {
		diag_error(s->diags, oploc,
			   "The %s operator can not be used on expressions of types %s, %s",
			   ast_op_text(op), sema_tn(lt, a), sema_tn(rt, b));
	} else if (op == OP_EQ && lt->kind == TY_STR && (l->kind == AST_STR) != (r->kind == AST_STR)) {
		/* the bytes compared are at most the shorter buffer's (codegen):
		 * `comm == "a_name_of_17_chars"` can never hold */
		const struct ast_node *lit = l->kind == AST_STR ? l : r;
		const struct ast_node *var = lit == l ? r : l;
		if ((int)lit->slen > var->type.size)
			diag_warning(s->diags, join(l->loc, r->loc),
				     "The literal is longer than the variable string (size=%d), condition will always be false",
				     var->type.size);
	}
	return t;
}

/* unary -> ('-' | '!' | '~') expr */
/* A read of a count/sum/avg/min/max map (typed int64 by read_aggregate). */
static bool agg_read(const struct ast_node *n)
{
	if (n->kind != AST_MAP || !n->map)
		return false;
	enum ast_type_kind k = n->map->value.kind;
	return k == TY_COUNT || k == TY_SUM || k == TY_AVG || k == TY_MIN || k == TY_MAX;
}

static void check_unop(struct sema *s, struct ast_node *n)
{
	if (n->op == '*') {
		sema_deref(s, n);
		return;
	}
	if (n->op == '&') { /* &$x (bpftrace 0.24): a pointer to the variable's slot */
		sema_expr(s, n->lhs, USE_NONE, NULL);
		n->type = ty_none;
		if (n->lhs->kind != AST_VAR)
			diag_error(s->diags, n->loc,
				   "The & operator can only take the address of a variable");
		else if (n->lhs->type.kind != TY_NONE)
			n->type = ast_ptr_to(s->prog, n->lhs->type);
		n->type.as = AS_USER;
		return;
	}
	sema_expr(s, n->lhs, USE_NONE, NULL);
	/* an aggregation read is an integer (read_aggregate), but not for
	 * the operators, as in bpftrace 0.17-0.23 */
	const struct ast_type *t = agg_read(n->lhs) ? &n->lhs->map->value : &n->lhs->type;
	char a[64];
	if (n->op == '*') {
		/* sema_deref() walks the operand itself */
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
			assign_map_type(s, t, ty_int64, NULL, n->loc);
	}
	sema_expr(s, t, USE_NONE, NULL);
	char a[64];
	const struct ast_type *tt = agg_read(t) ? &t->map->value : &t->type;
	if (s->final && tt->kind != TY_INT && tt->kind != TY_PTR)
		diag_error(s->diags, n->loc,
			   "The %s operator can not be used on expressions of type '%s'",
			   ast_op_text(n->op), sema_tn(tt, a));
	if (t->type.kind == TY_PTR) /* `$p++` steps by the pointee (cg_expr.c) */
		n->type = t->type;
	else
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

/*
 * A count/sum/avg/min/max map read in an expression is its number, combined
 * over the CPUs (codegen's map_value), as in bpftrace since 0.20: an
 * int64.  bpftrace 0.17 refused them ("Type
 * mismatch for '+': comparing 'count' with 'int64'"); docs/compat.md.
 * hist/lhist/stats keep their type: they have no one value.
 */
static void read_aggregate(struct ast_node *n)
{
	enum ast_type_kind k = n->type.kind;
	if (k == TY_COUNT || k == TY_SUM || k == TY_AVG || k == TY_MIN || k == TY_MAX)
		n->type = ty_int64; /* `@c - 2` is -1 for a count of 1, as in 0.23 */
}

static void check_stmt(struct sema *s, struct ast_node *n);

/* A block as a value: its statements in its scope, then its last one, an
 * expression without ';', is the value. */
static void check_block_value(struct sema *s, struct ast_node *blk)
{
	struct ast_node *last = blk->nkids ? blk->kids[blk->nkids - 1] : NULL;
	blk->type = ty_none;
	/* the value: a last expression without ';', or a last block or if (with
	 * an else) whose own value it is */
	bool nested = last && ((last->kind == AST_IF && last->els) || last->kind == AST_BLOCK);
	if (!last || (!nested && (last->kind != AST_EXPR_STMT || last->op != 'v'))) {
		diag_error(s->diags, blk->loc,
			   "a block used as a value must end with an expression, without ';'");
		return;
	}
	if (s->nscopes <= AST_MAX_DEPTH)
		s->scopes[s->nscopes] = blk;
	s->nscopes++;
	for (int i = 0; i + 1 < blk->nkids; i++)
		check_stmt(s, blk->kids[i]);
	struct ast_node *v = nested ? last : last->lhs;
	sema_expr(s, v, USE_NONE, NULL);
	s->nscopes--;
	blk->type = v->type;
}

/* if as a value: both arms' values, of one type (as a ternary's) */
static void check_if_value(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->cond, USE_NONE, NULL);
	sema_expr(s, n->body, USE_NONE, NULL);
	n->type = ty_none;
	if (!n->els) {
		diag_error(s->diags, n->loc, "an if used as a value needs an else");
		return;
	}
	sema_expr(s, n->els, USE_NONE, NULL);
	const struct ast_type *l = &n->body->type, *r = &n->els->type;
	if (l->kind != r->kind || (l->kind != TY_INT && l->kind != TY_STR)) {
		if (!s->final)
			return;
		diag_error(s->diags, n->loc,
			   "if's branches must give the same type, an integer or a string: have "
			   "'%s' and '%s'",
			   sema_kind_name(l), sema_kind_name(r));
		return;
	}
	if (l->kind == TY_STR)
		n->type = ty_str(l->size > r->size ? l->size : r->size);
	else
		n->type = (struct ast_type){TY_INT, 8, l->is_signed || r->is_signed, AS_NONE,
					    l->is_bool && r->is_bool};
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
		sema_tuple(s, n);
		break;
	case AST_IDENT:
		sema_ident(s, n);
		break;
	case AST_CAST:
		sema_cast(s, n);
		break;
	case AST_FIELD:
		sema_field(s, n);
		break;
	case AST_INDEX:
		sema_index(s, n);
		break;
	case AST_TUPLE_INDEX:
		sema_tuple_index(s, n);
		break;
	case AST_POSPARAM:
		sema_posparam(s, n);
		break;
	case AST_PARAMCOUNT:
		n->type = ty_int64;
		n->cval = (uint64_t)s->prog->nparams;
		break;
	case AST_SIZEOF:
		sema_sizeof(s, n);
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
		read_aggregate(n);
		break;
	case AST_CALL:
		sema_call(s, n, use, user);
		break;
	case AST_BINOP:
		if (sema_str_param_offset(s, n)) /* str($1 + 2) */
			break;
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
	case AST_BLOCK: /* `$x = { ...; v }` (bpftrace 0.24) */
		check_block_value(s, n);
		break;
	case AST_IF: /* `$x = if (c) { a } else { b }` */
		check_if_value(s, n);
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

/* hist, lhist, stats: no one value to copy or read (bpftrace 0.23's
 * errors; 0.17 made a broken copy), whether named (`@h`) or the value of a
 * block or variable; the aggregation's own call (`hist(x)`) is its value */
static const char *whole_agg(const struct ast_node *r)
{
	enum ast_type_kind k = r->type.kind;
	if (r->kind == AST_MAP && r->map)
		k = r->map->value.kind;
	else if (r->kind == AST_CALL)
		return NULL;
	return k == TY_HIST ? "hist" : k == TY_LHIST ? "lhist" : k == TY_STATS ? "stats" : NULL;
}

/* `@y = @h` of a hist/lhist/stats map */
static void agg_to_map(struct sema *s, const struct ast_node *n)
{
	const struct ast_node *r = n->rhs;
	const char *k = s->final ? whole_agg(r) : NULL;
	if (!k)
		return;
	struct src_loc at = n->lhs->loc;
	at.end_line = r->loc.end_line;
	at.end_col = r->loc.end_col;
	diag_error(s->diags, at,
		   "Map value '%s_t' cannot be assigned from one map to another. The function "
		   "that returns this type must be called directly e.g. `%s = %s();`.",
		   k, n->lhs->str, k);
}

/* assign -> map ('=' | op'=') expr */
static void check_assign_map(struct sema *s, struct ast_node *n)
{
	struct ast_node *map = n->lhs;
	check_map(s, map);
	struct ast_type t;
	if (n->op == '=') {
		sema_expr(s, n->rhs, USE_MAP, map);
		t = n->rhs->type;
		/* `@y = @c`: @y takes @c's kind, as in bpftrace 0.17 */
		if (agg_read(n->rhs))
			t = n->rhs->map->value;
		if (!t.is_bool)
			sema_newer_warn_truth(s, n->rhs, n->loc);
		agg_to_map(s, n);
	} else {
		check_map(s, map);
		sema_expr(s, n->rhs, USE_NONE, NULL);
		n->optype = binop_type(s, n, map, n->rhs, n->op, n->pred_loc);
		t = n->optype;
	}
	assign_map_type(s, map, t, n->op == '=' ? n->rhs : NULL, n->loc);
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
		const char *k = s->final ? whole_agg(n->rhs) : NULL;
		if (k)
			diag_error(s->diags, n->loc,
				   "Map value '%s_t' cannot be assigned to a scratch variable.", k);
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
		} else if (v->type.kind == TY_TUPLE && t.kind == TY_TUPLE) {
			check_tuple_fits(s, &v->type, &t, n->loc);
		} else if (v->type.kind != t.kind ||
			   (t.kind == TY_INT && v->type.is_bool != t.is_bool &&
			    !(v->type.is_bool && is_truth(n->rhs)))) {
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

/* let_stmt -> 'let' var [':' type] ['=' expr]: a variable of this block */
static void check_let(struct sema *s, struct ast_node *n)
{
	struct ast_node *var = n->lhs;
	const struct ast_node *scope = s->nscopes ? s->scopes[s->nscopes - 1] : NULL;
	struct ast_type t = ty_none;
	char a[64], b[64];
	bool typed = false;
	if (n->tyn)
		typed = sema_resolve_type(s, n->tyn, &t);
	if (n->rhs)
		sema_expr(s, n->rhs, USE_VAR, var);
	struct sema_var *v = var->var;
	if (!v) {
		struct sema_var *old = var_find(s, var->str);
		if (old) {
			diag_error(s->diags, n->loc, "Variable %s was already declared", var->str);
			return;
		}
		v = var_add_scoped(s, var->str, t, scope);
		var->var = v;
	}
	if (n->rhs) {
		const struct ast_type *r = &n->rhs->type;
		if (!typed) {
			if (v->type.kind == TY_NONE || (r->kind == TY_STR && r->size > v->type.size))
				v->type = *r;
			if (v->type.kind == TY_INT)
				v->type.size = 8;
		} else if (r->kind != TY_NONE && r->kind != t.kind &&
			   !(t.kind == TY_PTR && r->kind == TY_INT)) {
			diag_error(s->diags, n->loc,
				   "Type mismatch for %s: trying to assign value of type '%s' when variable already has a type '%s'",
				   var->str, sema_tn(r, a), sema_tn(&t, b));
		} else if (r->kind == TY_STR && r->size > t.size) {
			diag_error(s->diags, n->loc,
				   "Type mismatch for %s: trying to assign value of type '%s' when variable already has a type '%s'",
				   var->str, sema_tn(r, a), sema_tn(&t, b));
		}
		if (s->final && r->kind == TY_NONE)
			diag_error(s->diags, n->rhs->loc, "Invalid expression for assignment: none");
	}
	var->type = v->type;
}

/* The loop variable of a for loop, visible in its body only. */
static struct sema_var *loop_var(struct sema *s, struct ast_node *loop, struct ast_type t)
{
	struct ast_node *var = loop->lhs;
	if (!var->var) {
		struct sema_var *old = var_find(s, var->str);
		if (old) {
			diag_error(s->diags, var->loc, "Loop variable %s is already declared", var->str);
			return NULL;
		}
		var->var = var_add_scoped(s, var->str, t, loop->body);
	}
	if (var->var->type.kind == TY_NONE)
		var->var->type = t;
	var->type = var->var->type;
	return var->var;
}

/* for_stmt -> 'for' '(' var ':' map ')' block: $kv = (key, value) */
static void check_for_map(struct sema *s, struct ast_node *n)
{
	struct ast_node *map = n->rhs;
	struct ast_type t = ty_none;
	if (map->nkids) {
		diag_error(s->diags, map->loc, "for loops iterate over a whole map: use %s, not %s[...]",
			   map->str, map->str);
	} else {
		/* not check_map(): a use without keys would fix the map's keys to [] */
		struct map_priv *mp = map_find(s, map->str, false);
		const struct sema_map *m = mp ? &mp->pub : NULL;
		map->map = (struct sema_map *)m;
		map->type = mp && mp->has_value ? m->value : ty_none;
		if (!mp && s->final)
			diag_error(s->diags, map->loc, "Undefined map: %s", map->str);
		if (m && map->type.kind != TY_NONE) {
			if (m->nkeys == 0 && s->final) {
				diag_error(s->diags, map->loc,
					   "%s has no keys: for loops iterate over maps with keys", map->str);
			} else if (m->nkeys) {
				struct ast_type kv[2];
				kv[0] = m->nkeys == 1 ? m->keys[0]
						      : ast_tuple_of(s->prog, m->keys, m->nkeys);
				kv[1] = m->value;
				enum ast_type_kind vk = kv[1].kind;
				if (vk == TY_COUNT || vk == TY_SUM || vk == TY_MIN || vk == TY_MAX ||
				    vk == TY_AVG)
					kv[1] = (struct ast_type){ TY_INT, 8, vk != TY_COUNT, AS_NONE };
				else if (vk == TY_USYM || vk == TY_USTACK)
					kv[1] = ty_uint64;
				if ((vk == TY_HIST || vk == TY_LHIST || vk == TY_STATS) && s->final)
					diag_error(s->diags, map->loc,
						   "for loops over %s maps are not supported: their values are not one number",
						   sema_kind_name(&m->value));
				t = ast_tuple_of(s->prog, kv, 2);
			}
		}
	}
	loop_var(s, n, t);
	s->loop_depth++;
	check_block(s, n->body);
	s->loop_depth--;
}

/* for_stmt -> 'for' '(' var ':' expr '..' expr ')' block */
static void check_for_range(struct sema *s, struct ast_node *n)
{
	for (int i = 0; i < 2; i++) {
		sema_expr(s, n->kids[i], USE_NONE, NULL);
		const struct ast_type *t = &n->kids[i]->type;
		if (s->final && t->kind != TY_INT)
			diag_error(s->diags, n->kids[i]->loc, "Loop range requires an integer, found %s",
				   sema_kind_name(t));
	}
	loop_var(s, n, ty_int64);
	s->loop_depth++;
	check_block(s, n->body);
	s->loop_depth--;
}

/* unroll -> 'unroll' '(' (int | $N) ')' block, 1 <= N <= 100 */
static void check_unroll(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->lhs, USE_NONE, NULL);
	int64_t v = 0;
	if (n->lhs->kind == AST_INT) {
		v = (int64_t)n->lhs->uval;
	} else if (n->lhs->kind == AST_POSPARAM && n->lhs->uval >= 1 &&
		   n->lhs->uval <= (uint64_t)s->prog->nparams) {
		v = strtoll(s->prog->params[n->lhs->uval - 1], NULL, 0);
	}
	if (v > 100)
		diag_error(s->diags, n->loc, "unroll maximum value is 100");
	else if (v < 1)
		diag_error(s->diags, n->loc, "unroll minimum value is 1");
	n->uval = (uint64_t)(v < 1 ? 1 : v > 100 ? 100 : v);
	check_block(s, n->body);
}

static void check_cond(struct sema *s, struct ast_node *n, const char *what)
{
	sema_expr(s, n->cond, USE_NONE, NULL);
	const struct ast_type *t = &n->cond->type;
	if (s->final && t->kind != TY_INT && t->kind != TY_PTR)
		diag_error(s->diags, n->loc, "Invalid condition in %s: %s", what, sema_kind_name(t));
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
		check_cond(s, n, "if()");
		check_block(s, n->body);
		if (n->els && n->els->kind == AST_IF)
			check_stmt(s, n->els);
		else if (n->els)
			check_block(s, n->els);
		break;
	case AST_WHILE:
		check_cond(s, n, "while()");
		s->loop_depth++;
		check_block(s, n->body);
		s->loop_depth--;
		break;
	case AST_UNROLL:
		check_unroll(s, n);
		break;
	case AST_FOR_MAP:
		check_for_map(s, n);
		break;
	case AST_FOR_RANGE:
		check_for_range(s, n);
		break;
	case AST_BREAK:
	case AST_CONTINUE:
		if (!s->loop_depth)
			diag_error(s->diags, n->loc, "%s used outside of a loop",
				   n->kind == AST_BREAK ? "break" : "continue");
		break;
	case AST_RETURN:
		if (n->lhs) {
			sema_expr(s, n->lhs, USE_NONE, NULL);
			diag_error(s->diags, n->lhs->loc, "return in a probe takes no value");
		}
		break;
	case AST_LET:
		check_let(s, n);
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
	if (s->nscopes <= AST_MAX_DEPTH)
		s->scopes[s->nscopes] = blk;
	s->nscopes++;
	for (int i = 0; i < blk->nkids; i++)
		check_stmt(s, blk->kids[i]);
	s->nscopes--;
}

/* Providers that need the kernel parse, and stop here. */
static void check_attach(struct sema *s, struct ast_node *probe)
{
	for (int i = 0; i < probe->nkids; i++) {
		struct ast_node *ap = probe->kids[i];
		if (ap->str && (!strcmp(ap->str, "begin") || !strcmp(ap->str, "end")))
			s->prog->newer = true; /* bpftrace 0.25's names */
		if ((ap->attach.offset || ap->attach.address) && !ap->attach.kernel &&
		    strcmp(ap->attach.provider, "uprobe")) {
			/* attach/resolve/resolve.c places uprobes at offsets and addresses; a return
			 * probe belongs to a whole function */
			diag_error(s->diags, ap->loc, "%s probes at an offset or address are not supported",
				   ap->attach.provider);
			continue;
		}
		if (!ap->attach.kernel)
			continue;
		struct diag *d;
		if (!strcmp(ap->attach.provider, "tracepoint")) /* name it: sched:sched_switch */
			d = diag_error(
			    s->diags, ap->loc,
			    "tracepoint:%s:%s needs the kernel tracer: ubt traces user space only",
			    ap->attach.target, ap->attach.func);
		else
			d = diag_error(
			    s->diags, ap->loc,
			    "%s probes need the kernel tracer: ubt traces user space only",
			    ap->attach.provider);
		diag_hint(d, "run this probe with bpftrace; ubt supports uprobe, uretprobe, usdt, BEGIN, END, interval and profile");
	}
}

/* probe -> attach_points ['/' pred '/'] block */
static void check_probe(struct sema *s, struct ast_node *probe)
{
	s->probe = probe;
	s->nscopes = 0;
	s->loop_depth = 0;
	if (s->pass == 1)
		check_attach(s, probe);
	if (probe->pred) {
		sema_expr(s, probe->pred, USE_NONE, NULL);
		if (s->final && probe->pred->type.kind != TY_INT && probe->pred->type.kind != TY_PTR)
			diag_error(s->diags, probe->pred_loc, "Invalid type for predicate: %s",
				   sema_kind_name(&probe->pred->type));
	}
	if (probe->body)
		check_block(s, probe->body);
}

/* config -> 'config' '=' '{' (name '=' value ';')* '}' */
static void check_config(struct sema *s, struct ast_node *cfg)
{
	static const char *const known[] = {
	    "max_map_keys",
	    "max_strlen",
	    "perf_rb_pages",
	    "log_size",
	    "max_probes",
	    "max_bpf_progs",
	    "cpp_demangle",
	    "lazy_symbols",
	    "stack_mode",
	    "max_type_res_iterations",
	    "on_stack_limit",
	    "missing_probes",
	    "print_maps_on_exit",
	    "str_trunc_trailer",
	    "license",
	    "max_cat_bytes",
	    "max_ast_nodes",
	    "symbol_source",
	    "show_debug_info",
	    "use_blazesym",
	    "unstable_map_decl",
	    "unstable_import",
	    "cache_user_symbols",
	    "probe_inline",
	};
	for (int i = 0; i < cfg->nkids; i++) {
		struct ast_node *a = cfg->kids[i];
		bool ok = false;
		/* `BPFTRACE_MAX_STRLEN`, `MAX_STRLEN`, `max_strlen`: one name (0.24) */
		const char *name = a->lhs->str;
		if (!strncasecmp(name, "bpftrace_", 9))
			name += 9;
		for (size_t k = 0; k < ARRAY_SIZE(known); k++)
			if (!strcasecmp(name, known[k]))
				ok = true;
		if (!ok) {
			diag_error(s->diags, a->lhs->loc, "Unrecognized config variable: %s", a->lhs->str);
			continue;
		}
		struct ast_node *v = a->rhs;
		if (v->kind == AST_INT) {
			v->type = ty_int64;
		} else if (v->kind == AST_STR) {
			v->type = ty_str((int)v->slen + 1);
		} else if (v->kind == AST_IDENT || v->kind == AST_BUILTIN) {
			v->type = ty_none; /* stack_mode = perf, missing_probes = warn */
		} else {
			diag_error(s->diags, v->loc, "Invalid value for config variable %s: a number, string or name",
				   a->lhs->str);
		}
	}
}

int sema_check(struct ast_node *prog, struct diags *diags, struct sema_info *info)
{
	memset(info, 0, sizeof(*info));
	struct sema s = { .diags = diags, .info = info };
	int errors_before = diags->nerrors;
	if (!prog->prog)
		prog->prog = xcalloc(1, sizeof(*prog->prog));
	s.prog = prog->prog;
	info->prog = s.prog;
	if (s.prog->config)
		check_config(&s, s.prog->config);
	for (s.pass = 1; s.pass <= SEMA_PASSES; s.pass++) {
		s.final = s.pass == SEMA_PASSES;
		for (int i = 0; i < prog->nkids; i++)
			check_probe(&s, prog->kids[i]);
		if (diags->nerrors > errors_before)
			return -1;
	}
	sema_map_decls(&s); /* sema_newer.c */
	sema_loops(diags, prog);
	return diags->nerrors > errors_before ? -1 : 0;
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
