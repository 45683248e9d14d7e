/*
 * ast.c - building, freeing and dumping the syntax tree (ast.h).
 *
 * Pipeline position: parser.y builds nodes with ast_new()/ast_add_kid();
 * `ubt -d ast` and `-d types` print the tree with ast_dump() in bpftrace
 * 0.17's own `-d` format, so the two tools can be diffed line by line:
 *
 *   Program
 *    uprobe:./t:f
 *     pred
 *      == :: type[unsigned int64, ctx: 0]
 *       builtin: pid :: type[unsigned int64, ctx: 0]
 *       int: 1 :: type[int64, ctx: 0]
 *     =
 *      map: @c :: type[count, ctx: 0]
 *      call: count :: type[count, ctx: 0]
 *
 * ast_free() is iterative, because it also frees trees the parser refused
 * for being too deep; ast_dump() recurses, and only ever sees trees the
 * parser accepted (at most AST_MAX_DEPTH high).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "sema.h"
#include "../util/util.h"

struct ast_node *ast_new(enum ast_kind kind, struct src_loc loc)
{
	struct ast_node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->loc = loc;
	n->builtin_arg = -1;
	return n;
}

void ast_add_kid(struct ast_node *parent, struct ast_node *kid)
{
	/* grow by doubling: capacity is the next power of two >= nkids */
	int n = parent->nkids;
	if ((n & (n - 1)) == 0)
		parent->kids = xrealloc(parent->kids, (size_t)(n ? n * 2 : 1) * sizeof(*parent->kids));
	parent->kids[parent->nkids++] = kid;
}

void ast_free(struct ast_node *root)
{
	struct vec todo = { 0 };
	if (root)
		vec_push(&todo, root);
	while (todo.len) {
		struct ast_node *n = todo.items[--todo.len];
		struct ast_node *one[] = { n->lhs, n->rhs, n->cond, n->body, n->els, n->pred };
		for (size_t i = 0; i < ARRAY_SIZE(one); i++)
			if (one[i])
				vec_push(&todo, one[i]);
		for (int i = 0; i < n->nkids; i++)
			if (n->kids[i])
				vec_push(&todo, n->kids[i]);
		free(n->kids);
		free(n->str);
		free(n->attach.provider);
		free(n->attach.target);
		free(n->attach.func);
		free(n);
	}
	vec_free(&todo);
}

/* ---- dump --------------------------------------------------------------- */

const char *ast_op_text(int op)
{
	static char one[2];
	switch (op) {
	case OP_EQ: return "==";
	case OP_NE: return "!=";
	case OP_LE: return "<=";
	case OP_GE: return ">=";
	case OP_LAND: return "&&";
	case OP_LOR: return "||";
	case OP_SHL: return "<<";
	case OP_SHR: return ">>";
	case OP_INC: return "++";
	case OP_DEC: return "--";
	default:
		one[0] = (char)op;
		one[1] = '\0';
		return one;
	}
}

struct dumper {
	FILE *out;
	bool types;
};

static void indent(struct dumper *d, int depth)
{
	for (int i = 0; i < depth; i++)
		fputc(' ', d->out);
}

/* " :: type[int64, ctx: 0]" after a typed node, nothing otherwise. */
static void type_suffix(struct dumper *d, const struct ast_type *t)
{
	if (!d->types) {
		fputc('\n', d->out);
		return;
	}
	char buf[64];
	fprintf(d->out, " :: type[%s, ctx: 0", sema_type_name(t, buf, sizeof(buf)));
	if (t->as == AS_KERNEL)
		fputs(", AS(kernel)", d->out);
	else if (t->as == AS_USER)
		fputs(", AS(user)", d->out);
	fputs("]\n", d->out);
}

/* bpftrace prints string literals with C escapes for what is not printable. */
static void dump_string(struct dumper *d, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\')
			fputs("\\\\", d->out);
		else if (c == '"')
			fputs("\\\"", d->out);
		else if (c == '\n')
			fputs("\\n", d->out);
		else if (c == '\t')
			fputs("\\t", d->out);
		else if (c == '\r')
			fputs("\\r", d->out);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, d->out);
		else
			fprintf(d->out, "\\x%02x", c);
	}
}

static void dump_expr(struct dumper *d, const struct ast_node *n, int depth);
static void dump_stmt(struct dumper *d, const struct ast_node *n, int depth);

static void dump_kids(struct dumper *d, const struct ast_node *n, int depth)
{
	for (int i = 0; i < n->nkids; i++)
		dump_expr(d, n->kids[i], depth);
}

