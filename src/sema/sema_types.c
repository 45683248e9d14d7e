/*
 * sema_types.c - semantic analysis of the expressions that involve C types
 * and composite values: casts, `*p`, `p->f`, `s.f`, `a[i]`, tuples and
 * `t.N`, identifiers naming constants, positional parameters and sizeof.
 *
 * Pipeline position: called from sema.c's expression walk (sema_expr());
 * the types come from the script's C preamble (cdefs.c, struct
 * ast_program) and from bpftrace's own integer type names.  Messages are
 * bpftrace 0.17's where it has one, e.g.
 *
 *   stdin:1:55-60: ERROR: Struct/union of type 'struct A' does not contain a field named 'b'
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"
#include "../util/util.h"

/* bpftrace's own type names in casts and declarations. */
static bool bpftrace_int(const char *n, struct ast_type *t)
{
	static const struct { const char *name; int size; bool sign; } tab[] = {
		{ "int8", 1, true },   { "int16", 2, true },   { "int32", 4, true },
		{ "int64", 8, true },  { "uint8", 1, false },  { "uint16", 2, false },
		{ "uint32", 4, false }, { "uint64", 8, false }, { "int8_t", 1, true },
		{ "int16_t", 2, true }, { "int32_t", 4, true }, { "int64_t", 8, true },
		{ "uint8_t", 1, false }, { "uint16_t", 2, false }, { "uint32_t", 4, false },
		{ "uint64_t", 8, false }, { "bool", 1, false }, { "char", 1, true },
		{ "short", 2, true }, { "int", 4, true }, { "long", 8, true },
		{ "unsigned", 4, false }, { "size_t", 8, false }, { "ssize_t", 8, true },
		{ "pid_t", 4, true }, { "uintptr_t", 8, false }, { "u8", 1, false },
		{ "u16", 2, false }, { "u32", 4, false }, { "u64", 8, false }, { "s8", 1, true },
		{ "s16", 2, true }, { "s32", 4, true }, { "s64", 8, true },
	};
	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (!strcmp(n, tab[i].name)) {
			*t = (struct ast_type){ .kind = TY_INT, .size = tab[i].size,
						.is_signed = tab[i].sign };
			return true;
		}
	return false;
}

/*
 * type -> int-name | typedef-name | ('struct' | 'union' | 'enum') name
 *         | 'string' ['[' N ']'] | int-name '[' N ']', then '*'*.
 * Returns false after reporting an unknown type.
 */
/*
 * typeof(x) (bpftrace 0.24): the type of expression x, or of x as a type
 * name (typeof(uint32), typeof(struct Foo)); x is typed, never run.
 */
static bool typeof_type(struct sema *s, struct ast_node *tyn, struct ast_type *out)
{
	struct ast_node *x = tyn->lhs;
	if (x->kind == AST_IDENT || x->kind == AST_TYPE) {
		struct ast_node name = {.kind = AST_TYPE, .loc = x->loc, .str = x->str};
		struct diags quiet = {0}, *d = s->diags;
		s->diags = &quiet; /* not a type name: an expression after all */
		bool ok = sema_resolve_type(s, &name, out);
		s->diags = d;
		diag_free(&quiet);
		if (ok) {
			tyn->type = *out;
			return true;
		}
	}
	sema_expr(s, x, USE_NONE, NULL);
	if (x->type.kind == TY_NONE || x->type.kind == TY_VOID) {
		if (s->final && x->type.kind == TY_VOID) /* none: its own error said why */
			diag_error(s->diags, tyn->loc, "typeof() of an expression without a value");
		return false;
	}
	*out = x->type;
	if (out->kind == TY_INT && out->size < 8 && !out->is_bool && x->kind == AST_INT)
		out->size = 8; /* a literal is an int64, as its variable would be */
	tyn->type = *out;
	return true;
}

