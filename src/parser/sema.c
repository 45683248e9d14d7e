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

#include "sema.h"
#include "../util/util.h"

enum { SEMA_PASSES = 3 };

struct sema {
	struct diags *diags;
	struct sema_info *info;
	int pass;
	bool final;
	struct ast_node *probe;   /* probe being checked */
	const char *func;         /* call whose arguments are being checked */
	int func_arg;             /* index of that argument */
};

/* What an AST_CALL is the value of: bpftrace's call.map / .var / .key_for_map. */
enum call_use {
	USE_NONE,
	USE_MAP,  /* @m = f() */
	USE_VAR,  /* $v = f() */
	USE_KEY,  /* @m[f()] */
};

static void check_expr(struct sema *s, struct ast_node *n, enum call_use use,
		       const struct ast_node *user);

/* ---- types -------------------------------------------------------------- */

static const struct ast_type ty_none = { TY_NONE, 0, false, AS_NONE };
static const struct ast_type ty_int64 = { TY_INT, 8, true, AS_NONE };
static const struct ast_type ty_uint64 = { TY_INT, 8, false, AS_NONE };

static struct ast_type ty_str(int size)
{
	return (struct ast_type){ TY_STR, size, false, AS_NONE };
}

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
	case TY_NONE:
	case TY_VOID:
	default:
		return "none";
	}
}

/* bpftrace's name for the kind alone: "integer", "string", ... */
static const char *kind_name(const struct ast_type *t)
{
	switch (t->kind) {
	case TY_INT: return "integer";
	case TY_STR: return "string";
	case TY_COUNT: return "count";
	case TY_SUM: return "sum";
	default: return "none";
	}
}

static const char *tn(const struct ast_type *t, char buf[64])
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
		buf_printf(b, "%s%s", i ? ", " : "", tn(&keys[i], t));
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
		check_expr(s, k, USE_KEY, n);
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
				   map->str, tn(&t, a), tn(mt, b));
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

/* ---- builtins ----------------------------------------------------------- */

static bool probe_all(const struct ast_node *probe, const char *provider)
{
	for (int i = 0; i < probe->nkids; i++) {
		const char *p = probe->kids[i]->attach.provider;
		if (!p || strcmp(p, provider))
			return false;
	}
	return true;
}

/* builtin -> pid | tid | arg0 .. arg5 (others are known but refused) */
static void check_builtin(struct sema *s, struct ast_node *n)
{
	const char *name = n->str;
	n->type = ty_none;
	if (!strcmp(name, "pid") || !strcmp(name, "tid")) {
		n->type = ty_uint64;
		return;
	}
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '9' && !name[4]) {
		int num = name[3] - '0';
		n->builtin_arg = num;
		if (!probe_all(s->probe, "uprobe"))
			diag_error(s->diags, n->loc,
				   "The %s builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes",
				   name);
		if (num > 5)
			diag_error(s->diags, n->loc, "x86_64 doesn't support %s", name);
		n->type = ty_uint64;
		const char *first = s->probe->nkids ? s->probe->kids[0]->attach.provider : NULL;
		if (first && !strcmp(first, "uprobe"))
			n->type.as = AS_USER;
		return;
	}
	diag_error(s->diags, n->loc, "the %s builtin is not supported yet", name);
}

/* ---- calls -------------------------------------------------------------- */

/* bpftrace's function names; only some are implemented in ubt so far. */
static const char *const known_funcs[] = {
	"avg", "buf", "cat", "cgroupid", "clear", "count", "delete", "exit", "hist", "join",
	"kaddr", "kptr", "ksym", "lhist", "macaddr", "max", "min", "ntop", "override", "print",
	"printf", "cgroup_path", "reg", "signal", "sizeof", "stats", "str", "strerror",
	"strftime", "strncmp", "strcontains", "sum", "system", "time", "uaddr", "uptr", "usym",
	"zero", "path", "unwatch", "bswap", "skboutput", "pton", "debugf", "kstack", "ustack",
};

static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 32 || lb > 32)
		return 99;
	int d[33][33];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* The range of a call's name: "cuont" in "cuont(1)". */
