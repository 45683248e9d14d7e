/*
 * sema_call.c - semantic analysis of builtins (pid, tid, argN, ...) and
 * function calls (count, sum, printf, exit, ...): which exist, where they
 * may be used, their argument counts and types, and the types of their
 * values.  printf formats are checked here and recorded in sema_info for
 * the output stage.  Called from sema.c's expression walk.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"
#include "../util/util.h"

/* ---- builtins ----------------------------------------------------------- */

static bool probe_all(const struct ast_node *probe, const char *provider)
{
	for (int i = 0; i < probe->nkids; i++) {
		const char *p = probe->kids[i]->attach.provider;
		if (!p || strcmp(p, provider))
			return false;
	}
	return true;
}

#define SEMA_USDT_MAX_ARGS 12 /* CG_USDT_MAX_ARGS in codegen.h */

/*
 * usdt argN: arg0 .. arg11 (a USDT probe has up to 12 arguments; bpftrace
 * 0.17 refuses arg6 and up even there, docs/compat.md).  Whether the probe
 * really has argument N is known only once its notes are read: attach
 * (usdt.c) reports it, naming the probe.  Returns true if n was handled.
 */
static bool sema_usdt_arg(struct sema *s, struct ast_node *n)
{
	const char *name = n->str;
	if (strncmp(name, "arg", 3) || !probe_all(s->probe, "usdt"))
		return false;
	char *end;
	long num = strtol(name + 3, &end, 10);
	if (*end || end == name + 3 || name[3] == '+' || name[3] == '-' ||
	    (name[3] == '0' && name[4]))
		return false;
	n->builtin_arg = (int)num;
	if (num >= SEMA_USDT_MAX_ARGS)
		diag_error(s->diags, n->loc, "usdt probes have at most %d arguments: %s",
			   SEMA_USDT_MAX_ARGS, name);
	n->type = ty_uint64; /* as bpftrace: the value is sign-extended per the note */
	n->type.as = AS_USER;
	return true;
}

/* BPFTRACE_STRLEN: the size of str() results, 64 by default (and at most 200, as bpftrace) */
int sema_strlen(void)
{
	const char *e = getenv("BPFTRACE_STRLEN");
	int v = e && *e ? atoi(e) : 64;
	return v < 1 ? 64 : v > 200 ? 200 : v;
}

/* Every attach point is a uprobe at a function's entry: arguments past the
 * sixth are on the stack above the return address. */
static bool sema_stack_args(const struct ast_node *probe)
{
	for (int i = 0; i < probe->nkids; i++) {
		const struct ast_attach *a = &probe->kids[i]->attach;
		if (!a->provider || strcmp(a->provider, "uprobe") || a->offset || a->address)
			return false;
	}
	return probe->nkids > 0;
}

/*
 * sarg0 .. sarg9: the N-th word of stack arguments, at sp + 8 * (N + 1)
 * (x86-64: sp points at the return address at a function's entry), as in
 * bpftrace, in uprobes only; at an offset or address sp is the
 * function's, which bpftrace warns about.
 */
static void sema_sarg(struct sema *s, struct ast_node *n)
{
	n->builtin_arg = n->str[4] - '0';
	n->type = ty_uint64;
	n->type.as = AS_USER;
	for (int i = 0; i < s->probe->nkids; i++) {
		const struct ast_attach *a = &s->probe->kids[i]->attach;
		if (!a->provider || strcmp(a->provider, "uprobe"))
			diag_error(s->diags, n->loc,
				   "The %s builtin can only be used with 'kprobes' and 'uprobes' probes",
				   n->str);
		else if (s->final && (a->offset || a->address)) /* sic, as bpftrace 0.17 */
			diag_warning(s->diags, n->loc,
				     "Using an address offset with the sargX built-in canlead to unexpected behavior ");
	}
}

/* builtin -> pid | tid | arg0 .. arg9 (others are known but refused) */
void sema_builtin(struct sema *s, struct ast_node *n)
{
	const char *name = n->str;
	n->type = ty_none;
	if (sema_usdt_arg(s, n))
		return;
	if (sema_stack_call(s, n)) /* ustack */
		return;
	if (sema_args_builtin(s, n)) /* args (sema_args.c) */
		return;
	if (!strcmp(name, "pid") || !strcmp(name, "tid")) {
		n->type = ty_uint64;
		return;
	}
	/* retval, nsecs, and func in a uretprobe (the callee's address) */
	if (sema_builtin_ret(s, n))
		return;
	static const char *const u64_builtins[] = {
		"nsecs", "elapsed", "uid", "gid", "cpu", "numaid", "cpid", "rand", "cgroup",
	};
	for (size_t i = 0; i < ARRAY_SIZE(u64_builtins); i++)
		if (!strcmp(name, u64_builtins[i])) {
			n->type = ty_uint64;
			return;
		}
	if (!strcmp(name, "username")) {
		/* the uid; ubt prints its name (output/values.c) as bpftrace does */
		n->type = (struct ast_type){ TY_USERNAME, 8, false, AS_NONE };
		return;
	}
	if (!strcmp(name, "kstack")) {
		/* a uprobe has no kernel stack: bpftrace prints it empty */
		n->type = ty_str(1);
		return;
	}
	if (!strcmp(name, "comm")) {
		n->type = ty_str(16);
		n->type.as = AS_KERNEL;
		return;
	}
	if (!strcmp(name, "probe") || !strcmp(name, "func")) {
		/* bpftrace prints the whole name (its `probe` is a probe id):
		 * room for the longest one at this probe's sites */
		int len = s->probe->probe_name_len + 1;
		n->type = ty_str(!strcmp(name, "probe") && len > sema_strlen() ? len : sema_strlen());
		return;
	}
	if (!strncmp(name, "sarg", 4) && name[4] >= '0' && name[4] <= '9' && !name[5]) {
		sema_sarg(s, n);
		return;
	}
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '9' && !name[4]) {
		int num = name[3] - '0';
		n->builtin_arg = num;
		if (sema_probe_inline && probe_all(s->probe, "uprobe")) /* bpftrace 0.23's text */
			diag_error(s->diags, n->loc,
				   "The %s builtin can only be used when the probe_inline config "
				   "is disabled.",
				   name);
		if (!probe_all(s->probe, "uprobe"))
			diag_error(s->diags, n->loc,
				   "The %s builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes",
				   name);
		/* past arg5, a uprobe at a function entry reads the stack (cg_call.c);
		 * elsewhere bpftrace's second error follows its first */
		if (num > 5 && !sema_stack_args(s->probe))
			diag_error(s->diags, n->loc, "x86_64 doesn't support %s", name);
		n->type = ty_uint64;
		const char *first = s->probe->nkids ? s->probe->kids[0]->attach.provider : NULL;
		if (first && !strcmp(first, "uprobe"))
			n->type.as = AS_USER;
		return;
	}
	diag_error(s->diags, n->loc, "the %s builtin is not supported yet", name);
}

