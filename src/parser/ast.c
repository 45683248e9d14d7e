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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
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

struct ast_node *ast_clone(const struct ast_node *n)
{
	if (!n)
		return NULL;
	struct ast_node *c = xmalloc(sizeof(*c));
	*c = *n;
	if (n->str) {
		size_t len = n->kind == AST_STR ? n->slen : strlen(n->str);
		c->str = xmalloc(len + 1);
		memcpy(c->str, n->str, len + 1);
	}
	c->attach.provider = n->attach.provider ? xstrdup(n->attach.provider) : NULL;
	c->attach.target = n->attach.target ? xstrdup(n->attach.target) : NULL;
	c->attach.func = n->attach.func ? xstrdup(n->attach.func) : NULL;
	c->attach.ns = n->attach.ns ? xstrdup(n->attach.ns) : NULL;
	c->attach.src_file = n->attach.src_file ? xstrdup(n->attach.src_file) : NULL;
	c->prog = NULL;
	c->lhs = ast_clone(n->lhs);
	c->rhs = ast_clone(n->rhs);
	c->cond = ast_clone(n->cond);
	c->body = ast_clone(n->body);
	c->els = ast_clone(n->els);
	c->pred = ast_clone(n->pred);
	c->tyn = ast_clone(n->tyn);
	c->kids = NULL;
	c->nkids = 0;
	for (int i = 0; i < n->nkids; i++)
		ast_add_kid(c, ast_clone(n->kids[i]));
	return c;
}

/* ---- the program's arena and types -------------------------------------- */

struct arena_blk {
	struct arena_blk *next;
	max_align_t data[];
};

void *ast_arena_alloc(struct ast_program *p, size_t size)
{
	struct arena_blk *b = xcalloc(1, sizeof(*b) + size);
	b->next = p->arena;
	p->arena = b;
	return b->data;
}

