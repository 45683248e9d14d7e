/*
 * cg_str.c - the string functions of probe code: strncmp, strcontains,
 * strlen, str_concat (runtime/data/rt_str.c does the work on the probe's
 * own buffers) and the name tables of signal_name and syscall_name.
 * Called from cg_call().
 */
#include "cg_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/*
 * strncmp(a, b, n): 0 when the first n characters are equal (as bpftrace:
 * 0 or 1); strcontains(hay, needle): 1 when needle occurs in hay.  Both in
 * the runtime (rt_str.c), on the probe's own buffers.
 */
static LLVMValueRef call_strfn(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef a = cg_expr(c, n->kids[0]), b = cg_expr(c, n->kids[1]);
	LLVMTypeRef fty, p[] = {c->ptr, c->i64, c->ptr, c->i64};
	LLVMValueRef args[] = {a, cg_const(c, (uint64_t)n->kids[0]->type.size), b,
			       cg_const(c, (uint64_t)n->kids[1]->type.size)};
	if (!strcmp(n->str, "strncmp")) {
		int64_t lim = 0;
		if (n->nkids > 2 && !ast_int_literal(n->kids[2], &lim))
			lim = 0;
		LLVMTypeRef p5[] = {c->ptr, c->i64, c->ptr, c->i64, c->i64};
		LLVMValueRef f = cg_rt_fn(c, "rt_strncmp", c->i64, p5, 5, &fty);
		LLVMValueRef a5[] = {args[0], args[1], args[2], args[3],
				     cg_const(c, (uint64_t)lim)};
		return LLVMBuildCall2(c->b, fty, f, a5, 5, "strncmp");
	}
	LLVMValueRef f = cg_rt_fn(c, "rt_strcontains", c->i64, p, 4, &fty);
	return LLVMBuildCall2(c->b, fty, f, args, 4, "strcontains");
}

/*
 * signal_name(sig), syscall_name(nr) (bpftrace 0.26): the row of a
 * constant table of 64-byte names the argument, as an int, selects; a
 * number past the table or without a name selects its last row, bpftrace's
 * text for those (its stdlib's tables: strsignal(3)'s names of signals 0
 * to 64, "N/A" after them; x86-64's system calls, "Unknown syscall").
 */
static LLVMValueRef call_name_table(struct cg *c, const struct ast_node *n)
{
	bool sig = !strcmp(n->str, "signal_name");
	const char *unknown = sig ? "N/A" : "Unknown syscall";
	int count = sig ? 65 : c->facts->nsys_names;
	/* one table per module, whatever the number of calls (syscall_name's
	 * is 64 KiB of the code image) */
	LLVMValueRef g = LLVMGetNamedGlobal(c->mod, n->str);
	if (!g) {
		char **rows = xcalloc((size_t)count + 1, sizeof(*rows));
		for (int i = 0; i < count; i++) {
			const char *name = sig ? strsignal(i) : c->facts->sys_names[i];
			rows[i] = xstrdup(name && *name ? name : unknown);
		}
		rows[count] = xstrdup(unknown);
		g = cg_string_table(c, rows, count + 1, 64, n->str);
		for (int i = 0; i <= count; i++)
			free(rows[i]);
		free(rows);
	}
	LLVMValueRef v = cg_expr(c, n->kids[0]);
	v = LLVMBuildTrunc(c->b, v, c->i32, "");
	v = LLVMBuildSExt(c->b, v, c->i64, "");
	LLVMValueRef in = LLVMBuildICmp(c->b, LLVMIntULT, v, cg_const(c, (uint64_t)count), "");
	LLVMValueRef idx[] = {cg_const(c, 0),
			      LLVMBuildSelect(c->b, in, v, cg_const(c, (uint64_t)count), "")};
	return LLVMBuildGEP2(c->b, LLVMGlobalGetValueType(g), g, idx, 2, n->str);
}

/* strlen(s): the runtime counts to the NUL within the buffer (rt_str.c) */
static LLVMValueRef call_strlen(struct cg *c, const struct ast_node *n)
{
	LLVMTypeRef fty, p[] = {c->ptr, c->i64};
	LLVMValueRef args[] = {cg_expr(c, n->kids[0]),
			       cg_const(c, (uint64_t)n->kids[0]->type.size)};
	LLVMValueRef f = cg_rt_fn(c, "rt_strlen", c->i64, p, 2, &fty);
	return LLVMBuildCall2(c->b, fty, f, args, 2, "strlen");
}

/* str_concat(a, b): a buffer of the result's size, filled by the runtime */
static LLVMValueRef call_strconcat(struct cg *c, const struct ast_node *n)
{
	uint64_t size = (uint64_t)n->type.size;
	LLVMValueRef dst = cg_alloca(c, LLVMArrayType(c->i8, (unsigned)size), "concat");
	LLVMTypeRef fty, p[] = {c->ptr, c->i64, c->ptr, c->i64, c->ptr, c->i64};
	LLVMValueRef args[] = {dst,
			       cg_const(c, size),
			       cg_expr(c, n->kids[0]),
			       cg_const(c, (uint64_t)n->kids[0]->type.size),
			       cg_expr(c, n->kids[1]),
			       cg_const(c, (uint64_t)n->kids[1]->type.size)};
	LLVMValueRef f = cg_rt_fn(c, "rt_strconcat", c->void_t, p, 6, &fty);
	LLVMBuildCall2(c->b, fty, f, args, 6, "");
	return dst;
}

LLVMValueRef cg_str_call(struct cg *c, const struct ast_node *n)
{
	if (!strcmp(n->str, "strlen"))
		return call_strlen(c, n);
	if (!strcmp(n->str, "signal_name") || !strcmp(n->str, "syscall_name"))
		return call_name_table(c, n);
	if (!strcmp(n->str, "str_concat"))
		return call_strconcat(c, n);
	if (!strcmp(n->str, "strncmp") || !strcmp(n->str, "strcontains"))
		return call_strfn(c, n);
	return NULL;
}