/* ---- return probes: retval, func, nsecs (owned by the return-probe work) ---- */

/* retval | func | nsecs; returns false for any other name */
bool sema_builtin_ret(struct sema *s, struct ast_node *n)
{
	const char *name = n->str;
	if (!strcmp(name, "nsecs")) {
		n->type = ty_uint64;
		return true;
	}
	if (!strcmp(name, "retval")) {
		if (!probe_all(s->probe, "uretprobe"))
			diag_error(s->diags, n->loc,
				   "The retval builtin can only be used with 'kretprobe' and 'uretprobe' and 'kfunc' probes");
		n->type = ty_uint64;
		return true;
	}
	if (!strcmp(name, "func")) {
		/* the callee's address, printed as its symbol (sema_sym_builtin) */
		if (!probe_all(s->probe, "uretprobe"))
			return sema_sym_builtin(s, n);
		n->type = (struct ast_type){ TY_USYM, 8, false, AS_NONE };
		return true;
	}
	return false;
}

/* ---- calls -------------------------------------------------------------- */

static bool sema_call_more(struct sema *s, struct ast_node *n, enum call_use use,
			   const struct ast_node *user);
static bool sema_reg_call(struct sema *s, struct ast_node *n);

/* bpftrace's function names; only some are implemented in ubt so far. */
/* clang-format off */
static const char *const known_funcs[] = {
    "avg",         "buf",      "cat",         "cgroupid", "clear",    "count",      "delete",
    "exit",        "hist",     "join",        "kaddr",    "kptr",     "ksym",       "lhist",
    "macaddr",     "max",      "min",         "ntop",     "override", "print",      "printf",
    "cgroup_path", "reg",      "signal",      "sizeof",   "stats",    "str",        "strerror",
    "strftime",    "strncmp",  "strcontains", "sum",      "system",   "time",       "uaddr",
    "uptr",        "usym",     "zero",        "path",     "unwatch",  "bswap",      "skboutput",
    "pton",        "debugf",   "kstack",      "ustack",   "has_key",  "len",
    /* newer bpftrace's */
    "errorf",      "warnf",    "offsetof",    "getopt",   "find",     "strlen",     "str_concat",
    "signal_name", "syscall_name",
};
/* clang-format on */

static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 32 || lb > 32)
		return 99;
	int d[33][33];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* The range of a call's name: "cuont" in "cuont(1)". */
static struct src_loc name_loc(const struct ast_node *n)
{
	return n->pred_loc.line ? n->pred_loc : n->loc;
}

bool sema_check_use(struct sema *s, struct ast_node *n, enum call_use use,
		    const struct ast_node *user, bool want_map)
{
	if (want_map && use != USE_MAP) {
		diag_error(s->diags, n->loc, "%s() should be directly assigned to a map", n->str);
		return false;
	}
	if (!want_map && use != USE_NONE) {
		diag_error(s->diags, n->loc,
			   "%s() should not be used in an assignment or as a map key", n->str);
		return false;
	}
	return true;
}

bool sema_check_nargs(struct sema *s, struct ast_node *n, int want)
{
	if (n->nkids == want)
		return true;
	if (want == 0)
		diag_error(s->diags, n->loc, "%s() requires no arguments (%d provided)", n->str,
			   n->nkids);
	else if (want == 1)
		diag_error(s->diags, n->loc, "%s() requires one argument (%d provided)", n->str,
			   n->nkids);
	else
		diag_error(s->diags, n->loc, "%s() requires %d arguments (%d provided)", n->str,
			   want, n->nkids);
	return false;
}

/*
 * printf conversions: %[-][width][.prec] then a length (hh h l ll j z t)
 * and one of d u o x X p, or c, s, r, rx, rh.  Returns the conversion's
 * length, 0 if this '%' starts none (it is then plain text, as in
 * bpftrace); *token gets the part after the width ("ld").
 */
static size_t fmt_spec(const char *p, const char **token, size_t *token_len, enum ast_type_kind *want,
		       bool *is_buffer)
{
	const char *q = p + 1;
	if (*q == '-')
		q++;
	while (*q >= '0' && *q <= '9')
		q++;
	if (*q == '.' && q[1] >= '0' && q[1] <= '9') {
		q++;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	*token = q;
	*is_buffer = false;
	if (*q == 's' || *q == 'c') {
		*want = *q == 's' ? TY_STR : TY_INT;
		*token_len = 1;
		return (size_t)(q + 1 - p);
	}
	if (*q == 'r') {
		*want = TY_NONE;
		*is_buffer = true;
		*token_len = (q[1] == 'x' || q[1] == 'h') ? 2 : 1;
		return (size_t)(q + *token_len - p);
	}
	const char *lens[] = { "hh", "ll", "h", "l", "j", "z", "t", "" };
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t ll = strlen(lens[i]);
		if (strncmp(q, lens[i], ll) || !q[ll] || !strchr("duoxXp", q[ll]))
			continue;
		*want = TY_INT;
		*token_len = ll + 1;
		return (size_t)(q + ll + 1 - p);
	}
	return 0;
}


