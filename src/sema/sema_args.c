/*
 * sema_args.c - types of the `args` builtin and of its fields, `args.name`
 * (newer bpftrace) and `args->name` (bpftrace 0.17), in uprobes and in the
 * system-call tracepoints.
 *
 * Pipeline position: sema, called from sema_builtin() and sema_field()
 * before their generic handling.  The record itself was built from the
 * binary's DWARF before sema ran (attach/resolve/dwarf.c, probe->args), or from
 * the tracepoint's format (attach/resolve/syscalls.c: probe->tp_args, one per
 * tracepoint matched); here we only check where `args` may be used and which
 * parameter or field a field names.
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
		if (!strcmp(p, "tracepoint") && !a->kernel)
			continue; /* syscalls, raw_syscalls: the format's record */
		if (strcmp(p, "uprobe") || a->offset || (!a->func && a->address) || a->src_file) {
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
	/* raw_syscalls' record is the kernel's to bpftrace (AS(kernel) in -d types) */
	enum ast_addrspace as = r->nmembers ? r->members[0].type.as : AS_USER;
	n->type = (struct ast_type){.kind = TY_STRUCT,
				    .size = r->size,
				    .rec = r,
				    .as = as == AS_KERNEL ? AS_KERNEL : AS_USER};
	return true;
}

static const struct ast_member *find_member(const struct ast_record *r, const char *name)
{
	for (int i = 0; i < r->nmembers; i++)
		if (!strcmp(r->members[i].name, name))
			return &r->members[i];
	return NULL;
}

/*
 * A tracepoint's field: bpftrace checks it in each tracepoint the probe
 * matched (`sys_enter_read*` has readlink, which has no fd), one error
 * each; the node's type is the first one's.
 */
static bool tp_field(struct sema *s, struct ast_node *n)
{
	const struct ast_node *probe = s->probe;
	bool ok = true;
	if (!strncmp(n->str, "common_", 7)) { /* bpftrace's refusal, kept */
		diag_error(s->diags, n->loc,
			   "BPF does not support accessing common tracepoint fields");
		return true;
	}
	for (int i = 0; i < probe->ntp_args; i++) {
		if (find_member(probe->tp_args[i], n->str))
			continue;
		diag_error(s->diags, n->loc,
			   "Struct/union of type '%s' does not contain a field named '%s'",
			   probe->tp_args[i]->name, n->str);
		ok = false;
	}
	const struct ast_member *m = find_member(n->lhs->type.rec, n->str);
	if (ok && m) {
		n->field = m;
		n->type = m->type;
	}
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
	if (s->probe->ntp_args)
		return tp_field(s, n);
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