static void dump_expr(struct dumper *d, const struct ast_node *n, int depth)
{
	if (n->kind == AST_INCDEC && !n->uval) {
		/* postfix: bpftrace prints the operand, then the operator below it */
		dump_expr(d, n->lhs, depth);
		indent(d, depth + 1);
		fprintf(d->out, "%s\n", ast_op_text(n->op));
		return;
	}
	indent(d, depth);
	switch (n->kind) {
	case AST_INT:
		fprintf(d->out, "int: %" PRId64, (int64_t)n->uval);
		type_suffix(d, &n->type);
		break;
	case AST_STR:
		fputs("string: ", d->out);
		dump_string(d, n->str, n->slen);
		type_suffix(d, &n->type);
		break;
	case AST_BUILTIN:
		fprintf(d->out, "builtin: %s", n->str);
		type_suffix(d, &n->type);
		break;
	case AST_IDENT:
		fprintf(d->out, "identifier: %s", n->str);
		type_suffix(d, &n->type);
		break;
	case AST_VAR:
		fprintf(d->out, "variable: %s", n->str);
		type_suffix(d, &n->type);
		break;
	case AST_MAP:
		fprintf(d->out, "map: %s", n->str);
		type_suffix(d, &n->type);
		dump_kids(d, n, depth + 1);
		break;
	case AST_CALL:
		fprintf(d->out, "call: %s", n->str);
		type_suffix(d, &n->type);
		dump_kids(d, n, depth + 1);
		break;
	case AST_BINOP:
		fputs(ast_op_text(n->op), d->out);
		type_suffix(d, &n->type);
		dump_expr(d, n->lhs, depth + 1);
		dump_expr(d, n->rhs, depth + 1);
		break;
	case AST_UNOP:
		fprintf(d->out, "%s\n", n->op == '*' ? "dereference" : ast_op_text(n->op));
		dump_expr(d, n->lhs, depth + 1);
		break;
	case AST_INCDEC:
		fprintf(d->out, "%s\n", ast_op_text(n->op));
		dump_expr(d, n->lhs, depth + 1);
		break;
	case AST_TUPLE:
		fputs("tuple:\n", d->out);
		dump_kids(d, n, depth + 1);
		break;
	case AST_TERNARY:
		fputs("?:\n", d->out);
		dump_expr(d, n->cond, depth + 1);
		dump_expr(d, n->lhs, depth + 1);
		dump_expr(d, n->rhs, depth + 1);
		break;
	default:
		fprintf(d->out, "?\n");
		break;
	}
}

static void dump_block(struct dumper *d, const struct ast_node *blk, int depth)
{
	for (int i = 0; i < blk->nkids; i++)
		dump_stmt(d, blk->kids[i], depth);
}

static void dump_stmt(struct dumper *d, const struct ast_node *n, int depth)
{
	switch (n->kind) {
	case AST_EXPR_STMT:
		dump_expr(d, n->lhs, depth);
		break;
	case AST_ASSIGN:
		indent(d, depth);
		fputs("=\n", d->out);
		dump_expr(d, n->lhs, depth + 1);
		if (n->op == '=') {
			dump_expr(d, n->rhs, depth + 1);
		} else {
			/* bpftrace keeps `@x += 2` as `@x = @x + 2` */
			indent(d, depth + 1);
			fputs(ast_op_text(n->op), d->out);
			type_suffix(d, &n->optype);
			dump_expr(d, n->lhs, depth + 2);
			dump_expr(d, n->rhs, depth + 2);
		}
		break;
	case AST_IF:
		indent(d, depth);
		fputs("if\n", d->out);
		dump_expr(d, n->cond, depth + 1);
		indent(d, depth + 1);
		fputs("then\n", d->out);
		dump_block(d, n->body, depth + 2);
		if (n->els) {
			indent(d, depth + 1);
			fputs("else\n", d->out);
			if (n->els->kind == AST_IF)
				dump_stmt(d, n->els, depth + 2);
			else
				dump_block(d, n->els, depth + 2);
		}
		break;
	case AST_BLOCK:
		dump_block(d, n, depth);
		break;
	default:
		dump_expr(d, n, depth);
		break;
	}
}

/* bpftrace prints the canonical attach point: "u:./t:f" shows as
 * "uprobe:./t:f". */
static void dump_attach(struct dumper *d, const struct ast_node *ap)
{
	indent(d, 1);
	const struct ast_attach *a = &ap->attach;
	if (!a->provider)
		fprintf(d->out, "%s\n", ap->str);
	else if (a->target && a->func)
		fprintf(d->out, "%s:%s:%s\n", a->provider, a->target, a->func);
	else
		fprintf(d->out, "%s\n", a->provider);
}

void ast_dump(const struct ast_node *prog, bool with_types, FILE *out)
{
	struct dumper d = { .out = out, .types = with_types };
	fputs("Program\n", out);
	for (int i = 0; prog && i < prog->nkids; i++) {
		const struct ast_node *probe = prog->kids[i];
		for (int j = 0; j < probe->nkids; j++)
			dump_attach(&d, probe->kids[j]);
		if (probe->pred) {
			indent(&d, 2);
			fputs("pred\n", out);
			dump_expr(&d, probe->pred, 3);
		}
		if (probe->body)
			dump_block(&d, probe->body, 2);
	}
}