bool sema_resolve_type(struct sema *s, struct ast_node *tyn, struct ast_type *out)
{
	struct ast_type t = { 0 };
	const char *name = tyn->str;
	bool found = true;
	if (tyn->lhs && !strcmp(name, "typeof"))
		return typeof_type(s, tyn, out);
	if (!strcmp(name, "void")) {
		if (!tyn->uval) {
			diag_error(s->diags, tyn->loc, "void is only valid behind a pointer ('void *')");
			return false;
		}
		t = (struct ast_type){ .kind = TY_NONE };
	} else if (!strcmp(name, "string")) {
		t = ty_str(tyn->slen ? (int)tyn->slen : 64);
	} else if (bpftrace_int(name, &t)) {
		/* `(bool)x`, `let $b: bool`: bpftrace 0.24's bool, printed true/false */
		t.is_bool = !strcmp(name, "bool") && !tyn->uval && !tyn->slen;
	} else if (!strncmp(name, "enum ", 5)) {
		/* (enum Foo)x: printed by Foo's names with %s, when it has one for x */
		const char *tag = NULL;
		for (int i = 0; i < s->prog->nconsts && !tag; i++)
			if (s->prog->consts[i].enum_tag &&
			    !strcmp(s->prog->consts[i].enum_tag, name + 5))
				tag = s->prog->consts[i].enum_tag;
		t = (struct ast_type){
		    .kind = TY_INT, .size = 4, .is_signed = false, .enum_tag = tag};
	} else if (!strncmp(name, "struct ", 7) || !strncmp(name, "union ", 6)) {
		struct ast_record *r = ast_record_find(s->prog, name, false);
		if (!r && tyn->uval > 0) {
			/* `struct x *` of an undeclared struct: bpftrace refuses it too */
			found = false;
		} else if (!r || !r->complete) {
			found = false;
		} else {
			t = (struct ast_type){ .kind = TY_STRUCT, .size = r->size, .rec = r };
		}
	} else {
		found = false;
		for (int i = s->prog->ntypedefs - 1; i >= 0; i--)
			if (!strcmp(s->prog->typedefs[i].name, name)) {
				t = s->prog->typedefs[i].type;
				found = true;
				break;
			}
	}
	if (!found) {
		if (!strncmp(name, "struct ", 7) || !strncmp(name, "union ", 6))
			diag_error(s->diags, tyn->loc, "Unknown struct/union: '%s'", name);
		else
			diag_error(s->diags, tyn->loc, "Unknown type: '%s'", name);
		return false;
	}
	if (tyn->slen && t.kind == TY_INT) {
		struct ast_type *e = ast_arena_alloc(s->prog, sizeof(*e));
		*e = t;
		t = (struct ast_type){ .kind = TY_ARRAY, .size = t.size * (int)tyn->slen, .elem = e,
				       .count = (int)tyn->slen };
	}
	for (uint64_t i = 0; i < tyn->uval && i < 16; i++)
		t = ast_ptr_to(s->prog, t);
	tyn->type = t;
	*out = t;
	return true;
}

static bool is_intlike(const struct ast_type *t)
{
	return t->kind == TY_INT || t->kind == TY_PTR;
}

/* A record, or a pointer (to a pointer) to one. */
static bool cast_is_record(const struct ast_type *t)
{
	while (t && t->kind == TY_PTR)
		t = t->elem;
	return t && t->kind == TY_STRUCT;
}

/*
 * bpftrace 0.17 gives a cast to a record type without an address space the
 * probe's: user when every attach point is a uprobe, every one a uretprobe
 * or every one a usdt probe (`(struct x *)0` in a uprobe is AS(user)), none
 * otherwise.  -kk names the read helper after it (codegen/cg_check.c).
 */
static enum ast_addrspace probe_addrspace(const struct ast_node *probe)
{
	const char *first = probe && probe->nkids ? probe->kids[0]->attach.provider : NULL;
	if (!first || (strcmp(first, "uprobe") && strcmp(first, "uretprobe") && strcmp(first, "usdt")))
		return AS_NONE;
	for (int i = 1; i < probe->nkids; i++)
		if (strcmp(probe->kids[i]->attach.provider, first))
			return AS_NONE;
	return AS_USER;
}

/* cast -> '(' type ')' expr */
void sema_cast(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->lhs, USE_NONE, NULL);
	struct ast_type t;
	n->type = ty_none;
	if (!sema_resolve_type(s, n->tyn, &t))
		return;
	const struct ast_type *from = &n->lhs->type;
	char a[64];
	if (from->kind == TY_NONE && !s->final) {
		n->type = t;
		return;
	}
	if (t.kind == TY_STRUCT) {
		/* `(struct x)e`: the record at address e, as old bpftrace allowed */
		if (!is_intlike(from)) {
			diag_error(s->diags, n->loc, "Casts are not supported for type: \"%s\"",
				   sema_tn(from, a));
			return;
		}
	} else if (t.kind != TY_INT && t.kind != TY_PTR) {
		diag_error(s->diags, n->loc, "Cannot cast to \"%s\"", sema_tn(&t, a));
		return;
	} else if ((from->kind == TY_STRUCT || from->kind == TY_ARRAY || from->kind == TY_STR) &&
		   t.kind == TY_PTR && n->lhs->kind == AST_FIELD) {
		/* an array member decays to its address, as in C: SPDK's sched.bt
		 * casts `(struct spdk_thread_stats *)$info->current_stats` where
		 * current_stats is a one-element array */
	} else if (t.is_bool && from->kind == TY_STR) {
		/* (bool)"s": not empty (bpftrace 0.24) */
	} else if (!is_intlike(from)) {
		diag_error(s->diags, n->loc, "Casts are not supported for type: \"%s\"",
			   sema_tn(from, a));
		return;
	}
	n->type = t;
	n->type.as = from->as;
	if (n->type.as == AS_NONE && cast_is_record(&t))
		n->type.as = probe_addrspace(s->probe);
}

