/*
 * sema_newer.c - calls of bpftrace 0.19-0.24 that sema lowers onto what
 * ubt already has (issue 24; docs/compat.md, "The newer language"):
 *
 *   has_key(@m, k), delete(@m, k)    -> has_key(@m[k]), delete(@m[k])
 *   pid(), comm(), nsecs(monotonic)  -> the builtins (uval: the clock)
 *   offsetof(struct X, f.g)          -> the offset, an integer literal
 *   getopt("name", default)          -> the named parameter's value, a literal
 *   find(@m, k, $v)                  -> { let $k = k; if (has_key(@m[$k])) {
 *                                       $v = @m[$k]; true } else { false } }
 *   let @m = lruhash(N);             -> @m holds at most N keys (sema_map_decls)
 *
 * Each rewrites its node in the first pass; later passes see the result.
 */
#include "sema_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * has_key(@m, k) and delete(@m, k), bpftrace 0.22's forms, become the
 * older has_key(@m[k]) / delete(@m[k]) that the rest of ubt knows: the key
 * moves into the map node, a tuple literal's elements as the keys of a
 * multi-key map (`delete(@m, (1, "a"))` is `delete(@m[1, "a"])`).  Done
 * once, in the first pass; the node then has its one argument.
 */
void sema_map_key_form(struct ast_node *n)
{
	if ((strcmp(n->str, "has_key") && strcmp(n->str, "delete")) || n->nkids != 2 ||
	    n->kids[0]->kind != AST_MAP || n->kids[0]->nkids)
		return;
	struct ast_node *m = n->kids[0], *k = n->kids[1];
	if (k->kind == AST_TUPLE) {
		m->kids = k->kids;
		m->nkids = k->nkids;
		k->kids = NULL;
		k->nkids = 0;
		ast_free(k);
	} else {
		ast_add_kid(m, k);
	}
	n->kids[1] = NULL;
	n->nkids = 1;
	n->op = 'k'; /* written in the key form: its errors are 0.24's (sema_call) */
}

/*
 * Builtins called like functions (bpftrace 0.24): `pid()`, `comm()`, ...
 * are the builtins; `nsecs(monotonic | boot | tai | sw_tai)` (0.19) picks
 * the clock (uval: enum ast_clock; codegen adds the clock's offset from
 * CLOCK_BOOTTIME, ubt's nsecs, read when the code is compiled).  The node
 * becomes an AST_BUILTIN once, in the first pass.
 */
bool sema_builtin_call(struct sema *s, struct ast_node *n)
{
	static const char *const callable[] = {
	    "pid",  "tid",  "comm",   "nsecs",	  "elapsed", "uid",   "gid",  "cpu",
	    "cpid", "rand", "cgroup", "username", "numaid",  "probe", "func", "retval",
	};
	bool known = false;
	for (size_t i = 0; i < ARRAY_SIZE(callable) && !known; i++)
		known = !strcmp(n->str, callable[i]);
	bool ns_arg = !strcmp(n->str, "pid") || !strcmp(n->str, "tid");
	if (known && n->nkids > 1 && (ns_arg || !strcmp(n->str, "nsecs"))) {
		diag_error(s->diags, n->loc, "%s() takes up to one argument (%d provided)", n->str,
			   n->nkids);
		n->type = ty_uint64;
		return true;
	}
	if (!known || n->nkids > 1 || (n->nkids == 1 && strcmp(n->str, "nsecs") && !ns_arg))
		return false;
	n->uval = AST_CLOCK_DEFAULT;
	if (n->nkids == 1 && ns_arg) {
		/* pid(curr_ns | init), tid(...) (0.24): ubt's namespace is the
		 * initial one's view of the target (docs/compat.md: tid in a pid
		 * namespace), so both are pid / tid */
		const struct ast_node *a = n->kids[0];
		if (a->kind != AST_IDENT)
			diag_error(s->diags, n->loc,
				   "%s() only supports curr_ns and init as the argument", n->str);
		else if (strcmp(a->str, "curr_ns") && strcmp(a->str, "init"))
			diag_error(s->diags, a->loc,
				   "Invalid PID namespace mode: %s (expects: curr_ns or init)",
				   a->str);
		ast_free(n->kids[0]);
		n->kids[0] = NULL;
		n->nkids = 0;
	} else if (n->nkids == 1) {
		static const char *const modes[] = {[AST_CLOCK_MONOTONIC] = "monotonic",
						    [AST_CLOCK_BOOT] = "boot",
						    [AST_CLOCK_TAI] = "tai",
						    [AST_CLOCK_SW_TAI] = "sw_tai"};
		const struct ast_node *a = n->kids[0];
		for (size_t i = 1; i < ARRAY_SIZE(modes) && a->kind == AST_IDENT; i++)
			if (!strcmp(a->str, modes[i]))
				n->uval = i;
		if (n->uval == AST_CLOCK_DEFAULT) {
			struct src_loc at = n->loc; /* bpftrace 0.23's range stops before ')' */
			at.end_col -= at.end_col > at.col + 1;
			if (a->kind == AST_IDENT)
				diag_error(s->diags, at, "Invalid timestamp mode: %s", a->str);
			else
				diag_error(s->diags, n->loc,
					   "nsecs() expects a timestamp mode: monotonic, boot, tai "
					   "or sw_tai");
		}
		ast_free(n->kids[0]);
		n->kids[0] = NULL;
		n->nkids = 0;
	}
	n->kind = AST_BUILTIN;
	if (strcmp(n->str, "nsecs") || !n->uval)
		s->prog->newer = true; /* pid(), comm(): 0.24 (nsecs(clock) is 0.19's) */
	sema_builtin(s, n);
	return true;
}

