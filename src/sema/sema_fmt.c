/*
 * sema_fmt.c - semantic analysis of the value-formatting functions: buf,
 * strftime, join, strerror, ntop, pton, macaddr, cgroup_path.  Called from sema_call()
 * (sema_call.c) for those names; the values are bytes probe code fills
 * (ast.h, TY_BUF .. TY_CGPATH) that ubt turns into text when it prints
 * them (output/values.c), as bpftrace 0.17 does in user space.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"
#include "../util/util.h"

/* Messages are bpftrace 0.17's, typos included. */

/* Values printed as text by %s (bpftrace 0.17 treats them as strings). */
bool sema_fmt_string_like(enum ast_type_kind k)
{
	return k == TY_TSTAMP || k == TY_INET || k == TY_STRERROR || k == TY_USERNAME ||
	       k == TY_MACADDR || k == TY_CGPATH;
}

/* bpftrace's check_varargs(): between lo and hi arguments */
bool sema_check_varargs(struct sema *s, struct ast_node *n, int lo, int hi)
{
	if (n->nkids < lo) {
		if (lo == 1)
			diag_error(s->diags, n->loc, "%s() requires at least one argument (%d provided)",
				   n->str, n->nkids);
		else
			diag_error(s->diags, n->loc, "%s() requires at least %d arguments (%d provided)",
				   n->str, lo, n->nkids);
		return false;
	}
	if (n->nkids > hi) {
		if (hi == 1)
			diag_error(s->diags, n->loc, "%s() takes up to one argument (%d provided)",
				   n->str, n->nkids);
		else
			diag_error(s->diags, n->loc, "%s() takes up to %d arguments (%d provided)",
				   n->str, hi, n->nkids);
		return false;
	}
	return true;
}

/* bpftrace's check_arg(): argument i is an integer (or a string literal) */
bool sema_check_arg(struct sema *s, struct ast_node *n, int i, enum ast_type_kind want,
		    bool literal)
{
	const struct ast_node *a = n->kids[i];
	const char *wname = want == TY_STR ? "string" : "integer";
	if (literal && (a->kind != (want == TY_STR ? AST_STR : AST_INT) || a->type.kind != want)) {
		int64_t v;
		if (want == TY_INT && ast_int_literal(a, &v))
			return true;
		diag_error(s->diags, n->loc, "%s() expects a %s literal (%s provided)", n->str, wname,
			   sema_kind_name(&a->type));
		return false;
	}
	if (s->final && a->type.kind != want) {
		diag_error(s->diags, n->loc, "%s() only supports %s arguments (%s provided)", n->str,
			   wname, sema_kind_name(&a->type));
		return false;
	}
	return true;
}

/* buf(p, n) | buf(array): 1 + min(n, BPFTRACE_STRLEN) bytes */
static void fmt_buf(struct sema *s, struct ast_node *n)
{
	int max = sema_strlen(), size = max;
	n->type = (struct ast_type){ TY_BUF, 1 + max, false, AS_KERNEL };
	if (!sema_check_varargs(s, n, 1, 2))
		return;
	const struct ast_type *t = &n->kids[0]->type;
	if (s->final && t->kind != TY_INT && t->kind != TY_STR && t->kind != TY_PTR &&
	    t->kind != TY_ARRAY)
		diag_error(s->diags, n->loc,
			   "buf() expects an integer, string, or array argument but saw %s",
			   sema_kind_name(t));
	if (n->nkids == 1) {
		if (t->kind == TY_ARRAY)
			size = t->size;
		else if (s->final)
			diag_error(s->diags, n->loc,
				   "buf() expects a length argument for non-array type %s",
				   sema_kind_name(t));
	} else {
		if (s->final)
			sema_check_arg(s, n, 1, TY_INT, false);
		int64_t v;
		if (ast_int_literal(n->kids[1], &v)) {
			if (v < 0)
				diag_error(s->diags, n->loc, "buf cannot use negative length (%lld)",
					   (long long)v);
			size = v < 0 ? 0 : v > 0x7fffffff ? 0x7fffffff : (int)v;
		}
	}
	if (size > max) {
		if (s->final)
			diag_warning(s->diags, n->loc,
				     "buf() length is too long and will be shortened to %d bytes (see BPFTRACE_STRLEN)",
				     max);
		size = max;
	}
	n->type.size = 1 + size;
}

