/*
 * parse_tree.c - the node builders the grammar's actions call (parser.y):
 * every node gets its height so a tree nested past AST_MAX_DEPTH is
 * reported once and never reaches a recursive walker; lists grow in O(1).
 */
#include <stdlib.h>
#include <string.h>

#include "parser_internal.h"
#include "../util/util.h"

struct ast_node *parse_node(struct parse_state *ps, enum ast_kind kind, struct src_loc loc)
{
	(void)ps;
	struct ast_node *n = ast_new(kind, loc);
	n->depth = 1;
	return n;
}

static int height(const struct ast_node *n)
{
	return n ? n->depth : 0;
}

/* Reports, once, a node past AST_MAX_DEPTH (not an empty placeholder). */
static void check_depth(struct parse_state *ps, const struct ast_node *n)
{
	bool empty = n->loc.line == n->loc.end_line && n->loc.col == n->loc.end_col;
	if (n->depth > AST_MAX_DEPTH && !ps->too_deep && !empty) {
		ps->too_deep = true;
		diag_error(ps->diags, n->loc, "expression nested too deeply");
	}
}

/* Records the height of a finished node; reports, once, a tree that grew
 * past AST_MAX_DEPTH.  The parse then fails and the tree is freed by the
 * iterative ast_free(), so no recursive walker ever sees it. */
struct ast_node *parse_fin(struct parse_state *ps, struct ast_node *n)
{
	int h = 0;
	const struct ast_node *one[] = { n->lhs, n->rhs, n->cond, n->body, n->els, n->pred, n->tyn };
	for (size_t i = 0; i < ARRAY_SIZE(one); i++)
		if (height(one[i]) > h)
			h = height(one[i]);
	for (int i = 0; i < n->nkids; i++)
		if (height(n->kids[i]) > h)
			h = height(n->kids[i]);
	n->depth = h + 1;
	check_depth(ps, n);
	return n;
}

/* Appends to a list node in O(1): only the new kid can raise its height. */
struct ast_node *parse_grow(struct parse_state *ps, struct ast_node *list, struct ast_node *kid)
{
	ast_add_kid(list, kid);
	if (kid->depth + 1 > list->depth) {
		list->depth = kid->depth + 1;
		check_depth(ps, list);
	}
	return list;
}

struct ast_node *parse_binop(struct parse_state *ps, struct ast_node *l, int op,
			     struct ast_node *r, struct src_loc loc)
{
	struct ast_node *n = parse_node(ps, AST_BINOP, loc);
	n->op = op;
	n->lhs = l;
	n->rhs = r;
	return parse_fin(ps, n);
}

struct ast_node *parse_unop(struct parse_state *ps, enum ast_kind kind, int op,
			    struct ast_node *e, struct src_loc loc)
{
	struct ast_node *n = parse_node(ps, kind, loc);
	n->op = op;
	n->lhs = e;
	return parse_fin(ps, n);
}

struct ast_node *parse_named(struct parse_state *ps, enum ast_kind kind, char *name,
			     struct src_loc loc)
{
	struct ast_node *n = parse_node(ps, kind, loc);
	n->str = name;
	return n;
}

struct ast_node *parse_call(struct parse_state *ps, char *name, struct src_loc loc,
			    struct src_loc name_loc)
{
	struct ast_node *n = parse_named(ps, AST_CALL, name, loc);
	n->pred_loc = name_loc;
	return n;
}

struct ast_node *parse_cast(struct parse_state *ps, struct ast_node *t, struct ast_node *e,
			    struct src_loc loc)
{
	struct ast_node *n = parse_node(ps, AST_CAST, loc);
	n->tyn = t;
	n->lhs = e;
	return parse_fin(ps, n);
}

struct ast_node *parse_take_kids(struct ast_node *dst, struct ast_node *list)
{
	for (int i = 0; i < list->nkids; i++)
		ast_add_kid(dst, list->kids[i]);
	list->nkids = 0;
	ast_free(list);
	return dst;
}

char *parse_cat(char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	a = xrealloc(a, la + lb + 1);
	memcpy(a + la, b, lb + 1);
	return a;
}

char *parse_cat_quoted(char *a, const char *s, size_t n)
{
	struct buf b = {0};
	buf_append(&b, a, strlen(a));
	buf_append(&b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			buf_append(&b, "\\", 1);
		if (s[i])
			buf_append(&b, &s[i], 1);
	}
	buf_append(&b, "\"", 1);
	free(a);
	return b.data;
}

struct src_loc parse_span(struct src_loc a, struct src_loc b)
{
	a.end_line = b.end_line;
	a.end_col = b.end_col;
	return a;
}
