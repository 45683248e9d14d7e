/*
 * macro.c - bpftrace 0.24's macros, expanded where they are used.
 *
 *   macro add_one(x) { x + 1 }
 *   macro bump($a, @b) { $a += 1; @b += 1; }
 *   begin { $v = add_one(1); bump($v, @m); print(add_one); }
 *
 * A macro is text replacement that knows the tree: each use becomes a copy
 * of the body in which a parameter is replaced by what the use passed:
 *   - `x` (an identifier) stands for the argument expression, copied at
 *     each place the body names x (evaluated there, as often as named);
 *   - `$a` must be given a scratch variable, which the body reads and
 *     changes under the caller's name;
 *   - `@b` must be given a map (by name, without keys).
 * Variables the body makes for itself are its own: they are renamed per
 * expansion (`$t` becomes `$t__add_one_1`), so a use cannot see or clobber
 * the caller's `$t` (bpftrace's hygiene).
 *
 * Where the use stands:
 *   - as a statement (`bump($v, @m);`), the body's statements go there, in
 *     a block of their own;
 *   - as a value (`$v = add_one(1)`, `print(add_one)`), the body's last
 *     statement must be an expression without ';' (its value): a body of
 *     one expression is that expression, a longer one a block used as a
 *     value (sema's check_block_value).
 * assert(cond, msg), a macro of bpftrace's standard library, is built in
 * (std_assert) unless the script defines its own.
 * Macros may use other macros; a macro that uses itself, directly or not,
 * is refused once the nesting passes MACRO_DEPTH.  The definitions are
 * removed from the program: sema never sees them.  Map declarations
 * (`let @m = lruhash(N);`) move to the program's mapdecls on the way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "ast.h"
#include "parser_internal.h"

#define MACRO_DEPTH 32
#define MACRO_EXPANSIONS 4096
#define MACRO_NODES 1000000

struct mx {
	struct diags *diags;
	struct ast_node **defs;
	int ndefs;
	unsigned serial; /* per expansion: the suffix of its own variables */
	size_t copied;	 /* nodes copied into expansions so far (MACRO_NODES) */
	int depth;
	bool failed;
};

static struct ast_node *find_def(const struct mx *m, const char *name)
{
	for (int i = 0; i < m->ndefs; i++)
		if (!strcmp(m->defs[i]->str, name))
			return m->defs[i];
	return NULL;
}

/* Is `name` one of the definition's parameters of the given kind? */
static int param_index(const struct ast_node *def, enum ast_kind kind, const char *name)
{
	for (int i = 0; i < def->nkids; i++)
		if (def->kids[i]->kind == kind && !strcmp(def->kids[i]->str, name))
			return i;
	return -1;
}

static void expand_node(struct mx *m, struct ast_node **np);

/* The nodes of a tree (stops counting past MACRO_NODES). */
static size_t tree_size(const struct ast_node *n, size_t acc)
{
	if (!n || acc > MACRO_NODES)
		return 0;
	size_t k = 1;
	const struct ast_node *one[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred, n->tyn};
	for (size_t i = 0; i < ARRAY_SIZE(one); i++)
		k += tree_size(one[i], acc + k);
	for (int i = 0; i < n->nkids; i++)
		k += tree_size(n->kids[i], acc + k);
	return k;
}

/*
 * In a copy of def's body: the parameters replaced by args, the body's own
 * variables renamed.  *np is replaced where an identifier parameter stands.
 */
static void substitute(struct mx *m, const struct ast_node *def, struct ast_node **args,
		       struct ast_node **np, unsigned serial)
{
	struct ast_node *n = *np;
	if (!n)
		return;
	if (n->kind == AST_IDENT) {
		int i = param_index(def, AST_IDENT, n->str);
		if (i >= 0) {
			m->copied += tree_size(args[i], 0);
			*np = m->copied > MACRO_NODES ? NULL : ast_clone(args[i]);
			ast_free(n);
			return;
		}
	} else if (n->kind == AST_VAR) {
		int i = param_index(def, AST_VAR, n->str);
		char *to = i >= 0 ? xstrdup(args[i]->str)
				  : xasprintf("%s__%s_%u", n->str, def->str, serial);
		free(n->str);
		n->str = to;
	} else if (n->kind == AST_MAP) {
		int i = param_index(def, AST_MAP, n->str);
		if (i >= 0) {
			free(n->str);
			n->str = xstrdup(args[i]->str);
		} else if (!m->failed) { /* bpftrace 0.26's hygiene and text */
			diag_error(
			    m->diags, n->loc,
			    "Unhygienic access to map: %s. Maps must be passed into the macro as "
			    "arguments",
			    n->str);
			m->failed = true;
		}
	}
	struct ast_node **one[] = {&n->lhs, &n->rhs,  &n->cond, &n->body,
				   &n->els, &n->pred, &n->tyn};
	for (size_t i = 0; i < ARRAY_SIZE(one); i++)
		substitute(m, def, args, one[i], serial);
	for (int i = 0; i < n->nkids; i++)
		substitute(m, def, args, &n->kids[i], serial);
}