/* The record a `.f` or `->f` reads, after bpftrace's checks. */
static const struct ast_record *field_record(struct sema *s, struct ast_node *n)
{
	const struct ast_type *t = &n->lhs->type;
	char a[64];
	if (t->kind == TY_NONE)
		return NULL;
	if (n->op == OP_PTR) {
		if (t->kind == TY_PTR && t->elem->kind == TY_STRUCT)
			return t->elem->rec;
		if (t->kind == TY_STRUCT) {
			diag_error(s->diags, n->loc,
				   "Can not access field '%s' on type '%s'. Try using '.'", n->str,
				   sema_tn(t, a));
			return NULL;
		}
	} else {
		if (t->kind == TY_STRUCT)
			return t->rec;
		if (t->kind == TY_PTR && t->elem->kind == TY_STRUCT) {
			diag_error(s->diags, n->loc,
				   "Can not access field '%s' on type '%s'. Try dereferencing it first, or using '->'",
				   n->str, sema_tn(t, a));
			return NULL;
		}
	}
	diag_error(s->diags, n->loc, "Can not access field '%s' on expression of type '%s'", n->str,
		   sema_tn(t, a));
	return NULL;
}

/* field -> expr '.' name | expr '->' name */
void sema_field(struct sema *s, struct ast_node *n)
{
	if (sema_args_field(s, n)) /* args.name (sema_args.c) */
		return;
	sema_expr(s, n->lhs, USE_NONE, NULL);
	n->type = ty_none;
	n->field = NULL;
	const struct ast_record *r = field_record(s, n);
	if (!r)
		return;
	for (int i = 0; i < r->nmembers; i++)
		if (!strcmp(r->members[i].name, n->str)) {
			n->field = &r->members[i];
			n->type = r->members[i].type;
			n->type.as = n->lhs->type.as;
			return;
		}
	diag_error(s->diags, n->loc, "Struct/union of type '%s' does not contain a field named '%s'",
		   r->name, n->str);
}

/* index -> expr '[' expr ']' on an array or a pointer */
void sema_index(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->lhs, USE_NONE, NULL);
	sema_expr(s, n->rhs, USE_NONE, NULL);
	const struct ast_type *t = &n->lhs->type;
	char a[64];
	n->type = ty_none;
	if (t->kind == TY_NONE)
		return;
	if (t->kind == TY_STR) { /* `$s[i]` (bpftrace 0.25): the byte, 0 past the buffer */
		int64_t i;
		if (n->rhs->type.kind != TY_INT && n->rhs->type.kind != TY_NONE)
			diag_error(s->diags, n->rhs->loc,
				   "The array index must be an integer, found %s",
				   sema_tn(&n->rhs->type, a));
		else if (ast_int_literal(n->rhs, &i) && (i < 0 || i >= t->size))
			diag_error(s->diags, n->loc,
				   "the index %" PRId64 " is out of bounds for array of size %d", i,
				   t->size);
		else
			n->type = (struct ast_type){TY_INT, 1, true, AS_NONE};
		return;
	}
	if (t->kind != TY_ARRAY && !(t->kind == TY_PTR && t->elem->kind != TY_NONE)) {
		diag_error(s->diags, n->loc,
			   "The array index operator [] can only be used on arrays and pointers, found %s.",
			   t->kind == TY_PTR ? "void pointer" : sema_kind_name(t));
		return;
	}
	if (n->rhs->type.kind != TY_INT && n->rhs->type.kind != TY_NONE) {
		diag_error(s->diags, n->rhs->loc, "The array index must be an integer, found %s",
			   sema_tn(&n->rhs->type, a));
		return;
	}
	if (t->kind == TY_ARRAY && n->rhs->kind == AST_INT &&
	    (int64_t)n->rhs->uval >= (int64_t)t->count) {
		diag_error(s->diags, n->loc, "the index %" PRId64 " is out of bounds for array of size %d",
			   (int64_t)n->rhs->uval, t->count);
		return;
	}
	if (t->kind == TY_ARRAY && n->rhs->kind == AST_INT && (int64_t)n->rhs->uval < 0) {
		diag_error(s->diags, n->loc, "the index %" PRId64 " is out of bounds for array of size %d",
			   (int64_t)n->rhs->uval, t->count);
		return;
	}
	n->type = *t->elem;
	n->type.as = t->as;
}