/* The names of a field path as written: `c` or `c.y.z` (AST_FIELD of '.'). */
static int field_path(const struct ast_node *f, const char **names, int max)
{
	if (f->kind == AST_IDENT || f->kind == AST_BUILTIN)
		return max > 0 ? (names[0] = f->str, 1) : -1;
	if (f->kind != AST_FIELD || f->op != '.')
		return -1;
	int k = field_path(f->lhs, names, max);
	if (k < 0 || k >= max)
		return -1;
	names[k] = f->str;
	return k + 1;
}

/*
 * offsetof(struct X, f[.g...]) / offsetof(expr, f...) (bpftrace 0.18, sub
 * fields 0.23): the field's byte offset, a uint64 constant; the node
 * becomes that integer literal.  bpftrace 0.23's messages.
 */
bool sema_offsetof_call(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "offsetof"))
		return false;
	n->type = ty_uint64;
	if (n->nkids != 2) {
		diag_error(s->diags, n->loc, "offsetof() requires 2 arguments (%d provided)",
			   n->nkids);
		return true;
	}
	struct ast_node *a = n->kids[0];
	const struct ast_record *rec = NULL;
	char tn[64];
	if (a->kind == AST_IDENT &&
	    (!strncmp(a->str, "struct ", 7) || !strncmp(a->str, "union ", 6))) {
		rec = ast_record_find(s->prog, a->str, false);
		if (!rec || !rec->complete) {
			diag_error(s->diags, n->loc, "Cannot resolve unknown type \"%s\"", a->str);
			return true;
		}
	} else {
		sema_expr(s, a, USE_NONE, NULL);
		if (a->type.kind != TY_STRUCT || !a->type.rec) {
			if (s->final && a->type.kind != TY_NONE)
				diag_error(s->diags, n->loc,
					   "offsetof() expects a struct or union (%s provided)",
					   sema_tn(&a->type, tn));
			return true;
		}
		rec = a->type.rec;
	}
	const char *names[16];
	int k = field_path(n->kids[1], names, (int)ARRAY_SIZE(names));
	if (k < 0) {
		diag_error(s->diags, n->loc,
			   "offsetof() expects a field name, or fields joined by '.'");
		return true;
	}
	uint64_t off = 0;
	for (int i = 0; i < k; i++) {
		const struct ast_member *m = NULL;
		for (int j = 0; rec && j < rec->nmembers && !m; j++)
			if (rec->members[j].name && !strcmp(rec->members[j].name, names[i]))
				m = &rec->members[j];
		if (!m) {
			diag_error(s->diags, n->loc, "'%s' has no field named '%s'", rec->name,
				   names[i]);
			return true;
		}
		off += (uint64_t)m->offset;
		if (i + 1 < k && (m->type.kind != TY_STRUCT || !m->type.rec)) {
			diag_error(s->diags, n->loc,
				   "'%s' is not a struct or union: it has no field '%s'", names[i],
				   names[i + 1]);
			return true;
		}
		rec = m->type.rec;
	}
	for (int i = 0; i < n->nkids; i++)
		ast_free(n->kids[i]);
	n->nkids = 0;
	n->kind = AST_INT;
	n->uval = off;
	n->type = ty_uint64;
	return true;
}