/* ntop([af,] addr): addr an integer (IPv4) or 4 or 16 bytes */
static void fmt_ntop(struct sema *s, struct ast_node *n)
{
	n->type = (struct ast_type){ TY_INET, 24, false, AS_NONE };
	if (!sema_check_varargs(s, n, 1, 2))
		return;
	const struct ast_type *t = &n->kids[n->nkids - 1]->type;
	if (n->nkids == 2)
		sema_check_arg(s, n, 0, TY_INT, false);
	if (!s->final)
		return;
	if (t->kind != TY_INT && t->kind != TY_STR && t->kind != TY_ARRAY)
		diag_error(s->diags, n->loc, "ntop() expects an integer or array argument, got %s",
			   sema_kind_name(t));
	if ((t->kind == TY_ARRAY || t->kind == TY_STR) && t->size != 4 && t->size != 16)
		diag_error(s->diags, n->loc, "ntop() argument must be 4 or 16 bytes in size");
}

/* pton("addr"): the address as uint8[4] or uint8[16], known at compile time */
static void fmt_pton(struct sema *s, struct ast_node *n)
{
	n->type = ty_none;
	if (!sema_check_nargs(s, n, 1))
		return;
	const struct ast_node *a = n->kids[0];
	if (a->kind != AST_STR) {
		diag_error(s->diags, n->loc, "pton() expects a string literal (%s provided)",
			   sema_kind_name(&a->type));
		return;
	}
	int af = strchr(a->str, '.') ? AF_INET : strchr(a->str, ':') ? AF_INET6 : 0;
	unsigned char dst[16];
	if (!af) {
		diag_error(s->diags, n->loc,
			   "pton() expects an string argument of an IPv4/IPv6 address, got %s", a->str);
		return;
	}
	if (inet_pton(af, a->str, dst) != 1) {
		diag_error(s->diags, n->loc, "pton() expects a valid IPv4/IPv6 address, got %s",
			   a->str);
		return;
	}
	struct ast_type *e = ast_arena_alloc(s->prog, sizeof(*e));
	*e = (struct ast_type){ TY_INT, 1, false, AS_NONE };
	int count = af == AF_INET ? 4 : 16;
	n->type = (struct ast_type){ .kind = TY_ARRAY, .size = count, .elem = e, .count = count,
				     .as = AS_KERNEL };
}

/* macaddr(p): six bytes from a pointer, an integer address or a char[6] */
static void fmt_macaddr(struct sema *s, struct ast_node *n)
{
	n->type = (struct ast_type){ TY_MACADDR, 6, false, AS_NONE };
	if (!sema_check_nargs(s, n, 1) || !s->final)
		return;
	const struct ast_node *a = n->kids[0];
	const struct ast_type *t = &a->type;
	if (t->kind != TY_INT && t->kind != TY_ARRAY && t->kind != TY_STR && t->kind != TY_PTR)
		diag_error(s->diags, n->loc,
			   "macaddr() only supports array or pointer arguments (%s provided)",
			   sema_kind_name(t));
	if ((t->kind == TY_ARRAY || t->kind == TY_STR) && t->size != 6)
		diag_error(s->diags, n->loc, "macaddr() argument must be 6 bytes in size");
	if (t->kind == TY_STR && a->kind == AST_STR)
		diag_error(s->diags, n->loc, "macaddr() does not support literal string arguments");
}