/* dereference -> '*' expr */
void sema_deref(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->lhs, USE_NONE, NULL);
	const struct ast_type *t = &n->lhs->type;
	char a[64];
	n->type = ty_none;
	if (t->kind == TY_NONE)
		return;
	if (t->kind == TY_PTR) {
		if (t->elem->kind == TY_NONE) {
			diag_error(s->diags, n->loc, "Can not dereference a void pointer: '%s'",
				   sema_tn(t, a));
			return;
		}
		n->type = *t->elem;
	} else if (t->kind == TY_INT) {
		/* bpftrace reads 8 bytes at an integer address */
		n->type = ty_uint64;
	} else {
		diag_error(s->diags, n->loc, "Can not dereference type '%s'", sema_tn(t, a));
		return;
	}
	n->type.as = t->as;
}

/* tuple -> '(' expr ',' expr (',' expr)* ')' */
void sema_tuple(struct sema *s, struct ast_node *n)
{
	struct ast_type types[64];
	bool ok = true;
	for (int i = 0; i < n->nkids; i++) {
		sema_expr(s, n->kids[i], USE_NONE, NULL);
		struct ast_type t = n->kids[i]->type;
		if (t.kind == TY_NONE || t.kind == TY_VOID) {
			if (s->final)
				diag_error(s->diags, n->kids[i]->loc, "Invalid expression in a tuple: %s",
					   t.kind == TY_VOID ? "no value" : "none");
			ok = false;
		} else if (t.kind == TY_COUNT || t.kind == TY_SUM) {
			diag_error(s->diags, n->kids[i]->loc, "Map aggregations cannot be tuple elements");
			ok = false;
		}
		if (i < 64)
			types[i] = t;
	}
	if (n->nkids > 64) {
		diag_error(s->diags, n->loc, "Tuples have at most 64 elements");
		ok = false;
	}
	n->type = ok ? ast_tuple_of(s->prog, types, n->nkids) : ty_none;
}

/* tuple_index -> expr '.' INT */
void sema_tuple_index(struct sema *s, struct ast_node *n)
{
	sema_expr(s, n->lhs, USE_NONE, NULL);
	const struct ast_type *t = &n->lhs->type;
	char a[64];
	n->type = ty_none;
	if (t->kind == TY_NONE)
		return;
	if (t->kind != TY_TUPLE) {
		diag_error(s->diags, n->loc, "Can not access index '%" PRIu64 "' on expression of type '%s'",
			   n->uval, sema_tn(t, a));
		return;
	}
	if (n->uval >= (uint64_t)t->tup->count) {
		diag_error(s->diags, n->loc, "Invalid tuple index: %" PRIu64 ". Found %d elements in tuple.",
			   n->uval, t->tup->count);
		return;
	}
	n->type = t->tup->types[n->uval];
}

static bool is_number(const char *p)
{
	if (*p == '-')
		p++;
	if (!*p)
		return false;
	char *end;
	strtoull(p, &end, 0);
	return !*end;
}

/* Inside str()'s first argument, `$N` is its parameter's text. */
static bool in_str_arg(const struct sema *s)
{
	return s->func && !strcmp(s->func, "str") && s->func_arg == 0;
}

/*
 * $N: an integer if the parameter is a number (or missing: 0), else a
 * string, which only str($N) may use (bpftrace's rule).  In str() it is
 * the text whatever it holds: `str($1)` of 1 is "1", of a missing
 * parameter "".
 */
void sema_posparam(struct sema *s, struct ast_node *n)
{
	uint64_t i = n->uval;
	n->type = ty_int64;
	if (i == 0) {
		diag_error(s->diags, n->loc, "$0 is not a positional parameter (they start at $1)");
		return;
	}
	n->cval = 0;
	const char *v = i <= (uint64_t)s->prog->nparams ? s->prog->params[i - 1] : NULL;
	n->cstr = v;
	if (in_str_arg(s)) {
		n->cstr = v ? v : "";
		n->type = ty_str((int)strlen(n->cstr) + 1);
		n->type.as = AS_KERNEL;
		return;
	}
	if (!v)
		return; /* missing: 0 */
	if (is_number(v)) {
		n->cval = *v == '-' ? (uint64_t)strtoll(v, NULL, 0) : strtoull(v, NULL, 0);
		return;
	}
	diag_error(s->diags, n->loc, "%s used numerically but given \"%s\". Try using str(%s).",
		   n->str, v, n->str);
}