static void check_printf_format(struct sema *s, struct ast_node *n)
{
	const struct ast_node *fmt = n->kids[0];
	const char *what = n->str; /* printf, system, cat: bpftrace names the function */
	int nargs = n->nkids - 1, nspec = 0;
	const char *f = fmt->str, *end = fmt->str + fmt->slen;
	/* count first: bpftrace reports the count before any type */
	for (const char *p = f; p < end; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') { /* "%%" is a literal percent sign in ubt */
			p++;
			continue;
		}
		const char *tok;
		size_t tl;
		enum ast_type_kind want;
		bool isbuf;
		size_t l = fmt_spec(p, &tok, &tl, &want, &isbuf);
		if (l) {
			nspec++;
			p += l - 1;
		}
	}
	if (nargs < nspec) {
		diag_error(s->diags, n->loc,
			   "%s: Not enough arguments for format string (%d supplied, %d expected)",
			   what, nargs, nspec);
		return;
	}
	if (nargs > nspec) {
		diag_error(s->diags, n->loc,
			   "%s: Too many arguments for format string (%d supplied, %d expected)",
			   what, nargs, nspec);
		return;
	}
	int i = 1;
	for (const char *p = f; p < end; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			p++;
			continue;
		}
		const char *tok;
		size_t tl;
		enum ast_type_kind want;
		bool isbuf;
		size_t l = fmt_spec(p, &tok, &tl, &want, &isbuf);
		if (!l)
			continue;
		const struct ast_type *at = &n->kids[i++]->type;
		if (isbuf && at->kind != TY_BUF) {
			diag_error(s->diags, n->loc,
				   "%s: %%%.*s specifier expects a value of type buffer (%s supplied)",
				   what, (int)tl, tok, sema_kind_name(at));
			return;
		}
		if (isbuf) {
			p += l - 1;
			continue;
		}
		/* %s of a tuple prints it as print() does (newer bpftrace; 0.17 refuses);
		 * a pointer is an integer to every integer conversion, %p included */
		if (at->kind != want && !(at->kind == TY_PTR && want == TY_INT) &&
		    !(at->kind == TY_INT && at->enum_tag && want == TY_STR) &&
		    !((at->kind == TY_USYM || at->kind == TY_USTACK || at->kind == TY_TUPLE ||
		       sema_fmt_string_like(at->kind)) &&
		      want == TY_STR)) {
			diag_error(s->diags, n->loc,
				   "%s: %%%.*s specifier expects a value of type %s (%s supplied)",
				   what, (int)tl, tok, want == TY_STR ? "string" : "integer",
				   sema_kind_name(at));
			return;
		}
		p += l - 1;
	}
	if (nargs > (int)ARRAY_SIZE(((struct sema_printf *)0)->args)) {
		diag_error(s->diags, n->loc, "printf: more than %zu arguments are not supported yet",
			   ARRAY_SIZE(((struct sema_printf *)0)->args));
		return;
	}
	sema_register_fmt(s, n, fmt->str, fmt->slen, 1);
}

/*
 * Records call n for the output stage: its format (printf, system, cat,
 * time) and the types of its arguments kids[first..].  Probe code sends
 * the id with the values (runtime/abi.h).
 */
void sema_register_fmt(struct sema *s, struct ast_node *n, const char *fmt, size_t len,
		       int first)
{
	int nargs = n->nkids - first;
	struct sema_printf *pf = xcalloc(1, sizeof(*pf));
	pf->id = s->info->nprintfs;
	pf->fmt = xstrndup(fmt, len);
	pf->nargs = nargs < 0 ? 0 : nargs;
	for (int k = 0; k < pf->nargs && k < (int)ARRAY_SIZE(pf->args); k++)
		pf->args[k] = n->kids[k + first]->type;
	pf->call = n;
	s->info->printfs = xrealloc(s->info->printfs,
				    (s->info->nprintfs + 1) * sizeof(*s->info->printfs));
	s->info->printfs[s->info->nprintfs++] = pf;
}

/* Functions whose first argument names a whole map (`print(@m)`): the
 * map is looked up by name instead of being checked as an expression, so
 * a keyed map is not an "Argument mismatch" for lacking its keys. */
static bool takes_whole_map(const char *f)
{
	return !strcmp(f, "print") || !strcmp(f, "clear") || !strcmp(f, "zero") ||
	       !strcmp(f, "len");
}

static struct sema_map *map_by_name(struct sema *s, const char *name)
{
	for (int i = 0; i < s->info->nmaps; i++)
		if (!strcmp(s->info->maps[i]->name, name))
			return s->info->maps[i];
	return NULL;
}

/* map argument of print/clear/zero/len: a bare @name */
static void whole_map_arg(struct sema *s, struct ast_node *n)
{
	struct ast_node *m = n->kids[0];
	if (m->kind != AST_MAP) {
		if (strcmp(n->str, "print"))
			diag_error(s->diags, n->loc, "%s() expects a map to be provided", n->str);
		return;
	}
	if (m->nkids) {
		diag_error(s->diags, n->loc, "The map passed to %s() should not be indexed by a key",
			   n->str);
		return;
	}
	m->map = map_by_name(s, m->str);
	m->type = m->map ? m->map->value : ty_none;
	if (s->final && (!m->map || m->map->value.kind == TY_NONE))
		diag_error(s->diags, m->loc, "Undefined map: %s", m->str);
}


/* avg(x), min(x), max(x), stats(x), hist(x): one integer argument */
static void check_agg1(struct sema *s, struct ast_node *n, enum call_use use,
		       const struct ast_node *user, enum ast_type_kind kind)
{
	bool sign = false;
	sema_check_use(s, n, use, user, true);
	if (sema_check_nargs(s, n, 1)) {
		const struct ast_type *at = &n->kids[0]->type;
		if (s->final && at->kind != TY_INT)
			diag_error(s->diags, n->loc, "%s() only supports integer arguments (%s provided)",
				   n->str, sema_kind_name(at));
		sign = at->is_signed;
	}
	n->type = (struct ast_type){ kind, 8, sign, AS_NONE };
}