static struct src_loc name_loc(const struct ast_node *n)
{
	return n->pred_loc.line ? n->pred_loc : n->loc;
}

static bool check_use(struct sema *s, struct ast_node *n, enum call_use use,
		      const struct ast_node *user, bool want_map)
{
	if (want_map && use != USE_MAP) {
		diag_error(s->diags, n->loc, "%s() should be directly assigned to a map", n->str);
		return false;
	}
	if (!want_map && use != USE_NONE) {
		diag_error(s->diags, n->loc,
			   "%s() should not be used in an assignment or as a map key", n->str);
		return false;
	}
	return true;
}

static bool check_nargs(struct sema *s, struct ast_node *n, int want)
{
	if (n->nkids == want)
		return true;
	if (want == 0)
		diag_error(s->diags, n->loc, "%s() requires no arguments (%d provided)", n->str,
			   n->nkids);
	else if (want == 1)
		diag_error(s->diags, n->loc, "%s() requires one argument (%d provided)", n->str,
			   n->nkids);
	else
		diag_error(s->diags, n->loc, "%s() requires %d arguments (%d provided)", n->str,
			   want, n->nkids);
	return false;
}

/*
 * printf conversions: %[-][width][.prec] then a length (hh h l ll j z t)
 * and one of d u o x X p, or c, s, r, rx, rh.  Returns the conversion's
 * length, 0 if this '%' starts none (it is then plain text, as in
 * bpftrace); *token gets the part after the width ("ld").
 */
static size_t fmt_spec(const char *p, const char **token, size_t *token_len, enum ast_type_kind *want,
		       bool *is_buffer)
{
	const char *q = p + 1;
	if (*q == '-')
		q++;
	while (*q >= '0' && *q <= '9')
		q++;
	if (*q == '.' && q[1] >= '0' && q[1] <= '9') {
		q++;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	*token = q;
	*is_buffer = false;
	if (*q == 's' || *q == 'c') {
		*want = *q == 's' ? TY_STR : TY_INT;
		*token_len = 1;
		return (size_t)(q + 1 - p);
	}
	if (*q == 'r') {
		*want = TY_NONE;
		*is_buffer = true;
		*token_len = (q[1] == 'x' || q[1] == 'h') ? 2 : 1;
		return (size_t)(q + *token_len - p);
	}
	const char *lens[] = { "hh", "ll", "h", "l", "j", "z", "t", "" };
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t ll = strlen(lens[i]);
		if (strncmp(q, lens[i], ll) || !q[ll] || !strchr("duoxXp", q[ll]))
			continue;
		*want = TY_INT;
		*token_len = ll + 1;
		return (size_t)(q + ll + 1 - p);
	}
	return 0;
}

static void check_printf_format(struct sema *s, struct ast_node *n)
{
	const struct ast_node *fmt = n->kids[0];
	int nargs = n->nkids - 1, nspec = 0;
	const char *f = fmt->str, *end = fmt->str + fmt->slen;
	/* count first: bpftrace reports the count before any type */
	for (const char *p = f; p < end; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') { /* "%%" is a literal percent sign in ubt */
			p++;
			continue;
		}
		const char *tok;
		size_t tl;
		enum ast_type_kind want;
		bool isbuf;
		size_t l = fmt_spec(p, &tok, &tl, &want, &isbuf);
		if (l) {
			nspec++;
			p += l - 1;
		}
	}
	if (nargs < nspec) {
		diag_error(s->diags, n->loc,
			   "printf: Not enough arguments for format string (%d supplied, %d expected)",
			   nargs, nspec);
		return;
	}
	if (nargs > nspec) {
		diag_error(s->diags, n->loc,
			   "printf: Too many arguments for format string (%d supplied, %d expected)",
			   nargs, nspec);
		return;
	}
	int i = 1;
	for (const char *p = f; p < end; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			p++;
			continue;
		}
		const char *tok;
		size_t tl;
		enum ast_type_kind want;
		bool isbuf;
		size_t l = fmt_spec(p, &tok, &tl, &want, &isbuf);
		if (!l)
			continue;
		const struct ast_type *at = &n->kids[i++]->type;
		if (isbuf) {
			diag_error(s->diags, n->loc, "printf: %%%.*s is not supported yet", (int)tl, tok);
			return;
		}
		if (at->kind != want) {
			diag_error(s->diags, n->loc,
				   "printf: %%%.*s specifier expects a value of type %s (%s supplied)",
				   (int)tl, tok, want == TY_STR ? "string" : "integer", kind_name(at));
			return;
		}
		p += l - 1;
	}
	if (nargs > (int)ARRAY_SIZE(((struct sema_printf *)0)->args)) {
		diag_error(s->diags, n->loc, "printf: more than %zu arguments are not supported yet",
			   ARRAY_SIZE(((struct sema_printf *)0)->args));
		return;
	}
	struct sema_printf *pf = xcalloc(1, sizeof(*pf));
	pf->id = s->info->nprintfs;
	pf->fmt = xstrndup(fmt->str, fmt->slen);
	pf->nargs = nargs;
	for (int k = 0; k < nargs; k++)
		pf->args[k] = n->kids[k + 1]->type;
	pf->call = n;
	s->info->printfs = xrealloc(s->info->printfs,
				    (s->info->nprintfs + 1) * sizeof(*s->info->printfs));
	s->info->printfs[s->info->nprintfs++] = pf;
}