static void program_free(struct ast_program *p)
{
	for (struct arena_blk *b = p->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	for (int i = 0; i < p->nrecords; i++) {
		struct ast_record *r = p->records[i];
		for (int j = 0; j < r->nmembers; j++)
			free(r->members[j].name);
		free(r->members);
		free(r->name);
		free(r);
	}
	free(p->records);
	for (int i = 0; i < p->ntypedefs; i++)
		free(p->typedefs[i].name);
	free(p->typedefs);
	for (int i = 0; i < p->nconsts; i++) {
		free(p->consts[i].name);
		free(p->consts[i].str);
		free(p->consts[i].enum_tag);
	}
	free(p->consts);
	for (int i = 0; i < p->nparams; i++)
		free(p->params[i]);
	free(p->params);
	for (int i = 0; i < p->nmapdecls; i++)
		ast_free(p->mapdecls[i]);
	free(p->mapdecls);
	free(p);
}

struct ast_record *ast_record_find(struct ast_program *p, const char *name, bool create)
{
	for (int i = 0; i < p->nrecords; i++)
		if (!strcmp(p->records[i]->name, name))
			return p->records[i];
	if (!create)
		return NULL;
	struct ast_record *r = xcalloc(1, sizeof(*r));
	r->name = xstrdup(name);
	r->is_union = !strncmp(name, "union ", 6);
	r->align = 1;
	p->records = xrealloc(p->records, (p->nrecords + 1) * sizeof(*p->records));
	p->records[p->nrecords++] = r;
	return r;
}

struct ast_type ast_ptr_to(struct ast_program *p, struct ast_type t)
{
	struct ast_type *e = ast_arena_alloc(p, sizeof(*e));
	*e = t;
	e->as = AS_NONE;
	return (struct ast_type){ .kind = TY_PTR, .size = 8, .elem = e };
}

/*
 * The alignment a value of type t has in a tuple, as bpftrace 0.17 lays
 * tuples out (a C struct of the elements): integers and pointers their
 * size, records theirs, arrays their element's, strings and bytes 1, the
 * values ubt keeps as 8-byte words 8.  `((int8)1, (int16)1, (int32)1)`
 * is 8 bytes, `((int32)1, struct {int m; int n;})` 12.
 */
int ast_type_align(const struct ast_type *t)
{
	switch (t->kind) {
	case TY_INT:
	case TY_PTR:
		return t->size >= 1 && t->size <= 8 ? t->size : 8;
	case TY_STRUCT:
		return t->rec && t->rec->align > 0 ? t->rec->align : 1;
	case TY_ARRAY:
		return t->elem ? ast_type_align(t->elem) : 1;
	case TY_TUPLE: {
		int a = 1;
		for (int i = 0; t->tup && i < t->tup->count; i++)
			if (ast_type_align(&t->tup->types[i]) > a)
				a = ast_type_align(&t->tup->types[i]);
		return a;
	}
	case TY_STR:
	case TY_BUF:
	case TY_MACADDR:
		return 1;
	default:
		return 8;
	}
}

struct ast_type ast_tuple_of(struct ast_program *p, const struct ast_type *types, int n)
{
	struct ast_tuple *tu = ast_arena_alloc(p, sizeof(*tu));
	tu->count = n;
	tu->types = ast_arena_alloc(p, (size_t)(n ? n : 1) * sizeof(*tu->types));
	tu->offsets = ast_arena_alloc(p, (size_t)(n ? n : 1) * sizeof(*tu->offsets));
	int off = 0, align = 1;
	for (int i = 0; i < n; i++) {
		tu->types[i] = types[i];
		tu->types[i].as = AS_NONE;
		int a = ast_type_align(&types[i]);
		off = (off + a - 1) / a * a;
		tu->offsets[i] = off;
		off += types[i].size;
		if (a > align)
			align = a;
	}
	off = (off + align - 1) / align * align;
	return (struct ast_type){ .kind = TY_TUPLE, .size = off, .tup = tu };
}

bool ast_int_literal(const struct ast_node *n, int64_t *v)
{
	switch (n->kind) {
	case AST_INT:
		*v = (int64_t)n->uval;
		return true;
	case AST_UNOP:
		if (n->op != '-' || n->lhs->kind != AST_INT)
			return false;
		*v = -(int64_t)n->lhs->uval;
		return true;
	case AST_POSPARAM:
		if (n->type.kind != TY_INT)
			return false;
		*v = (int64_t)n->cval;
		return true;
	case AST_PARAMCOUNT:
		*v = (int64_t)n->cval;
		return true;
	case AST_IDENT:
		if (!n->uval) /* an enumerator or a string */
			return false;
		*v = (int64_t)n->cval;
		return true;
	default:
		return false;
	}
}

/* bpftrace's type names: sema's messages and the typed dump below. */
const char *ast_type_name(const struct ast_type *t, char *buf, size_t len)
{
	switch (t->kind) {
	case TY_INT:
		if (t->is_bool)
			return "bool";
		snprintf(buf, len, "%sint%d", t->is_signed ? "" : "unsigned ", t->size * 8);
		return buf;
	case TY_STR:
		snprintf(buf, len, "string[%d]", t->size);
		return buf;
	case TY_COUNT:
		return "count";
	case TY_SUM:
		return "sum";
	case TY_AVG: return "avg";
	case TY_MIN: return "min";
	case TY_MAX: return "max";
	case TY_STATS: return "stats";
	case TY_HIST: return "hist";
	case TY_LHIST: return "lhist";
	case TY_USYM:
		return "usym";
	case TY_USTACK:
		return "ustack";
	case TY_PTR: {
		char inner[256];
		snprintf(buf, len, "%s *", t->elem->kind == TY_NONE ? "void"
					   : ast_type_name(t->elem, inner, sizeof(inner)));
		return buf;
	}
	case TY_ARRAY: {
		char inner[256];
		snprintf(buf, len, "%s[%d]", ast_type_name(t->elem, inner, sizeof(inner)), t->count);
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
				   ast_type_name(&t->tup->types[i], inner, sizeof(inner)));
		buf_printf(&b, ")");
		snprintf(buf, len, "%s", b.data);
		buf_free(&b);
		return buf;
	}
	case TY_BUF:
		snprintf(buf, len, "buffer[%d]", t->size);
		return buf;
	case TY_TSTAMP: return "timestamp";
	case TY_INET: return "inet";
	case TY_STRERROR: return "strerror";
	case TY_USERNAME: return "username";
	case TY_MACADDR: return "mac_address";
	case TY_CGPATH: return "cgroup_path";
	case TY_NONE:
	case TY_VOID:
	default:
		return "none";
	}
}

bool ast_type_eq(const struct ast_type *a, const struct ast_type *b)
{
	if (a->kind != b->kind || a->size != b->size)
		return false;
	switch (a->kind) {
	case TY_INT:
		return a->is_signed == b->is_signed;
	case TY_PTR:
		return ast_type_eq(a->elem, b->elem);
	case TY_ARRAY:
		return a->count == b->count && ast_type_eq(a->elem, b->elem);
	case TY_STRUCT:
		return a->rec == b->rec;
	case TY_TUPLE:
		if (a->tup->count != b->tup->count)
			return false;
		for (int i = 0; i < a->tup->count; i++)
			if (!ast_type_eq(&a->tup->types[i], &b->tup->types[i]))
				return false;
		return true;
	default:
		return true;
	}
}