/*
 * hist(v [, k]) (k: bpftrace 0.21): k, an integer literal 0..5, splits each
 * power of 2 into 2^k buckets; one k per map.  bpftrace 0.23's messages.
 */
static void check_hist(struct sema *s, struct ast_node *n, enum call_use use,
		       const struct ast_node *user)
{
	int64_t k = 0;
	if (n->nkids == 2) {
		const struct ast_node *a = n->kids[1];
		char t[64];
		if (!ast_int_literal(a, &k)) {
			diag_error(s->diags, n->loc, "hist() expects a int literal (%s provided)",
				   a->type.kind == TY_INT ? "int" : sema_tn(&a->type, t));
			k = 0;
		} else if (k < 0 || k > 5) {
			diag_error(s->diags, n->loc, "hist: bits %lld must be 0..5", (long long)k);
			k = 0;
		}
		n->nkids = 1; /* check_agg1 sees hist(v); the node keeps kids[1] */
		check_agg1(s, n, use, user, TY_HIST);
		n->nkids = 2;
	} else {
		check_agg1(s, n, use, user, TY_HIST);
	}
	if (use != USE_MAP || !user || user->kind != AST_MAP)
		return;
	struct sema_map *m = map_by_name(s, user->str);
	if (!m)
		return;
	if (m->hist_bits_pass == s->pass && m->hist_bits != (int)k && s->final)
		diag_error(s->diags, n->loc, "Different bits in a single hist, had %d now %d",
			   m->hist_bits, (int)k);
	m->hist_bits = (int)k;
	m->hist_bits_pass = s->pass;
}

/*
 * lhist(value, min, max, step): min, max and step are literals (`$1`
 * given a number and #define'd integers too); bpftrace 0.17's checks and
 * messages, in its order.
 */
static void check_lhist(struct sema *s, struct ast_node *n, enum call_use use,
			const struct ast_node *user)
{
	sema_check_use(s, n, use, user, true);
	n->type = (struct ast_type){ TY_LHIST, 8, false, AS_NONE };
	if (!sema_check_nargs(s, n, 4))
		return;
	sema_check_arg(s, n, 0, TY_INT, false);
	for (int i = 1; i < 4; i++)
		sema_check_arg(s, n, i, TY_INT, true);
	if (!s->final)
		return;
	int64_t mn, mx, st;
	static const char *const what[] = { "min", "max", "step" };
	int64_t *val[] = { &mn, &mx, &st };
	for (int i = 0; i < 3; i++)
		if (!ast_int_literal(n->kids[i + 1], val[i])) {
			diag_error(s->diags, n->loc, "lhist: invalid %s value", what[i]);
			return;
		}
	if (st <= 0)
		diag_error(s->diags, n->loc, "lhist() step must be >= 1 (%lld provided)", (long long)st);
	else if ((mx - mn) / st > 1000)
		diag_error(s->diags, n->loc,
			   "lhist() too many buckets, must be <= 1000 (would need %lld)",
			   (long long)((mx - mn) / st));
	if (mn < 0)
		diag_error(s->diags, n->loc, "lhist() min must be non-negative (provided min %lld)",
			   (long long)mn);
	if (mn > mx)
		diag_error(s->diags, n->loc,
			   "lhist() min must be less than max (provided min %lld and max %lld)",
			   (long long)mn, (long long)mx);
	if (mx - mn < st)
		diag_error(s->diags, n->loc,
			   "lhist() step is too large for the given range (provided step %lld for range %lld)",
			   (long long)st, (long long)(mx - mn));
	if (use == USE_MAP && user && user->kind == AST_MAP) {
		struct sema_map *m = map_by_name(s, user->str);
		if (m) {
			m->lhist_min = mn;
			m->lhist_max = mx;
			m->lhist_step = st > 0 ? st : 1;
		}
	}
}

/* print(@m [, top [, div]]) | print(value) */
static void check_print(struct sema *s, struct ast_node *n, enum call_use use,
			const struct ast_node *user)
{
	sema_check_use(s, n, use, user, false);
	n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
	if (n->nkids < 1 || n->nkids > 3) {
		if (n->nkids > 3)
			diag_error(s->diags, n->loc, "print() takes up to 3 arguments (%d provided)",
				   n->nkids);
		else
			diag_error(s->diags, n->loc, "print() requires at least one argument (0 provided)");
		return;
	}
	const struct ast_node *m = n->kids[0];
	if (m->kind == AST_MAP && m->nkids && n->nkids == 1 &&
	    (m->type.kind == TY_HIST || m->type.kind == TY_LHIST || m->type.kind == TY_STATS)) {
		/* print(@m[k]) of a value (bpftrace 0.21) is below */
		diag_error(s->diags, n->loc,
			   "Map type %s_t cannot print the value of individual keys. You must "
			   "print the whole map.",
			   m->type.kind == TY_HIST    ? "hist"
			   : m->type.kind == TY_LHIST ? "lhist"
						      : "stats");
		return;
	}
	if (m->kind == AST_MAP && (!m->nkids || n->nkids > 1)) {
		whole_map_arg(s, n);
		for (int i = 1; i < n->nkids; i++) {
			int64_t v;
			if (!ast_int_literal(n->kids[i], &v) || v < 0)
				diag_error(s->diags, n->loc,
					   "print() expects a non-negative integer literal (argument %d)",
					   i + 1);
		}
		if (s->final && n->nkids > 1 && n->kids[0]->type.kind == TY_STATS)
			diag_warning(s->diags, n->loc,
				     "print()'s top and div arguments are ignored when used on stats() maps.");
		return;
	}
	if (n->nkids > 1) {
		diag_error(s->diags, n->loc, "Non-map print() only takes 1 argument, %d found",
			   n->nkids);
		return;
	}
	sema_newer_warn_truth(s, n->kids[0], n->loc);
	const struct ast_type *t = &n->kids[0]->type;
	char a[64];
	if (s->final && t->kind == TY_PTR)
		diag_error(s->diags, n->loc, "%s type passed to print() is not printable",
			   sema_tn(t, a));
	else if (s->final && t->kind != TY_INT && t->kind != TY_STR && t->kind != TY_TUPLE &&
		 t->kind != TY_USYM && t->kind != TY_BUF && t->kind != TY_ARRAY &&
		 t->kind != TY_STRUCT && !sema_fmt_string_like(t->kind))
		diag_error(s->diags, n->loc, "print() does not support values of type %s",
			   sema_kind_name(t));
	else if (s->final)
		sema_register_fmt(s, n, "", 0, 0);
}