/* The value of `--name=value` (or "" for `--name`) among the named
 * parameters, or NULL when it was not given. */
static bool named_used[4096]; /* which named parameters a getopt() read */

static const char *named_arg(const char *name)
{
	size_t len = strlen(name);
	for (int i = 0; i < sema_nnamed_args; i++) {
		const char *a = sema_named_args[i] + 2;
		if (!strncmp(a, name, len) && (a[len] == '=' || !a[len])) {
			if (i < (int)ARRAY_SIZE(named_used))
				named_used[i] = true;
			return a[len] ? a + len + 1 : "";
		}
	}
	return NULL;
}

/* A named parameter no getopt() reads is an error, as bpftrace 0.24's. */
static void named_unused(struct sema *s)
{
	for (int i = 0; i < sema_nnamed_args && i < (int)ARRAY_SIZE(named_used); i++)
		if (!named_used[i])
			diag_error(
			    s->diags, (struct src_loc){0},
			    "unexpected named parameter %s: no getopt() of the script reads it",
			    sema_named_args[i]);
}

/*
 * getopt("name" [, default [, "description"]]) (bpftrace 0.24): the named
 * parameter `--name[=value]` given after `--`, typed by the default: a
 * bool without one (false unless given), else the default's type (bool,
 * integer or string).  Known when the code is compiled: the node becomes
 * the value's literal.
 */
bool sema_getopt_call(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "getopt"))
		return false;
	n->type = ty_none;
	if (n->nkids < 1 || n->nkids > 3) {
		diag_error(s->diags, n->loc, "getopt() takes 1 to 3 arguments (%d provided)",
			   n->nkids);
		return true;
	}
	const struct ast_node *nm = n->kids[0], *def = n->nkids > 1 ? n->kids[1] : NULL;
	if (nm->kind != AST_STR) {
		diag_error(s->diags, n->loc,
			   "getopt() expects a string literal as the option's name");
		return true;
	}
	bool is_bool = !def || (def->kind == AST_IDENT &&
				(!strcmp(def->str, "true") || !strcmp(def->str, "false")));
	if (!is_bool && def->kind != AST_INT && def->kind != AST_STR) {
		diag_error(
		    s->diags, n->loc,
		    "getopt()'s default must be a literal: true/false, an integer or a string");
		return true;
	}
	if (n->nkids == 3 && n->kids[2]->kind != AST_STR) {
		diag_error(s->diags, n->loc, "getopt()'s description must be a string literal");
		return true;
	}
	s->prog->newer = true;
	const char *v = named_arg(nm->str);
	struct ast_node *val = NULL;
	if (is_bool) {
		bool b = def && !strcmp(def->str, "true");
		if (v && (!*v || !strcmp(v, "true") || !strcmp(v, "1")))
			b = true;
		else if (v && (!strcmp(v, "false") || !strcmp(v, "0")))
			b = false;
		else if (v)
			diag_error(s->diags, n->loc,
				   "Invalid value for bool option --%s: %s (true, false, 1 or 0)",
				   nm->str, v);
		val = ast_new(AST_IDENT, n->loc);
		val->str = xstrdup(b ? "true" : "false");
	} else if (def->kind == AST_INT) {
		val = ast_new(AST_INT, n->loc);
		val->uval = def->uval;
		char *end = NULL;
		if (v) {
			errno = 0;
			val->uval = (uint64_t)strtoll(v, &end, 0);
			if (!*v || *end || errno)
				diag_error(s->diags, n->loc,
					   "Invalid value for integer option --%s: %s", nm->str, v);
		}
	} else {
		val = ast_new(AST_STR, n->loc);
		const char *t = v ? v : def->str;
		val->slen = v ? strlen(v) : def->slen;
		val->str = xmalloc(val->slen + 1);
		memcpy(val->str, t, val->slen + 1);
	}
	/* the call node takes the literal's place */
	for (int i = 0; i < n->nkids; i++)
		ast_free(n->kids[i]);
	n->nkids = 0;
	free(n->str);
	n->kind = val->kind;
	n->str = val->str;
	n->slen = val->slen;
	n->uval = val->uval;
	val->str = NULL;
	ast_free(val);
	if (n->kind == AST_IDENT)
		sema_ident(s, n);
	else if (n->kind == AST_INT)
		n->type = ty_int64;
	else
		n->type = ty_str((int)n->slen + 1);
	return true;
}