/* The arguments of a use checked against the parameters' kinds. */
static bool args_fit(struct mx *m, const struct ast_node *def, const struct ast_node *use,
		     struct ast_node **args, int nargs)
{
	if (nargs != def->nkids) {
		diag_error(m->diags, use->loc, "macro %s() takes %d argument%s (%d provided)",
			   def->str, def->nkids, def->nkids == 1 ? "" : "s", nargs);
		return false;
	}
	for (int i = 0; i < nargs; i++) {
		const struct ast_node *p = def->kids[i], *a = args[i];
		if (p->kind == AST_VAR && a->kind != AST_VAR) {
			diag_error(m->diags, a->loc, "macro %s() expects a scratch variable for %s",
				   def->str, p->str);
			return false;
		}
		if (p->kind == AST_MAP && (a->kind != AST_MAP || a->nkids)) {
			diag_error(m->diags, a->loc, "macro %s() expects a map without keys for %s",
				   def->str, p->str);
			return false;
		}
	}
	return true;
}

/* The expansion of one use: a block (statement) or an expression (value). */
static struct ast_node *expansion(struct mx *m, const struct ast_node *def,
				  const struct ast_node *use, struct ast_node **args, int nargs,
				  bool as_value)
{
	if (!args_fit(m, def, use, args, nargs))
		return NULL;
	if (++m->depth > MACRO_DEPTH) {
		diag_error(m->diags, use->loc,
			   "macro %s() expands into itself (more than %d macros deep)", def->str,
			   MACRO_DEPTH);
		m->depth--;
		return NULL;
	}
	unsigned serial = ++m->serial;
	if (serial > MACRO_EXPANSIONS) {
		diag_error(
		    m->diags, use->loc,
		    "macro %s(): more than %d macro expansions in the script (an argument used "
		    "twice in nested macros doubles the code at each level)",
		    def->str, MACRO_EXPANSIONS);
		m->depth--;
		return NULL;
	}
	struct ast_node *body = ast_clone(def->body);
	substitute(m, def, args, &body, serial);
	if (m->copied > MACRO_NODES) {
		diag_error(
		    m->diags, use->loc,
		    "macro %s(): its expansions would copy more than %d nodes of arguments "
		    "(an argument used twice in nested macros doubles the code at each level)",
		    def->str, MACRO_NODES);
		ast_free(body);
		m->depth--;
		return NULL;
	}
	struct ast_node *res = body;
	if (as_value) {
		struct ast_node *last = body->nkids ? body->kids[body->nkids - 1] : NULL;
		if (!last || last->kind != AST_EXPR_STMT || last->op != 'v') {
			diag_error(
			    m->diags, use->loc,
			    "macro %s() is used as a value, but its body does not end with an "
			    "expression (without ';')",
			    def->str);
			ast_free(body);
			m->depth--;
			return NULL;
		}
		if (body->nkids == 1) { /* one expression: itself */
			res = last->lhs;
			last->lhs = NULL;
			ast_free(body);
		} /* else the block, as a value (sema's check_block_value) */
	}
	expand_node(m, &res);
	m->depth--;
	return res;
}

/* A use: a call of a macro's name, or a bare identifier naming one without parameters. */
static const struct ast_node *use_of(const struct mx *m, const struct ast_node *n)
{
	if (!n)
		return NULL;
	if (n->kind == AST_CALL) {
		/* a user macro of a builtin's name is used with its own number of
		 * arguments: `macro cpu(x)` leaves `cpu()` the builtin (bpftrace 0.25) */
		const struct ast_node *d = find_def(m, n->str);
		return d && (n->op != AST_CALL_KNOWN || d->nkids == n->nkids) ? d : NULL;
	}
	if (n->kind == AST_IDENT) {
		const struct ast_node *d = find_def(m, n->str);
		return d && !d->nkids ? d : NULL;
	}
	return NULL;
}

static struct ast_node *node(enum ast_kind kind, struct src_loc loc, const char *str)
{
	struct ast_node *n = ast_new(kind, loc);
	if (str) {
		n->str = xstrdup(str);
		n->slen = strlen(str);
	}
	return n;
}

static struct ast_node *stmt(struct ast_node *e)
{
	struct ast_node *st = ast_new(AST_EXPR_STMT, e->loc);
	st->lhs = e;
	return st;
}

/*
 * bpftrace 0.24's standard macro assert(cond, msg), unless the script
 * defines its own: `if (!cond) { errorf("assert failed: %s", msg); exit(1); }`.
 */