/* delete(@m[k]) (a value: 1 if it removed one) | clear(@m) | zero(@m) */
static void check_map_func(struct sema *s, struct ast_node *n, enum call_use use,
			   const struct ast_node *user)
{
	if (strcmp(n->str, "delete")) {
		sema_check_use(s, n, use, user, false);
		n->type = (struct ast_type){TY_VOID, 0, false, AS_NONE};
	} else {
		n->type = ty_uint64; /* removed a value (bpftrace 0.24's bool) */
	}
	if (!strcmp(n->str, "delete") && n->nkids > 2) {
		diag_error(s->diags, n->loc, "delete() takes up to 2 arguments (%d provided)",
			   n->nkids);
		return;
	}
	if (!strcmp(n->str, "delete") && n->nkids == 2) { /* not map_key_form's */
		diag_error(s->diags, n->loc,
			   "delete() expects a map for the first argument and a key for the second "
			   "argument e.g. `delete(@my_map, 1);`");
		return;
	}
	if (!sema_check_nargs(s, n, 1))
		return;
	if (!strcmp(n->str, "delete")) {
		if (n->kids[0]->kind != AST_MAP)
			diag_error(s->diags, n->loc, "delete() expects a map to be provided");
		return;
	}
	whole_map_arg(s, n);
}

static bool unknown_function(struct sema *s, struct ast_node *n);

/* Does the subtree hold a `$N` or `$#`? */
static const struct ast_node *find_param(const struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return NULL;
	if (n->kind == AST_POSPARAM || n->kind == AST_PARAMCOUNT)
		return n;
	const struct ast_node *sub[] = { n->lhs, n->rhs, n->cond };
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++) {
		const struct ast_node *p = find_param(sub[i], depth + 1);
		if (p)
			return p;
	}
	for (int i = 0; i < n->nkids; i++) {
		const struct ast_node *p = find_param(n->kids[i], depth + 1);
		if (p)
			return p;
	}
	return NULL;
}

/*
 * str(p [, n]): p an integer or a pointer (or, in ubt, a string), n an
 * integer that is not a negative literal; with a positional parameter in
 * it, p must be `$N` or `$N + k` (its text, sema_posparam); bpftrace's
 * texts.
 */
static void check_str(struct sema *s, struct ast_node *n)
{
	char a[64];
	n->type = ty_str(sema_strlen());
	sema_newer_warn_strlen(s, n);
	if (!sema_check_varargs(s, n, 1, 2))
		return;
	const struct ast_node *arg = n->kids[0];
	const struct ast_node *param = find_param(n, 0);
	if (param && param->kind == AST_PARAMCOUNT)
		diag_error(s->diags, param->loc, "use $#, not str($#)");
	else if (param && arg->kind != AST_POSPARAM &&
		 !(arg->kind == AST_BINOP &&
		   (arg->lhs->kind == AST_POSPARAM || arg->rhs->kind == AST_POSPARAM)))
		diag_error(s->diags, n->loc,
			   "str() only accepts positional parameters directly or with a single constant offset added");
	const struct ast_type *t = &n->kids[0]->type;
	if (s->final && t->kind != TY_INT && t->kind != TY_STR && t->kind != TY_PTR)
		diag_error(s->diags, n->loc,
			   "str() expects an integer or a pointer type as first argument (%s provided)",
			   sema_tn(t, a));
	if (n->nkids < 2 || !s->final)
		return;
	const struct ast_node *len = n->kids[1];
	int64_t v;
	if (len->type.kind != TY_INT)
		diag_error(s->diags, n->loc, "str() only supports integer arguments (%s provided)",
			   sema_kind_name(&len->type));
	else if (ast_int_literal(len, &v) && v < 0) /* sic: no space, as bpftrace 0.17 */
		diag_error(s->diags, n->loc, "strcannot use negative length (%lld)", (long long)v);
}