/*
 * Map declarations (bpftrace 0.24): `let @m = KIND(N);` before or between
 * the probes sizes @m to N keys instead of max_map_keys.  KIND is one of
 * bpftrace's hash kinds; ubt has one kind of map (per-CPU values for the
 * aggregations, docs/ARCHITECTURE.md), so the kind only decides what is
 * accepted: an lru map does not evict when full, it drops the update and
 * says so at exit, as any full map (docs/compat.md).
 */
void sema_map_decls(struct sema *s)
{
	named_unused(s);
	static const char *const kinds[] = {"hash", "lruhash", "percpuhash", "percpulruhash"};
	for (int i = 0; i < s->prog->nmapdecls; i++) {
		const struct ast_node *d = s->prog->mapdecls[i];
		const struct ast_node *m = d->lhs, *k = d->rhs;
		bool kind_ok = false;
		for (size_t j = 0; k->kind == AST_CALL && j < ARRAY_SIZE(kinds); j++)
			kind_ok |= !strcmp(k->str, kinds[j]);
		int64_t n = 0;
		bool twice = false;
		for (int j = 0; j < i; j++)
			twice |= !strcmp(s->prog->mapdecls[j]->lhs->str, m->str);
		if (twice) {
			diag_error(s->diags, d->loc, "%s is declared twice", m->str);
		} else if (m->nkids) {
			diag_error(s->diags, m->loc,
				   "a map declaration names the map without keys: %s", m->str);
		} else if (!kind_ok) {
			diag_error(
			    s->diags, k->loc,
			    "Invalid map type: %s (hash, lruhash, percpuhash or percpulruhash)",
			    k->kind == AST_CALL ? k->str : "?");
		} else if (k->nkids != 1 || !ast_int_literal(k->kids[0], &n) || n < 1) {
			diag_error(
			    s->diags, k->loc,
			    "%s() takes one argument: the most keys the map holds, an integer "
			    "literal of 1 or more",
			    k->str);
		} else if (n > 1 << 30) {
			diag_error(s->diags, k->loc, "%s(%lld): ubt takes at most %d keys", k->str,
				   (long long)n, 1 << 30);
		}
		bool used = false;
		for (int j = 0; j < s->info->nmaps; j++)
			if (!strcmp(s->info->maps[j]->name, m->str)) {
				s->info->maps[j]->max_keys = (uint32_t)n;
				used = true;
			}
		if (!used)
			diag_warning(s->diags, d->loc, "Unused map: %s", m->str);
	}
}

static struct ast_node *node_at(enum ast_kind kind, struct src_loc loc, const char *str)
{
	struct ast_node *n = ast_new(kind, loc);
	n->str = str ? xstrdup(str) : NULL;
	return n;
}

/* @m[k] for find(): a copy of k as the key, a tuple's elements as the keys */
static struct ast_node *keyed(const struct ast_node *m, const struct ast_node *k)
{
	struct ast_node *r = node_at(AST_MAP, m->loc, m->str);
	if (k->kind == AST_TUPLE)
		for (int i = 0; i < k->nkids; i++)
			ast_add_kid(r, ast_clone(k->kids[i]));
	else
		ast_add_kid(r, ast_clone(k));
	return r;
}