/* call -> name '(' args ')': count(), sum(x), printf(fmt, ...), exit() */
static void check_call(struct sema *s, struct ast_node *n, enum call_use use,
		       const struct ast_node *user)
{
	const char *saved_func = s->func;
	int saved_arg = s->func_arg;
	s->func = n->str;
	for (int i = 0; i < n->nkids; i++) {
		s->func_arg = i;
		check_expr(s, n->kids[i], USE_NONE, NULL);
	}
	s->func = saved_func;
	s->func_arg = saved_arg;
	n->type = ty_none;

	if (!strcmp(n->str, "count")) {
		check_use(s, n, use, user, true);
		check_nargs(s, n, 0);
		n->type = (struct ast_type){ TY_COUNT, 8, true, AS_NONE };
	} else if (!strcmp(n->str, "sum")) {
		bool sign = false;
		check_use(s, n, use, user, true);
		if (check_nargs(s, n, 1)) {
			const struct ast_type *at = &n->kids[0]->type;
			if (s->final && at->kind != TY_INT)
				diag_error(s->diags, n->loc,
					   "sum() only supports integer arguments (%s provided)",
					   kind_name(at));
			sign = at->is_signed;
		}
		n->type = (struct ast_type){ TY_SUM, 8, sign, AS_NONE };
	} else if (!strcmp(n->str, "printf")) {
		check_use(s, n, use, user, false);
		n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
		if (n->nkids < 1) {
			diag_error(s->diags, n->loc, "printf() requires at least one argument (0 provided)");
		} else if (n->nkids > 129) {
			diag_error(s->diags, n->loc, "printf() takes up to 128 arguments (%d provided)",
				   n->nkids);
		} else if (n->kids[0]->kind != AST_STR) {
			diag_error(s->diags, n->loc, "printf() expects a string literal (%s provided)",
				   kind_name(&n->kids[0]->type));
		} else if (s->final) {
			check_printf_format(s, n);
		}
	} else if (!strcmp(n->str, "exit")) {
		check_use(s, n, use, user, false);
		check_nargs(s, n, 0);
		n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
	} else {
		bool known = false;
		const char *close = NULL;
		for (size_t i = 0; i < ARRAY_SIZE(known_funcs); i++) {
			if (!strcmp(n->str, known_funcs[i]))
				known = true;
			else if (!close && edit_distance(n->str, known_funcs[i]) <= 2)
				close = known_funcs[i];
		}
		if (known) {
			diag_error(s->diags, n->loc, "%s() is not supported yet", n->str);
		} else {
			struct diag *d = diag_error(s->diags, name_loc(n), "Unknown function: %s", n->str);
			if (close)
				diag_hint(d, "did you mean '%s'?", close);
		}
	}
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
		     what, tn(&l->type, a), tn(&r->type, b));
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
			   "Type mismatch for '%s': comparing '%s' with '%s'", ast_op_text(op), tn(lt, a),
			   tn(rt, b));
	} else if (op != OP_EQ && op != OP_NE) {
		diag_error(s->diags, oploc,
			   "The %s operator can not be used on expressions of types %s, %s",
			   ast_op_text(op), tn(lt, a), tn(rt, b));
	}
	return t;
}