/* call -> name '(' args ')': count(), sum(x), printf(fmt, ...), exit() */
void sema_call(struct sema *s, struct ast_node *n, enum call_use use,
	       const struct ast_node *user)
{
	const char *saved_func = s->func;
	int saved_arg = s->func_arg;
	if (sema_stack_call(s, n)) /* ustack(mode, n): literal arguments */
		return;
	if (sema_builtin_call(s, n)) /* pid(), nsecs(monotonic) */
		return;
	if (sema_offsetof_call(s, n)) /* offsetof(struct X, f.g) */
		return;
	if (sema_getopt_call(s, n)) /* getopt("name", default) */
		return;
	if (sema_find_call(s, n)) { /* find(@m, k, $v): now a block used as a value */
		if (n->kind == AST_BLOCK)
			sema_expr(s, n, use, user);
		return;
	}
	if (!strcmp(n->str, "kstack")) {
		/* kstack(mode[, n]): empty in user space, as bpftrace prints it in a
		 * uprobe; the arguments (perf, 3) are not evaluated */
		n->type = ty_str(1);
		if (n->nkids > 2)
			diag_error(s->diags, n->loc, "kstack() takes up to 2 arguments (%d provided)",
				   n->nkids);
		return;
	}
	if (unknown_function(s, n))
		return;
	sema_map_key_form(n);
	/* has_key(@g, k), delete(@g, k) (not 0.17's delete(@g[k])), len(@g)
	 * of a map used without keys: bpftrace 0.26's message, not the keys'
	 * mismatch */
	if (((n->op == 'k' && n->kids[0]->nkids) || !strcmp(n->str, "len")) && n->nkids == 1 &&
	    n->kids[0]->kind == AST_MAP && sema_map_is_scalar(s, n->kids[0]->str)) {
		n->type = ty_uint64;
		if (s->final)
			diag_error(s->diags, n->loc,
				   "call to %s() expects a map with explicit keys (non-scalar map)",
				   n->str);
		return;
	}
	s->func = n->str;
	for (int i = 0; i < n->nkids; i++) {
		s->func_arg = i;
		if (i == 0 && takes_whole_map(n->str) && n->kids[0]->kind == AST_MAP &&
		    !n->kids[0]->nkids)
			continue;
		sema_expr(s, n->kids[i], USE_NONE, NULL);
	}
	s->func = saved_func;
	s->func_arg = saved_arg;
	n->type = ty_none;

	if (!strcmp(n->str, "count")) {
		sema_check_use(s, n, use, user, true);
		sema_check_nargs(s, n, 0);
		n->type = (struct ast_type){ TY_COUNT, 8, true, AS_NONE };
	} else if (!strcmp(n->str, "sum")) {
		check_agg1(s, n, use, user, TY_SUM);
	} else if (!strcmp(n->str, "avg")) {
		check_agg1(s, n, use, user, TY_AVG);
	} else if (!strcmp(n->str, "min")) {
		check_agg1(s, n, use, user, TY_MIN);
	} else if (!strcmp(n->str, "max")) {
		check_agg1(s, n, use, user, TY_MAX);
	} else if (!strcmp(n->str, "stats")) {
		check_agg1(s, n, use, user, TY_STATS);
	} else if (!strcmp(n->str, "hist")) {
		check_hist(s, n, use, user);
	} else if (!strcmp(n->str, "lhist")) {
		check_lhist(s, n, use, user);
	} else if (!strcmp(n->str, "print")) {
		check_print(s, n, use, user);
	} else if (!strcmp(n->str, "delete") || !strcmp(n->str, "clear") ||
		   !strcmp(n->str, "zero")) {
		check_map_func(s, n, use, user);
	} else if (!strcmp(n->str, "str")) {
		check_str(s, n);
	} else if (!strcmp(n->str, "printf") || !strcmp(n->str, "system") ||
		   !strcmp(n->str, "cat") || !strcmp(n->str, "errorf") ||
		   !strcmp(n->str, "warnf")) {
		if (!strcmp(n->str, "system") && !sema_unsafe)
			diag_error(s->diags, n->loc,
				   "system() is an unsafe function being used in safe mode");
		sema_check_use(s, n, use, user, false);
		n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
		/* system() and cat() say printf(), as bpftrace 0.17; errorf and
		 * warnf their own name, as 0.26 */
		const char *fn =
		    !strcmp(n->str, "errorf") || !strcmp(n->str, "warnf") ? n->str : "printf";
		if (n->nkids < 1) {
			diag_error(s->diags, n->loc,
				   "%s() requires at least one argument (0 provided)", fn);
		} else if (n->nkids > 129) {
			diag_error(s->diags, n->loc, "%s() takes up to 128 arguments (%d provided)",
				   fn, n->nkids);
		} else if (n->kids[0]->kind != AST_STR) {
			diag_error(s->diags, n->loc, "%s() expects a string literal (%s provided)",
				   fn, sema_kind_name(&n->kids[0]->type));
		} else if (s->final) {
			check_printf_format(s, n);
		}
	} else if (sema_sym_call(s, n, use, user)) {
		/* usym(), ustack(), uaddr(): issue 7, below */
	} else if (sema_fmt_call(s, n, use, user)) {
		/* buf, strftime, join, strerror, ntop, pton, macaddr: sema_fmt.c */
	} else if (sema_reg_call(s, n)) {
		/* reg("name"): below */
	} else if (sema_call_more(s, n, use, user)) {
		/* exit, bswap, strncmp, strcontains, has_key, len, time, system, cat: below */
	} else {
		diag_error(s->diags, n->loc, "%s() is not supported yet", n->str);
	}
}

/*
 * A name that is no function: "Unknown function", with a hint when a
 * function's name is close.  Its arguments are not looked at (bpftrace
 * 0.17's parser stops there), so `offsetof(struct Foo, m)` says only that
 * offsetof is unknown.
 */
static bool unknown_function(struct sema *s, struct ast_node *n)
{
	const char *close = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(known_funcs); i++) {
		if (!strcmp(n->str, known_funcs[i]))
			return false;
		if (!close && edit_distance(n->str, known_funcs[i]) <= 2)
			close = known_funcs[i];
	}
	n->type = ty_none;
	if (s->pass > 1)
		return true; /* reported in the first pass */
	struct diag *d = diag_error(s->diags, name_loc(n), "Unknown function: %s", n->str);
	if (close)
		diag_hint(d, "did you mean '%s'?", close);
	return true;
}


/* ---- symbols (issue 7: usym, func; output/sym.c prints them) ------------ */

/* func in a uprobe: the probed function (the address the probe was called from) */
bool sema_sym_builtin(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "func"))
		return false;
	if (!probe_all(s->probe, "uprobe")) {
		diag_error(s->diags, n->loc, "The func builtin can only be used with uprobe and uretprobe probes");
		return true;
	}
	n->type = (struct ast_type){ TY_USYM, 8, false, AS_NONE };
	return true;
}

