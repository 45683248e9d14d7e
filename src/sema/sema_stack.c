/*
 * sema_stack.c - types of the stack and address builtins of issue 7:
 * `ustack`, `ustack(n)`, `ustack(mode)`, `ustack(mode, n)` and
 * `uaddr("sym")`.
 *
 * Pipeline position: sema, called from sema_call() and sema_builtin()
 * before their generic handling (the arguments of ustack are literals, a
 * stack mode is not an expression).  A ustack value is a stack id (8
 * bytes, runtime/mem/rt_stack.c) whose type carries the print mode and the
 * number of frames (AST_STACK()); output/stack.c prints it.
 */
#include "sema_internal.h"
#include "util/diag.h"

#include <string.h>

/* bpftrace's default and ubt's limit: PERF_MAX_STACK_DEPTH */
#define SEMA_STACK_DEFAULT 127

/*
 * Where every attach point of the probe runs the same kind of trampoline
 * (rt_stack_kind): a function entry, a return, or a site inside a function
 * (usdt, FUNC+OFF, an address).  -1 when they differ.
 */
/* the registers reg() reads at a function entry or return (struct rt_regs);
 * "flags" too, which no trampoline but a profile timer's keeps: reading
 * it makes no probe a mid-function one */
bool sema_entry_saves_reg(const char *r)
{
	static const char *const saved[] = {"di",  "si", "dx",	    "cx", "r8", "r9",
					    "r11", "sp", "orig_ax", "cs", "ss", "flags"};
	for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++)
		if (!strcmp(r, saved[i]))
			return true;
	return false;
}

/* Does n (a probe's predicate or body) call reg() of one an entry lacks? */
static bool reads_unsaved_reg(const struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return false;
	if (n->kind == AST_CALL && !strcmp(n->str, "reg") && n->nkids == 1 &&
	    n->kids[0]->kind == AST_STR && !sema_entry_saves_reg(n->kids[0]->str))
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		if (reads_unsaved_reg(sub[i], depth + 1))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (reads_unsaved_reg(n->kids[i], depth + 1))
			return true;
	return false;
}

bool sema_all_regs;

bool sema_program_wants_all_regs(const struct ast_node *prog)
{
	for (int k = 0; prog && k < prog->nkids; k++) {
		const struct ast_node *probe = prog->kids[k];
		bool uprobe = probe->kind == AST_PROBE && probe->nkids;
		for (int i = 0; uprobe && i < probe->nkids; i++) {
			const char *p = probe->kids[i]->attach.provider;
			uprobe = p && !strcmp(p, "uprobe");
		}
		if (uprobe &&
		    (reads_unsaved_reg(probe->pred, 0) || reads_unsaved_reg(probe->body, 0)))
			return true;
	}
	return false;
}

int sema_stack_kind(const struct ast_node *probe)
{
	int kind = -2;
	for (int i = 0; probe && i < probe->nkids; i++) {
		const struct ast_attach *a = &probe->kids[i]->attach;
		int k;
		if (a->provider && !strcmp(a->provider, "uretprobe"))
			k = 2;
		else if (a->provider &&
			 (!strcmp(a->provider, "usdt") || !strcmp(a->provider, "profile") ||
			  !strcmp(a->provider, "tracepoint")))
			k = 1; /* profile: the interrupted registers, as at a usdt site; a
				* system-call tracepoint runs at a site inside libc's wrapper */
		else if (a->provider && !strcmp(a->provider, "uprobe"))
			/* under probe_inline every point is a mid-function one (resolve.c) */
			k = a->offset || (!a->func && a->address) || a->src_file ||
				    sema_probe_inline || sema_all_regs
				? 1
				: 0;
		else
			k = 3; /* BEGIN, END, ...: no target stack */
		if (kind != -2 && kind != k)
			return -1;
		kind = k;
	}
	return kind < 0 ? 3 : kind;
}

/*
 * uaddr -> 'uaddr' '(' string ')': the address of a global of the probe's
 * binary (found before sema, attach/resolve/dwarf.c), typed as bpftrace does by the
 * symbol's size: int8 *, int16 *, int32 *, else int64 *.
 */
bool sema_uaddr_call(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "uaddr"))
		return false;
	n->type = ty_none;
	const char *p = s->probe && s->probe->nkids ? s->probe->kids[0]->attach.provider : NULL;
	if (!p || (strcmp(p, "uprobe") && strcmp(p, "uretprobe") && strcmp(p, "usdt"))) {
		diag_error(s->diags, n->loc, "uaddr can not be used with \"%s\" probes", p ? p : "");
		return true;
	}
	if (n->nkids != 1) {
		diag_error(s->diags, n->loc, "uaddr() requires 1 argument (%d provided)", n->nkids);
		return true;
	}
	if (n->kids[0]->kind != AST_STR) {
		sema_expr(s, n->kids[0], USE_NONE, NULL);
		diag_error(s->diags, n->loc, "uaddr() expects a string literal (%s provided)",
			   sema_kind_name(&n->kids[0]->type));
		return true;
	}
	sema_expr(s, n->kids[0], USE_NONE, NULL);
	if (!n->sym_file)
		return true; /* attach/resolve/dwarf.c reported it */
	int size = n->sym_size == 1 || n->sym_size == 2 || n->sym_size == 4 ? (int)n->sym_size : 8;
	struct ast_type e = { TY_INT, size, true, AS_NONE };
	n->type = ast_ptr_to(s->prog, e);
	n->type.as = AS_USER;
	return true;
}

/* ustack -> 'ustack' | 'ustack' '(' [mode ','] [n] ')' */
bool sema_stack_call(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "ustack"))
		return false;
	enum ast_stack_mode mode = AST_STACK_BPFTRACE;
	int frames = SEMA_STACK_DEFAULT;
	n->type = (struct ast_type){ TY_USTACK, 8, false, AS_NONE };
	if (n->kind == AST_CALL && n->nkids > 2) {
		diag_error(s->diags, n->loc, "ustack() takes up to 2 arguments (%d provided)",
			   n->nkids);
		return true;
	}
	for (int i = 0; n->kind == AST_CALL && i < n->nkids; i++) {
		struct ast_node *k = n->kids[i];
		if (i == 0 && k->kind == AST_IDENT) {
			if (!strcmp(k->str, "bpftrace"))
				mode = AST_STACK_BPFTRACE;
			else if (!strcmp(k->str, "perf"))
				mode = AST_STACK_PERF;
			else if (!strcmp(k->str, "raw"))
				mode = AST_STACK_RAW;
			else
				diag_error(s->diags, k->loc, "Unknown stack mode: '%s'", k->str);
			continue;
		}
		int64_t v;
		sema_expr(s, k, USE_NONE, NULL); /* `$1` given a number is a literal too */
		if (!ast_int_literal(k, &v)) {
			diag_error(s->diags, n->loc, "ustack() expects a integer literal (%s provided)",
				   sema_kind_name(&k->type));
			return true;
		}
		if (v < 1 || v > SEMA_STACK_DEFAULT) {
			diag_error(s->diags, k->loc, "ustack(): the number of frames must be 1 to %d",
				   SEMA_STACK_DEFAULT);
			return true;
		}
		frames = (int)v;
	}
	n->type.count = AST_STACK(mode, frames);
	if (frames > s->info->stack_frames)
		s->info->stack_frames = frames;
	if (sema_stack_kind(s->probe) < 0)
		diag_error(s->diags, n->loc,
			   "ustack in a probe whose attach points mix function entries, returns and offsets");
	return true;
}