/* unary -> ('-' | '!' | '~') expr */
static void check_unop(struct sema *s, struct ast_node *n)
{
	check_expr(s, n->lhs, USE_NONE, NULL);
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
			   ast_op_text(n->op), tn(t, a));
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
	check_expr(s, t, USE_NONE, NULL);
	char a[64];
	if (s->final && t->type.kind != TY_INT)
		diag_error(s->diags, n->loc,
			   "The %s operator can not be used on expressions of type '%s'",
			   ast_op_text(n->op), tn(&t->type, a));
	n->type = (struct ast_type){ TY_INT, 8, t->type.is_signed, AS_NONE };
}

/* ternary -> expr '?' expr ':' expr */
static void check_ternary(struct sema *s, struct ast_node *n)
{
	check_expr(s, n->cond, USE_NONE, NULL);
	check_expr(s, n->lhs, USE_NONE, NULL);
	check_expr(s, n->rhs, USE_NONE, NULL);
	const struct ast_type *c = &n->cond->type, *l = &n->lhs->type, *r = &n->rhs->type;
	if (s->final) {
		if (l->kind != r->kind && !(l->kind == TY_VOID && r->kind == TY_NONE) &&
		    !(l->kind == TY_NONE && r->kind == TY_VOID))
			diag_error(s->diags, n->loc,
				   "Ternary operator must return the same type: have '%s' and '%s'",
				   kind_name(l), kind_name(r));
		if (c->kind != TY_INT)
			diag_error(s->diags, n->loc, "Invalid condition in ternary: %s", kind_name(c));
	}
	if (l->kind == TY_STR)
		n->type = ty_str(64);
	else if (l->kind == TY_INT)
		n->type = (struct ast_type){ TY_INT, 8, l->is_signed, AS_NONE };
	else if (l->kind == TY_NONE || l->kind == TY_VOID)
		n->type = ty_none;
	else {
		diag_error(s->diags, n->loc, "Ternary return type unsupported %s", kind_name(l));
		n->type = ty_none;
	}
}

static void check_expr(struct sema *s, struct ast_node *n, enum call_use use,
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
		check_builtin(s, n);
		break;
	case AST_TUPLE:
		for (int i = 0; i < n->nkids; i++)
			check_expr(s, n->kids[i], USE_NONE, NULL);
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
		check_call(s, n, use, user);
		break;
	case AST_BINOP:
		check_expr(s, n->lhs, USE_NONE, NULL);
		check_expr(s, n->rhs, USE_NONE, NULL);
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
		check_expr(s, n->rhs, USE_MAP, map);
		t = n->rhs->type;
	} else {
		check_map(s, map);
		check_expr(s, n->rhs, USE_NONE, NULL);
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
		check_expr(s, n->rhs, USE_VAR, var);
		t = n->rhs->type;
	} else {
		check_expr(s, var, USE_NONE, NULL);
		check_expr(s, n->rhs, USE_NONE, NULL);
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
				   var->str, tn(&t, a), tn(&v->type, b));
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
		check_expr(s, n->lhs, USE_NONE, NULL);
		break;
	case AST_ASSIGN:
		if (n->lhs->kind == AST_MAP)
			check_assign_map(s, n);
		else
			check_assign_var(s, n);
		break;
	case AST_IF:
		check_expr(s, n->cond, USE_NONE, NULL);
		if (s->final && n->cond->type.kind != TY_INT)
			diag_error(s->diags, n->loc, "Invalid condition in if(): %s",
				   kind_name(&n->cond->type));
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
		check_expr(s, n, USE_NONE, NULL);
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
		check_expr(s, probe->pred, USE_NONE, NULL);
		if (s->final && probe->pred->type.kind != TY_INT)
			diag_error(s->diags, probe->pred_loc, "Invalid type for predicate: %s",
				   kind_name(&probe->pred->type));
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