static struct ast_node *std_assert(struct mx *m, const struct ast_node *use)
{
	if (use->nkids != 2) {
		diag_error(m->diags, use->loc, "assert() takes 2 arguments (%d provided)",
			   use->nkids);
		return NULL;
	}
	struct ast_node *not = node(AST_UNOP, use->loc, NULL);
	not->op = '!';
	not->lhs = ast_clone(use->kids[0]);
	struct ast_node *err = node(AST_CALL, use->loc, "errorf");
	ast_add_kid(err, node(AST_STR, use->loc, "assert failed: %s"));
	ast_add_kid(err, ast_clone(use->kids[1]));
	struct ast_node *ex = node(AST_CALL, use->loc, "exit");
	struct ast_node *one = node(AST_INT, use->loc, NULL);
	one->uval = 1;
	ast_add_kid(ex, one);
	struct ast_node *body = node(AST_BLOCK, use->loc, NULL);
	ast_add_kid(body, stmt(err));
	ast_add_kid(body, stmt(ex));
	struct ast_node *iff = node(AST_IF, use->loc, NULL);
	iff->cond = not;
	iff->body = body;
	expand_node(m, &iff->cond);
	expand_node(m, &iff->body);
	return iff;
}

static void expand_node(struct mx *m, struct ast_node **np)
{
	struct ast_node *n = *np;
	if (!n || m->failed)
		return;
	if (n->kind == AST_EXPR_STMT && n->lhs && n->lhs->kind == AST_CALL &&
	    !strcmp(n->lhs->str, "assert") && !find_def(m, "assert")) {
		struct ast_node *iff = std_assert(m, n->lhs);
		if (!iff) {
			m->failed = true;
			return;
		}
		*np = iff;
		ast_free(n);
		return;
	}
	/* a statement that is a use: the body's statements in its place */
	if (n->kind == AST_EXPR_STMT && use_of(m, n->lhs)) {
		const struct ast_node *def = use_of(m, n->lhs);
		for (int i = 0; i < n->lhs->nkids; i++)
			expand_node(m, &n->lhs->kids[i]);
		if (m->failed)
			return;
		struct ast_node *blk =
		    expansion(m, def, n->lhs, n->lhs->kids, n->lhs->nkids, false);
		if (!blk) {
			m->failed = true;
			return;
		}
		blk->loc = n->loc;
		*np = blk;
		ast_free(n);
		return;
	}
	const struct ast_node *def = use_of(m, n);
	if (def) {
		/* the arguments first, where the use stands: a macro in an
		 * argument is not nested in this one */
		for (int i = 0; i < n->nkids; i++)
			expand_node(m, &n->kids[i]);
		if (m->failed)
			return;
		struct ast_node *e = expansion(m, def, n, n->kids, n->nkids, true);
		if (!e) {
			m->failed = true;
			return;
		}
		*np = e;
		ast_free(n);
		return;
	}
	struct ast_node **one[] = {&n->lhs, &n->rhs,  &n->cond, &n->body,
				   &n->els, &n->pred, &n->tyn};
	for (size_t i = 0; i < ARRAY_SIZE(one); i++)
		expand_node(m, one[i]);
	for (int i = 0; i < n->nkids; i++)
		expand_node(m, &n->kids[i]);
}

int parse_macros(struct ast_node *prog, struct diags *diags)
{
	struct mx m = {.diags = diags};
	int keep = 0;
	for (int i = 0; i < prog->nkids; i++) {
		struct ast_node *k = prog->kids[i];
		if (k->kind == AST_LET && prog->prog) { /* a map declaration: sema's */
			struct ast_program *pg = prog->prog;
			pg->mapdecls = xrealloc(pg->mapdecls, (size_t)(pg->nmapdecls + 1) *
								  sizeof(*pg->mapdecls));
			pg->mapdecls[pg->nmapdecls++] = k;
			continue;
		}
		if (k->kind != AST_MACRO) {
			prog->kids[keep++] = k;
			continue;
		}
		if (find_def(&m, k->str)) {
			diag_error(diags, k->loc, "macro %s() is defined twice", k->str);
			m.failed = true;
		}
		for (int a = 0; a < k->nkids; a++)
			for (int b = 0; b < a; b++)
				if (!strcmp(k->kids[a]->str, k->kids[b]->str)) {
					diag_error(diags, k->kids[a]->loc,
						   "Variable or map %s has already been used in "
						   "macro %s()",
						   k->kids[a]->str, k->str);
					m.failed = true;
				}
		m.defs = xrealloc(m.defs, (size_t)(m.ndefs + 1) * sizeof(*m.defs));
		m.defs[m.ndefs++] = k;
	}
	prog->nkids = keep;
	if (prog->prog && (m.ndefs || prog->prog->nmapdecls))
		prog->prog->newer = true;
	if ((m.ndefs || (prog->prog && prog->prog->nmapdecls)) && !keep && !m.failed) {
		diag_error(diags, m.ndefs ? m.defs[0]->loc : prog->prog->mapdecls[0]->loc,
			   "a script needs a probe, not only macros and map declarations");
		m.failed = true;
	}
	for (int i = 0; i < prog->nkids && !m.failed; i++) {
		expand_node(&m, &prog->kids[i]->pred);
		expand_node(&m, &prog->kids[i]->body);
	}
	for (int i = 0; i < m.ndefs; i++)
		ast_free(m.defs[i]);
	free(m.defs);
	return m.failed ? -1 : 0;
}