/*
 * str($N + k), str(k + $N): the parameter's text from character k on
 * (bpftrace adds k to the address of the text), 0 <= k <= its length.
 * Any other operation on a `$N` in str() is an error, as in bpftrace;
 * returns false when n has no `$N` operand.
 */
bool sema_str_param_offset(struct sema *s, struct ast_node *n)
{
	if (!in_str_arg(s))
		return false;
	struct ast_node *p = n->lhs->kind == AST_POSPARAM ? n->lhs : n->rhs;
	struct ast_node *k = p == n->lhs ? n->rhs : n->lhs;
	if (p->kind != AST_POSPARAM || p->uval == 0 || k->kind == AST_POSPARAM)
		return false;
	sema_expr(s, p, USE_NONE, NULL);
	sema_expr(s, k, USE_NONE, NULL);
	size_t len = strlen(p->cstr);
	if (n->op != '+' || k->kind != AST_INT || k->uval > len) {
		struct src_loc at = n->loc;
		at.end_line = n->rhs->loc.end_line;
		at.end_col = n->rhs->loc.end_col;
		diag_error(s->diags, at,
			   "only addition of a single constant less or equal to the length of %s (which is %zu) is allowed inside str()",
			   p->str, len);
		n->type = ty_str(1); /* one error, as bpftrace */
		return true;
	}
	n->cstr = p->cstr + k->uval;
	n->type = ty_str((int)strlen(n->cstr) + 1);
	n->type.as = AS_KERNEL;
	return true;
}

/* A bare identifier: an enum member or a #define'd constant. */
void sema_ident(struct sema *s, struct ast_node *n)
{
	for (int i = s->prog->nconsts - 1; i >= 0; i--) {
		const struct ast_const *c = &s->prog->consts[i];
		if (strcmp(c->name, n->str))
			continue;
		n->uval = 0;
		if (c->str) {
			n->type = ty_str((int)strlen(c->str) + 1);
			n->type.as = AS_KERNEL;
			n->cstr = c->str;
		} else {
			/* bpftrace: an enumerator is a uint64; a #define'd
			 * integer the literal its preprocessor leaves */
			n->type = c->is_enum ? ty_uint64 : ty_int64;
			n->type.enum_tag = c->is_enum ? c->enum_tag : NULL;
			n->cval = (uint64_t)c->value;
			n->uval = !c->is_enum;
		}
		return;
	}
	if (!strcmp(n->str, "true") || !strcmp(n->str, "false")) {
		/* bpftrace 0.24's booleans (a #define of the name wins, above) */
		n->type = ty_bool;
		n->cval = !strcmp(n->str, "true");
		s->prog->newer = true;
		n->uval = 1;
		return;
	}
	n->type = ty_none;
	diag_error(s->diags, n->loc, "Unknown identifier: '%s'", n->str);
}

/* sizeof -> 'sizeof' '(' (type | expr) ')' */
void sema_sizeof(struct sema *s, struct ast_node *n)
{
	n->type = ty_uint64;
	struct ast_type t;
	if (n->tyn) {
		if (!sema_resolve_type(s, n->tyn, &t))
			return;
	} else if (n->lhs->kind == AST_IDENT) {
		/* sizeof(uint32) or sizeof(my_typedef): a type name parses as an
		 * identifier */
		struct ast_node tyn = { .kind = AST_TYPE, .loc = n->lhs->loc, .str = n->lhs->str };
		struct ast_type it;
		bool is_type = bpftrace_int(tyn.str, &it) || !strcmp(tyn.str, "string");
		for (int i = 0; !is_type && i < s->prog->ntypedefs; i++)
			is_type = !strcmp(s->prog->typedefs[i].name, tyn.str);
		if (is_type) {
			sema_resolve_type(s, &tyn, &t);
			n->lhs->type = t;
		} else {
			sema_expr(s, n->lhs, USE_NONE, NULL);
			t = n->lhs->type;
		}
	} else {
		sema_expr(s, n->lhs, USE_NONE, NULL);
		t = n->lhs->type;
	}
	n->cval = (uint64_t)t.size;
}