/* join(char **argv [, "delim"]): prints the joined strings as a line of its own */
static void fmt_join(struct sema *s, struct ast_node *n, enum call_use use,
		     const struct ast_node *user)
{
	sema_check_use(s, n, use, user, false);
	n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
	if (!sema_check_varargs(s, n, 1, 2) || !s->final)
		return;
	const struct ast_type *t = &n->kids[0]->type;
	/* sic: bpftrace 0.17 leaves the function's name out */
	if (t->kind != TY_INT && t->kind != TY_PTR)
		diag_error(s->diags, n->loc, "() only supports int or pointer arguments (%s provided)",
			   sema_kind_name(t));
	if (n->nkids == 2 && !sema_check_arg(s, n, 1, TY_STR, true))
		return;
	sema_register_fmt(s, n, n->nkids == 2 ? n->kids[1]->str : " ",
		     n->nkids == 2 ? n->kids[1]->slen : 1, n->nkids);
}

/*
 * strftime(fmt, t): t counts from boot (nsecs), or, for nsecs(tai) and
 * nsecs(sw_tai), from the epoch: the format is registered with a leading
 * \x01 (OUT_FMT_EPOCH, output/values.c) that tells the printer.
 * nsecs(monotonic) has no wall-clock time: refused as bpftrace 0.23 does.
 */
static void strftime_fmt(struct sema *s, struct ast_node *n)
{
	const struct ast_node *t = n->kids[1];
	bool nsecs = t->kind == AST_BUILTIN && !strcmp(t->str, "nsecs");
	if (nsecs && t->uval == AST_CLOCK_MONOTONIC) {
		diag_error(s->diags, n->loc, "strftime() can not take a monotonic timestamp");
		return;
	}
	if (!nsecs || (t->uval != AST_CLOCK_TAI && t->uval != AST_CLOCK_SW_TAI)) {
		sema_register_fmt(s, n, n->kids[0]->str, n->kids[0]->slen, n->nkids);
		return;
	}
	char *fmt = xasprintf("\x01%.*s", (int)n->kids[0]->slen, n->kids[0]->str);
	sema_register_fmt(s, n, fmt, n->kids[0]->slen + 1, n->nkids);
	free(fmt);
}

bool sema_fmt_call(struct sema *s, struct ast_node *n, enum call_use use,
			  const struct ast_node *user)
{
	const char *f = n->str;
	if (!strcmp(f, "buf")) {
		fmt_buf(s, n);
	} else if (!strcmp(f, "strftime")) {
		n->type = (struct ast_type){ TY_TSTAMP, 16, false, AS_NONE };
		if (sema_check_varargs(s, n, 2, 2) && s->final && sema_check_arg(s, n, 0, TY_STR, true) &&
		    sema_check_arg(s, n, 1, TY_INT, false))
			strftime_fmt(s, n);
	} else if (!strcmp(f, "cgroup_path")) {
		/* cgroup_path(id[, "filter"]): the filter names which hierarchies
		 * (bpftrace's wildcards; all of them without one) */
		n->type = (struct ast_type){ TY_CGPATH, 16, false, AS_NONE };
		if (sema_check_varargs(s, n, 1, 2) && s->final && sema_check_arg(s, n, 0, TY_INT, false) &&
		    (n->nkids < 2 || sema_check_arg(s, n, 1, TY_STR, true)))
			sema_register_fmt(s, n, n->nkids == 2 ? n->kids[1]->str : "*",
					  n->nkids == 2 ? n->kids[1]->slen : 1, n->nkids);
	} else if (!strcmp(f, "strerror")) {
		n->type = (struct ast_type){ TY_STRERROR, 8, false, AS_NONE };
		if (sema_check_nargs(s, n, 1))
			sema_check_arg(s, n, 0, TY_INT, false);
	} else if (!strcmp(f, "ntop")) {
		fmt_ntop(s, n);
	} else if (!strcmp(f, "pton")) {
		fmt_pton(s, n);
	} else if (!strcmp(f, "macaddr")) {
		fmt_macaddr(s, n);
	} else if (!strcmp(f, "join")) {
		fmt_join(s, n, use, user);
	} else {
		return false;
	}
	return true;
}