/* usym(addr) */
bool sema_sym_call(struct sema *s, struct ast_node *n, enum call_use use,
		   const struct ast_node *user)
{
	(void)use;
	(void)user;
	if (sema_uaddr_call(s, n)) /* uaddr("sym"): sema_stack.c */
		return true;
	if (strcmp(n->str, "usym"))
		return false;
	if (sema_check_nargs(s, n, 1) && s->final && n->kids[0]->type.kind != TY_INT &&
	    n->kids[0]->type.kind != TY_USYM)
		diag_error(s->diags, n->loc, "usym() expects an integer argument (%s provided)",
			   sema_kind_name(&n->kids[0]->type));
	n->type = (struct ast_type){ TY_USYM, 8, false, AS_NONE };
	return true;
}


/* ---- more functions (issue 4) ------------------------------------------- */

bool sema_unsafe; /* --unsafe: system() allowed */
bool sema_probe_inline;
char **sema_named_args;
int sema_nnamed_args;

static bool is_str(const struct ast_node *n)
{
	return n->type.kind == TY_STR;
}

/*
 * Signals signal() accepts by name, as bpftrace 0.17 spells them (it has
 * no SEGV, STOP, PROF, IO, PWR, SYS, STKFLT, IOT or CLD: those are "not a
 * valid signal" there too).  x86-64 numbers.
 */
static const struct {
	const char *name;
	int num;
} sig_names[] = {
	{"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ILL", 4},    {"TRAP", 5},    {"ABRT", 6},
	{"BUS", 7},   {"FPE", 8},   {"KILL", 9},  {"USR1", 10},  {"USR2", 12},   {"PIPE", 13},
	{"ALRM", 14}, {"TERM", 15}, {"CHLD", 17}, {"CONT", 18},  {"TSTP", 20},   {"TTIN", 21},
	{"TTOU", 22}, {"URG", 23},  {"XCPU", 24}, {"XFSZ", 25},  {"VTALRM", 26}, {"WINCH", 28},
	{"POLL", 29},
};