void ast_free(struct ast_node *root)
{
	struct vec todo = { 0 };
	if (root)
		vec_push(&todo, root);
	while (todo.len) {
		struct ast_node *n = todo.items[--todo.len];
		struct ast_node *one[] = { n->lhs, n->rhs, n->cond, n->body, n->els, n->pred, n->tyn };
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
		free(n->attach.ns);
		free(n->attach.src_file);
		if (n->prog) {
			if (n->prog->config)
				vec_push(&todo, n->prog->config);
			program_free(n->prog);
		}
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
	case OP_PTR: return "->";
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
	fprintf(d->out, " :: type[%s, ctx: 0", ast_type_name(t, buf, sizeof(buf)));
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

/* "struct Foo*", "int32", "string[16]": a type as bpftrace prints a cast */
static void dump_type_text(struct dumper *d, const struct ast_node *t)
{
	fputs(t->str, d->out);
	if (t->slen)
		fprintf(d->out, "[%zu]", t->slen);
	for (uint64_t i = 0; i < t->uval; i++)
		fputc('*', d->out);
}

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
	case AST_CAST:
		fputc('(', d->out);
		dump_type_text(d, n->tyn);
		fputs(")\n", d->out);
		dump_expr(d, n->lhs, depth + 1);
		break;
	case AST_FIELD:
		/* bpftrace prints `p->f` as `(*p).f`, untyped */
		fputs(".\n", d->out);
		if (n->op == OP_PTR) {
			indent(d, depth + 1);
			fputs("dereference\n", d->out);
			dump_expr(d, n->lhs, depth + 2);
		} else {
			dump_expr(d, n->lhs, depth + 1);
		}
		indent(d, depth + 1);
		fprintf(d->out, "%s\n", n->str);
		break;
	case AST_TUPLE_INDEX:
		fputs(".\n", d->out);
		dump_expr(d, n->lhs, depth + 1);
		indent(d, depth + 1);
		fprintf(d->out, "%" PRIu64 "\n", n->uval);
		break;
	case AST_INDEX:
		fputs("[]\n", d->out);
		dump_expr(d, n->lhs, depth + 1);
		dump_expr(d, n->rhs, depth + 1);
		break;
	case AST_POSPARAM:
		fprintf(d->out, "param: %s", n->str);
		type_suffix(d, &n->type);
		break;
	case AST_PARAMCOUNT:
		fputs("param: $#", d->out);
		type_suffix(d, &n->type);
		break;
	case AST_SIZEOF:
		fputs("call: sizeof", d->out);
		type_suffix(d, &n->type);
		if (n->tyn) {
			indent(d, depth + 1);
			fputs("identifier: ", d->out);
			dump_type_text(d, n->tyn);
			type_suffix(d, &n->tyn->type);
		} else {
			dump_expr(d, n->lhs, depth + 1);
		}
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
	case AST_WHILE:
		indent(d, depth);
		fputs("while(\n", d->out);
		dump_expr(d, n->cond, depth + 1);
		indent(d, depth + 1);
		fputs(")\n", d->out);
		dump_block(d, n->body, depth + 2);
		break;
	case AST_UNROLL:
		indent(d, depth);
		fputs("unroll\n", d->out);
		dump_expr(d, n->lhs, depth + 1);
		indent(d, depth + 1);
		fputs("block\n", d->out);
		dump_block(d, n->body, depth + 2);
		break;
	case AST_FOR_MAP:
	case AST_FOR_RANGE:
		indent(d, depth);
		fputs("for\n", d->out);
		indent(d, depth + 1);
		fputs("decl\n", d->out);
		dump_expr(d, n->lhs, depth + 2);
		indent(d, depth + 1);
		if (n->kind == AST_FOR_MAP) {
			fputs("expr\n", d->out);
			dump_expr(d, n->rhs, depth + 2);
		} else {
			fputs("range\n", d->out);
			dump_kids(d, n, depth + 2);
		}
		indent(d, depth + 1);
		fputs("stmts\n", d->out);
		dump_block(d, n->body, depth + 2);
		break;
	case AST_BREAK:
	case AST_CONTINUE:
		indent(d, depth);
		fputs(n->kind == AST_BREAK ? "break\n" : "continue\n", d->out);
		break;
	case AST_RETURN:
		indent(d, depth);
		fputs("return\n", d->out);
		if (n->lhs)
			dump_expr(d, n->lhs, depth + 1);
		break;
	case AST_LET:
		indent(d, depth);
		fputs("let\n", d->out);
		dump_expr(d, n->lhs, depth + 1);
		if (n->tyn) {
			indent(d, depth + 1);
			fputs("type: ", d->out);
			dump_type_text(d, n->tyn);
			fputc('\n', d->out);
		}
		if (n->rhs)
			dump_expr(d, n->rhs, depth + 1);
		break;
	case AST_CONFIG:
		indent(d, depth);
		fputs("config\n", d->out);
		for (int i = 0; i < n->nkids; i++)
			dump_stmt(d, n->kids[i], depth + 1);
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
	const char *rest = strchr(ap->str, ':');
	const char *plus = a->has_offset && rest ? strrchr(rest, '+') : NULL;
	if (!a->provider)
		fprintf(d->out, "%s\n", ap->str);
	else if (plus) /* uprobe:./t:f+0x10 shows as uprobe:./t:f+16 */
		fprintf(d->out, "%s%.*s+%llu\n", a->provider, (int)(plus - rest), rest,
			(unsigned long long)a->offset);
	else if (rest)
		fprintf(d->out, "%s%s\n", a->provider, rest);
	else
		fprintf(d->out, "%s\n", a->provider);
}

void ast_dump(const struct ast_node *prog, bool with_types, FILE *out)
{
	struct dumper d = { .out = out, .types = with_types };
	fputs("Program\n", out);
	if (prog && prog->prog && prog->prog->config)
		dump_stmt(&d, prog->prog->config, 1);
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
