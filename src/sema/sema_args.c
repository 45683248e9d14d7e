/*
 * sema_args.c - types of a uprobe's `args` builtin and of its fields,
 * `args.name` (newer bpftrace) and `args->name` (bpftrace 0.17).
 *
 * Pipeline position: sema, called from sema_builtin() and sema_field()
 * before their generic handling.  The record itself was built from the
 * binary's DWARF before sema ran (attach/resolve/dwarf.c, probe->args); here we
 * only check where `args` may be used and which parameter a field names.
 * `args` is a record value kept in a buffer by codegen (cg_args.c), so
 * `args.name` reads it like any record field; `->` is accepted too, since
 * bpftrace 0.17 makes args a pointer.
 */
#include "sema_internal.h"
#include "util/diag.h"

#include <string.h>

static bool is_args(const struct ast_node *n)
{
	return n && n->kind == AST_BUILTIN && n->str && !strcmp(n->str, "args");
}

/* builtin -> 'args' */
bool sema_args_builtin(struct sema *s, struct ast_node *n)
{
	if (!is_args(n))
		return false;
	n->type = ty_none;
	for (int i = 0; i < s->probe->nkids; i++) {
		const struct ast_attach *a = &s->probe->kids[i]->attach;
		const char *p = a->provider ? a->provider : "";
		bool special = !strcmp(p, "BEGIN") || !strcmp(p, "END");
		if (strcmp(p, "uprobe") || a->offset || (!a->func && a->address)) {
			diag_error(s->diags, n->loc,
				   "The args builtin can only be used with tracepoint/kfunc/uprobeprobes (%s used here)",
				   special ? "special" : strcmp(p, "uprobe") ? p : "uprobe at an offset");
			return true;
		}
	}
	const struct ast_record *r = s->probe->args;
	if (!r) {
		diag_error(s->diags, n->loc, "args: the parameters of this probe's function are unknown");
		return true;
	}
	if (!r->complete)
		return true; /* attach/resolve/dwarf.c reported why */
	n->type = (struct ast_type){ .kind = TY_STRUCT, .size = r->size, .rec = r, .as = AS_USER };
	return true;
}

/* field -> 'args' '.' name | 'args' '->' name */
bool sema_args_field(struct sema *s, struct ast_node *n)
{
	if (!is_args(n->lhs))
		return false;
	sema_expr(s, n->lhs, USE_NONE, NULL);
	n->type = ty_none;
	n->field = NULL;
	if (n->lhs->type.kind != TY_STRUCT)
		return true;
	const struct ast_record *r = n->lhs->type.rec;
	for (int i = 0; i < r->nmembers; i++) {
		const struct ast_member *m = &r->members[i];
		if (strcmp(m->name, n->str))
			continue;
		if (m->type.kind == TY_NONE) {
			struct diag *d = diag_error(s->diags, n->loc,
						    "args: parameter '%s' cannot be read", n->str);
			diag_hint(d, "it is passed in floating-point (SSE) registers, which "
				     "ubt's trampolines do not save");
			return true;
		}
		n->field = m;
		n->type = m->type;
		n->type.as = AS_USER;
		return true;
	}
	diag_error(s->diags, n->loc, "Can't find function parameter %s", n->str);
	return true;
}