static struct ast_node *value_stmt(struct ast_node *e)
{
	struct ast_node *st = node_at(AST_EXPR_STMT, e->loc, NULL);
	st->lhs = e;
	st->op = 'v';
	return st;
}

/*
 * find(@m, k, $v) (bpftrace 0.25): true and $v set to @m[k] when the key is
 * in the map, else false and $v unchanged.  Lowered onto has_key and an if
 * used as a value, the key evaluated once into a variable of its own; the
 * node becomes that block, which sema then checks.
 */
bool sema_find_call(struct sema *s, struct ast_node *n)
{
	if (strcmp(n->str, "find"))
		return false;
	const struct ast_node *m = n->nkids == 3 ? n->kids[0] : NULL;
	if (!m || m->kind != AST_MAP || m->nkids || n->kids[2]->kind != AST_VAR) {
		diag_error(s->diags, n->loc,
			   "find() takes a map, a key and a scratch variable: find(@m, k, $v)");
		n->type = ty_none;
		return true;
	}
	/* the key is evaluated once, into a variable of the block's own */
	static unsigned serial;
	struct src_loc at = n->loc;
	char *kname = xasprintf("$__find_key_%u", ++serial);
	struct ast_node *let = node_at(AST_LET, at, NULL);
	let->lhs = node_at(AST_VAR, at, kname);
	let->rhs = n->kids[1];
	n->kids[1] = NULL;
	struct ast_node *kvar = node_at(AST_VAR, at, kname);
	free(kname);
	struct ast_node *has = node_at(AST_CALL, at, "has_key");
	ast_add_kid(has, keyed(m, kvar));
	struct ast_node *set = node_at(AST_ASSIGN, at, NULL);
	set->op = '=';
	set->lhs = ast_clone(n->kids[2]);
	set->rhs = keyed(m, kvar);
	ast_free(kvar);
	struct ast_node *yes = node_at(AST_BLOCK, at, NULL);
	ast_add_kid(yes, set);
	ast_add_kid(yes, value_stmt(node_at(AST_IDENT, at, "true")));
	struct ast_node *no = node_at(AST_BLOCK, at, NULL);
	ast_add_kid(no, value_stmt(node_at(AST_IDENT, at, "false")));
	struct ast_node *iff = node_at(AST_IF, at, NULL);
	iff->cond = has;
	iff->body = yes;
	iff->els = no;
	for (int i = 0; i < n->nkids; i++)
		ast_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	n->kids = NULL;
	n->nkids = 0;
	n->str = NULL;
	n->kind = AST_BLOCK; /* { let $k = key; if (has_key(@m[$k])) ... } as a value */
	ast_add_kid(n, let);
	ast_add_kid(n, iff);
	return true;
}

void sema_newer_warn_truth(struct sema *s, const struct ast_node *value, struct src_loc loc)
{
	if (!s->final || !s->prog->newer || s->said_truth || !sema_is_truth(value))
		return;
	s->said_truth = true;
	diag_warning(s->diags, loc,
		     "this value is printed 1 or 0, as bpftrace 0.17 prints it; bpftrace 0.24 and "
		     "later print a comparison or has_key() as true or false (docs/compat.md)");
}

void sema_newer_warn_strlen(struct sema *s, const struct ast_node *call)
{
	if (!s->final || !s->prog->newer || s->said_strlen || call->nkids != 1 ||
	    getenv("BPFTRACE_STRLEN") || getenv("BPFTRACE_MAX_STRLEN"))
		return;
	const struct ast_node *cfg = s->prog->config;
	for (int i = 0; cfg && i < cfg->nkids; i++)
		if (strcasestr(cfg->kids[i]->lhs->str, "strlen"))
			return;
	s->said_strlen = true;
	diag_warning(
	    s->diags, call->loc,
	    "str() reads at most %d bytes, bpftrace 0.17's default; bpftrace 0.24 and later "
	    "read 1024: set config = { max_strlen = N } (at most 200 in ubt)",
	    sema_strlen());
}