/* "SIGUSR1", "USR1", "usr1" -> 10; 0 if unknown (bpftrace ignores case). */
static int signal_number(const char *text)
{
	char up[16];
	size_t i;
	for (i = 0; text[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)toupper((unsigned char)text[i]);
	up[i] = 0;
	if (text[i])
		return 0;
	const char *name = strncmp(up, "SIG", 3) ? up : up + 3;
	for (size_t k = 0; k < ARRAY_SIZE(sig_names); k++)
		if (!strcmp(name, sig_names[k].name))
			return sig_names[k].num;
	return 0;
}

/*
 * signal(SIG) with SIG a name ("SIGKILL", "KILL") or an integer: sent to
 * the target process by kill(2) from the probe (rt_builtin.c).  bpftrace's
 * checks, in its order.  A literal becomes the constant cval (0: computed
 * at run time, checked there).
 */
static void sema_signal_call(struct sema *s, struct ast_node *n, enum call_use use,
			     const struct ast_node *user)
{
	n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
	if (!sema_unsafe)
		diag_error(s->diags, n->loc, "signal() is an unsafe function being used in safe mode");
	if (n->nkids < 1) {
		diag_error(s->diags, n->loc, "signal() requires at least one argument (0 provided)");
		return;
	}
	if (n->nkids > 1) {
		diag_error(s->diags, n->loc, "signal() takes up to one argument (%d provided)",
			   n->nkids);
		return;
	}
	for (int i = 0; i < s->probe->nkids; i++) {
		const char *prov = s->probe->kids[i]->attach.provider;
		if (prov && (!strcmp(prov, "BEGIN") || !strcmp(prov, "END") ||
			     !strcmp(prov, "interval"))) {
			diag_error(s->diags, n->loc, "signal can not be used with \"%s\" probes", prov);
			break;
		}
	}
	sema_check_use(s, n, use, user, false);
	const struct ast_node *a = n->kids[0];
	int64_t v;
	if (a->kind == AST_STR) {
		n->cval = (uint64_t)signal_number(a->str);
		if (!n->cval)
			diag_error(s->diags, n->loc, "%s is not a valid signal", a->str);
	} else if (ast_int_literal(a, &v)) {
		if (v < 1 || v > 64)
			diag_error(s->diags, n->loc, "%lld is not a valid signal, allowed range: [1,64]",
				   (long long)v);
		else
			n->cval = (uint64_t)v;
	} else if (s->final && a->type.kind != TY_INT) {
		diag_error(s->diags, n->loc, "signal only accepts string literals or integers");
	}
}

/*
 * exit([code]) | bswap(int) | strncmp(str, str, n) | strcontains(str, str)
 * | has_key(@m[k]) | len(@m) | time([fmt]).  Returns false for other names.
 */
static bool sema_call_more(struct sema *s, struct ast_node *n, enum call_use use,
			   const struct ast_node *user)
{
	const char *f = n->str;
	if (!strcmp(f, "exit")) {
		sema_check_use(s, n, use, user, false);
		if (n->nkids > 1)
			diag_error(s->diags, n->loc, "exit() takes up to one argument (%d provided)",
				   n->nkids);
		else if (n->nkids == 1 && s->final && n->kids[0]->type.kind != TY_INT)
			diag_error(s->diags, n->loc, "exit() only supports an integer exit code (%s provided)",
				   sema_kind_name(&n->kids[0]->type));
		n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
		return true;
	}
	if (!strcmp(f, "bswap")) {
		n->type = ty_uint64;
		if (sema_check_nargs(s, n, 1)) {
			const struct ast_type *t = &n->kids[0]->type;
			if (s->final && t->kind != TY_INT)
				diag_error(s->diags, n->loc, "bswap() only supports integer arguments (%s provided)",
					   sema_kind_name(t));
			else if (t->kind == TY_INT)
				n->type = (struct ast_type){ TY_INT, t->size, false, AS_NONE };
		}
		return true;
	}
	if (!strcmp(f, "strncmp")) {
		/* strncmp(a, b, n): n a literal (`$1` given a number too) */
		n->type = ty_uint64;
		int64_t v;
		if (!sema_check_nargs(s, n, 3))
			return true;
		sema_check_arg(s, n, 0, TY_STR, false);
		sema_check_arg(s, n, 1, TY_STR, false);
		if (sema_check_arg(s, n, 2, TY_INT, true) && ast_int_literal(n->kids[2], &v) && v < 0)
			diag_error(s->diags, n->loc, "Builtin strncmp requires a non-negative size");
		return true;
	}
	if (!strcmp(f, "str_concat")) { /* bpftrace after 0.26 */
		n->type = ty_str(64);
		if (sema_check_nargs(s, n, 2) && s->final &&
		    (!is_str(n->kids[0]) || !is_str(n->kids[1])))
			diag_error(s->diags, n->loc, "str_concat() expects string arguments");
		else if (n->nkids == 2)
			n->type = ty_str(n->kids[0]->type.size + n->kids[1]->type.size - 1);
		return true;
	}
	if (!strcmp(f, "signal_name") || !strcmp(f, "syscall_name")) { /* bpftrace 0.26 */
		/* a name from a table of 64-byte strings (codegen, call_name_table) */
		n->type = ty_str(64);
		if (sema_check_nargs(s, n, 1))
			sema_check_arg(s, n, 0, TY_INT, false);
		return true;
	}
	if (!strcmp(f, "strlen")) { /* bpftrace 0.25 */
		n->type = ty_int64;
		if (sema_check_nargs(s, n, 1) && s->final && !is_str(n->kids[0]))
			diag_error(s->diags, n->loc, "strlen() expects a string argument");
		return true;
	}
	if (!strcmp(f, "strcontains")) {
		n->type = ty_uint64;
		if (sema_check_nargs(s, n, 2) && s->final && (!is_str(n->kids[0]) || !is_str(n->kids[1])))
			diag_error(s->diags, n->loc, "strcontains() expects string arguments");
		return true;
	}
	if (!strcmp(f, "has_key")) {
		n->type = ty_uint64;
		if (sema_check_nargs(s, n, 1) && (n->kids[0]->kind != AST_MAP || !n->kids[0]->nkids))
			diag_error(s->diags, n->loc,
				   "has_key() expects a map with a key: has_key(@m, k)");
		return true;
	}
	if (!strcmp(f, "len")) {
		n->type = ty_uint64;
		if (sema_check_nargs(s, n, 1))
			whole_map_arg(s, n);
		return true;
	}
	if (!strcmp(f, "signal")) {
		sema_signal_call(s, n, use, user);
		return true;
	}
	if (!strcmp(f, "time")) {
		sema_check_use(s, n, use, user, false);
		n->type = (struct ast_type){ TY_VOID, 0, false, AS_NONE };
		if (n->nkids > 1)
			diag_error(s->diags, n->loc, "time() takes up to one argument (%d provided)",
				   n->nkids);
		else if (n->nkids == 1 && n->kids[0]->kind != AST_STR)
			diag_error(s->diags, n->loc, "time() expects a string literal");
		else if (s->final && n->nkids == 1)
			sema_register_fmt(s, n, n->kids[0]->str, n->kids[0]->slen, 1);
		else if (s->final)
			sema_register_fmt(s, n, "%H:%M:%S\n", 9, 0);
		return true;
	}
	return false;
}


/* ---- reg("name") (probes work) ---------------------------------------- */

/*
 * reg -> 'reg' '(' string ')': a register of the probed thread, by
 * bpftrace's x86-64 names (struct pt_regs without the r/e prefix).
 * n->cval gets the index in sema_reg_names[]; codegen (cg_reg) reads it
 * where the probe's kind keeps it: every register in a profile probe (the
 * interrupted context); the argument registers, r11 and sp at a function
 * entry; those, ax and ip (the return address) in a return probe.
 */
const char *const sema_reg_names[SEMA_NREGS] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
	"cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};

static bool reg_available(int kind, bool profile, const char *r)
{
	if (profile)
		return true;
	if (kind == 2 && (!strcmp(r, "ax") || !strcmp(r, "ip")))
		return true;
	/* usdt and FUNC+OFF: the mid-function trampoline saves what reg() reads
	 * (cg_object.mid_regs); its flags slot holds lahf/seto's form, not eflags */
	if (kind == 1)
		return strcmp(r, "flags") != 0;
	if (kind != 0 && kind != 2)
		return false;
	return sema_entry_saves_reg(r) && strcmp(r, "flags");
}

static bool sema_reg_call(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "reg"))
		return false;
	n->type = ty_uint64;
	if (!sema_check_nargs(s, n, 1))
		return true;
	const struct ast_node *a = n->kids[0];
	if (a->kind != AST_STR) {
		if (s->final)
			diag_error(s->diags, n->loc, "reg() expects a string literal (%s provided)",
				   sema_kind_name(&a->type));
		return true;
	}
	const char *first = s->probe->nkids ? s->probe->kids[0]->attach.provider : "";
	if (!strcmp(first, "BEGIN") || !strcmp(first, "END")) {
		diag_error(s->diags, n->loc, "reg can not be used with \"%s\" probes", first);
		return true;
	}
	int idx = -1;
	for (int i = 0; i < SEMA_NREGS; i++)
		if (!strcmp(a->str, sema_reg_names[i]))
			idx = i;
	if (idx < 0) {
		diag_error(s->diags, n->loc, "'%s' is not a valid register on this architecture (x86_64)",
			   a->str);
		return true;
	}
	n->cval = (uint64_t)idx;
	bool profile = !strcmp(first, "profile");
	if (!strcmp(first, "interval"))
		return true; /* runs in ubt: 0, as BEGIN's registers (docs/compat.md) */
	if (!reg_available(sema_stack_kind(s->probe), profile, a->str))
		diag_error(s->diags, n->loc,
			   "reg(\"%s\") is not available in this probe in ubt: its trampoline does not "
			   "save it (every register is available in profile probes)", a->str);
	return true;
}
