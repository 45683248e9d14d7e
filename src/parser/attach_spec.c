/*
 * attach_spec.c - attach point text -> struct ast_attach: provider (short
 * or long name), target, function, offset or address, rate, with bpftrace
 * 0.17's argument-count and format checks and messages.
 *
 * Pipeline position: the last step of parse_script() (parser.y), after the
 * grammar accepted the script and before sema_check(); the grammar keeps an
 * attach point as its raw text (ast_node.str) and this file splits it.
 */
#include "parser_internal.h"
#include "../util/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Probe types of bpftrace, short and long names, and how many ':'-separated
 * parts may follow the provider.  Kernel providers parse, so that a script
 * written for bpftrace reads correctly; sema refuses them with a message
 * saying they need the kernel tracer (the system-call tracepoints
 * excepted: is_syscall_category). */
static const struct {
	const char *name, *alias;
	bool kernel;
	int min, max; /* parts after the provider */
} providers[] = {
    {"BEGIN", "begin", false, 0, 0},
    {"END", "end", false, 0, 0}, /* begin: 0.25 */
    {"uprobe", "u", false, 2, 2},
    {"uretprobe", "ur", false, 2, 2},
    {"usdt", "U", false, 1, 3},
    {"interval", "i", false, 2, 2},
    {"profile", "p", false, 2, 2},
    {"kprobe", "k", true, 1, 1},
    {"kretprobe", "kr", true, 1, 1},
    {"tracepoint", "t", true, 2, 2},
    {"rawtracepoint", "rt", true, 1, 1},
    {"software", "s", true, 1, 2},
    {"hardware", "h", true, 1, 2},
    {"watchpoint", "w", true, 3, 3},
    {"asyncwatchpoint", "aw", true, 3, 3},
    {"kfunc", "f", true, 1, 2},
    {"kretfunc", "fr", true, 1, 2},
    {"iter", "it", true, 1, 1},
    {"fentry", NULL, true, 1, 2},
    {"fexit", NULL, true, 1, 2},
};

/*
 * Names in attach points are fnmatch() patterns, and a user must be able
 * to write any name a binary holds (`ubt -l` prints them so).  Split parts
 * are kept in fnmatch's own syntax:
 *
 *   - outside quotes, what the script wrote; `\X` (the lexer takes any
 *     escaped character in a path) stands for X itself;
 *   - a quoted part (a string token, which the grammar quoted again with
 *     `"` and `\` escaped) is the string's value, a pattern like any other
 *     (`"clock_nanosleep@*"` matches); only its `+` is literal (an offset
 *     follows the closing quote: `"echo_builtin"+0`), and `:` does not
 *     split;
 *
 *   uprobe:/usr/lib/libstdc++.so.6:f      target  /usr/lib/libstdc++.so.6
 *   usdt:./t:test:"\"probe1\""           func    "probe1" (quotes included)
 *   uprobe:./t:"operator\\*"              func    operator\*  (a literal *)
 *   uprobe:/bin/bash:"echo_builtin"+0     func    echo_builtin, offset 0
 */
bool attach_is_wild(const char *pat)
{
	for (const char *p = pat; p && *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (strchr("*?[", *p))
			return true;
	}
	return false;
}

char *attach_plain(const char *pat)
{
	char *out = xstrdup(pat ? pat : ""), *w = out;
	for (const char *p = out; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		*w++ = *p;
	}
	*w = 0;
	return out;
}

/* Splits attach text at ':' outside quotes into malloc'ed parts (above). */
static int split_attach(const char *text, char **parts, int max)
{
	int n = 0;
	struct buf cur = {0};
	bool quoted = false;
	for (const char *p = text;; p++) {
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		if (!*p || (*p == ':' && !quoted)) {
			char *part = cur.data ? cur.data : xstrdup("");
			if (n < max)
				parts[n] = part;
			else
				free(part);
			n++;
			cur = (struct buf){0};
			if (!*p)
				break;
			continue;
		}
		if (*p == '\\' && p[1]) {
			if (quoted) /* the grammar's escape of " and \ (parse_cat_quoted) */
				p++;
			else /* the path's escaped character: kept escaped, itself */
				buf_append(&cur, p++, 1);
		} else if (*p == '+' && quoted) {
			buf_append(&cur, "\\", 1);
		}
		buf_append(&cur, p, 1);
	}
	return n;
}

/* The '+' of FUNC+OFF: the last one not escaped, or NULL. */
static const char *offset_plus(const char *func)
{
	const char *last = NULL;
	for (const char *p = func; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '+')
			last = p;
	}
	return last;
}

/* "123", "0x1f": a number, else false */
static bool parse_num(const char *s, uint64_t *v)
{
	if (!*s || !(*s >= '0' && *s <= '9'))
		return false;
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !*end && !errno;
}

/* uprobe:target:func[+off] | uprobe:target:0xaddr | uprobe:func |
 * uprobe:target:lang:func (usdt: usdt:target:[provider:]name) */
static int parse_user_func(struct ast_node *ap, struct diags *diags, char **parts, int n,
			   const char *prov, bool usdt)
{
	struct ast_attach *a = &ap->attach;
	const char *func = parts[n];
	if (n >= 2)
		a->target = xstrdup(parts[1]);
	if (n == 3)
		a->ns = xstrdup(parts[2]);
	/* usdt: an empty target (usdt::p:n) takes the probes of the -p process */
	if (n >= 2 && !*parts[1] && !(usdt && parse_have_pid)) {
		diag_error(diags, ap->loc, usdt ? "usdt probe must specify at least path or pid to probe"
						: "%s should have a target", prov);
		return -1;
	}
	if (!*func) {
		diag_error(diags, ap->loc, "%s should be attached to a function and/or address", prov);
		return -1;
	}
	uint64_t v;
	if (!usdt && parse_num(func, &v)) {
		a->address = v;
		a->func = xstrdup(func); /* for messages: resolving looks for a name */
		return 0;
	}
	const char *plus = usdt ? NULL : offset_plus(func);
	if (plus) {
		if (!parse_num(plus + 1, &v)) {
			diag_error(diags, ap->loc, "Invalid offset in %s probe: %s", prov, plus + 1);
			return -1;
		}
		a->offset = v;
		a->has_offset = true;
		a->func = xstrndup(func, (size_t)(plus - func));
	} else {
		a->func = xstrdup(func);
	}
	a->wildcard = attach_is_wild(a->target) || attach_is_wild(a->ns) || attach_is_wild(a->func);
	return 0;
}

/* interval:s:1, interval:ms:100, profile:hz:99 */
static int parse_rate(struct ast_node *ap, struct diags *diags, char **parts, int n,
		      const char *prov)
{
	struct ast_attach *a = &ap->attach;
	if (n != 2) {
		diag_error(diags, ap->loc, "%s probe type requires 2 arguments", prov);
		return -1;
	}
	static const char *const units[] = { "s", "ms", "us", "hz" };
	bool ok = false;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(parts[1], units[i]))
			ok = true;
	if (!ok) {
		diag_error(diags, ap->loc, "%s is not an accepted unit of time", parts[1]);
		return -1;
	}
	uint64_t v;
	if (!strcmp(prov, "profile") && parse_num(parts[2], &v) && v == 0) {
		diag_error(diags, ap->loc, "profile frequency should be a positive integer");
		return -1;
	}
	if (!parse_num(parts[2], &v) || v == 0) {
		diag_error(diags, ap->loc, "Invalid rate of %s probe: '%s'", prov, parts[2]);
		return -1;
	}
	a->target = xstrdup(parts[1]);
	a->freq = v;
	return 0;
}

/*
 * interval:1s, interval:100ms, profile:10us (bpftrace 0.26): a duration as
 * the period, kept as the unit and count 0.17 writes (`interval:ms:100`);
 * m, h and d in seconds, ns in microseconds when it is a whole number of
 * them.  False when part is not a duration (the usual parse says why).
 */
static bool duration_rate(struct ast_node *ap, const char *part)
{
	static const struct {
		const char *suffix, *unit;
		uint64_t mult;
	} d[] = {{"ns", "us", 0}, {"us", "us", 1},  {"ms", "ms", 1},  {"s", "s", 1},
		 {"m", "s", 60},  {"h", "s", 3600}, {"d", "s", 86400}};
	char *end;
	errno = 0;
	uint64_t v = strtoull(part, &end, 10);
	if (end == part || errno)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(d); i++) {
		if (strcmp(end, d[i].suffix))
			continue;
		uint64_t n = d[i].mult ? v * d[i].mult : v / 1000;
		if (!v || (!d[i].mult && v % 1000) || (d[i].mult && n / d[i].mult != v) ||
		    n > 1ull << 40) {
			/* 0, a part of a microsecond, or beyond 34,000 years */
			ap->attach.target = xstrdup("");
			return true;
		}
		ap->attach.target = xstrdup(d[i].unit);
		ap->attach.freq = n;
		return true;
	}
	return false;
}

/* Listing: `*:BIN:NAME`, `*sleep*` (see parse_listing in ast.h). */
static int parse_list_pattern(struct ast_node *ap, char **parts, int n)
{
	struct ast_attach *a = &ap->attach;
	a->provider = xstrdup(n == 1 ? "*" : parts[0]);
	if (n >= 3)
		a->target = xstrdup(parts[1]);
	if (n == 4)
		a->ns = xstrdup(parts[2]);
	a->func = xstrdup(n == 1 ? parts[0] : parts[n - 1 < 3 ? n - 1 : 3]);
	a->wildcard = true;
	return 0;
}

/*
 * The two tracepoint categories ubt serves without the kernel: every system
 * call passes through a `syscall` instruction of the process itself
 * (docs/ARCHITECTURE.md, "System-call tracepoints").  Any other category,
 * or a pattern in the category, stays the kernel tracer's.
 */
static bool is_syscall_category(const char *cat)
{
	return !strcmp(cat, "syscalls") || !strcmp(cat, "raw_syscalls");
}

/*
 * uprobe:BIN@FILE:LINE[:COL] (bpftrace 0.26): a probe at the statements of
 * a source line, found in BIN's DWARF line table when resolving
 * (resolve/srcline.c).  bpftrace 0.26's messages.
 */
static int parse_source_line(struct ast_node *ap, struct diags *diags, char **parts, int nargs,
			     const char *prov)
{
	struct ast_attach *a = &ap->attach;
	char *at = strchr(parts[1], '@');
	if (!strcmp(prov, "uretprobe")) {
		diag_error(diags, ap->loc, "Source code location not allowed");
		return -1;
	}
	if (at == parts[1] || !at[1] || (nargs != 2 && nargs != 3) || !*parts[2]) {
		diag_error(
		    diags, ap->loc,
		    "Invalid uprobe arguments, expected format: uprobe:TARGET@FILE:LINE[:COL]");
		return -1;
	}
	char *end;
	errno = 0;
	/* `*`: every line, for `ubt -l 'uprobe:BIN@FILE:*'` (a probe refuses it) */
	bool every = !strcmp(parts[2], "*") && nargs == 2;
	unsigned long line = every ? 0 : strtoul(parts[2], &end, 10);
	if (!every && (*end || errno || !line || line > UINT32_MAX)) {
		diag_error(diags, ap->loc, "Invalid line number: %s", parts[2]);
		return -1;
	}
	unsigned long col = 0;
	if (nargs == 3) {
		col = strtoul(parts[3], &end, 10);
		if (!*parts[3] || *end || errno || col > UINT32_MAX) {
			diag_error(diags, ap->loc, "Invalid column number: %s", parts[3]);
			return -1;
		}
	}
	*at = '\0';
	if (attach_is_wild(parts[1])) {
		diag_error(diags, ap->loc, "Cannot use wildcards with source code location");
		return -1;
	}
	a->provider = xstrdup(prov);
	a->target = xstrdup(parts[1]);
	a->src_file = xstrdup(at + 1);
	a->src_line = (uint32_t)line;
	a->src_col = (uint32_t)col;
	return 0;
}

/* "uprobe:./t:f" -> provider "uprobe", target "./t", func "f". */
static int parse_attach(struct ast_node *ap, struct diags *diags)
{
	char *parts[8] = {0};
	int n = split_attach(ap->str, parts, (int)ARRAY_SIZE(parts));
	int ret = -1, which = -1;
	if (parse_listing && (n == 1 || attach_is_wild(parts[0]))) {
		ret = parse_list_pattern(ap, parts, n);
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(providers); i++)
		if (!strcmp(parts[0], providers[i].name) ||
		    (providers[i].alias && !strcmp(parts[0], providers[i].alias)))
			which = (int)i;
	if (which < 0) {
		diag_error(diags, ap->loc, "Invalid probe type: %s", parts[0]);
		goto out;
	}
	const char *prov = providers[which].name;
	int nargs = n - 1;
	if ((!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe")) && nargs >= 1 &&
	    strchr(parts[1], '@')) {
		ret = parse_source_line(ap, diags, parts, nargs, prov);
		goto out;
	}
	if ((!strcmp(prov, "interval") || !strcmp(prov, "profile")) && nargs == 1 &&
	    duration_rate(ap, parts[1])) {
		ap->attach.provider = xstrdup(prov);
		ret = 0;
		if (!*ap->attach.target) { /* a duration ubt cannot time */
			diag_error(diags, ap->loc, "Invalid rate of %s probe: '%s'", prov,
				   parts[1]);
			ret = -1;
		}
		goto out;
	}
	/* uprobe:BIN:cpp:NAME and uprobe:BIN:c:NAME name the function's language */
	bool lang = (!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe")) && nargs == 3 &&
		    (!strcmp(parts[2], "cpp") || !strcmp(parts[2], "c"));
	/* `usdt:*` with -p: every probe of the process; listing: `uprobe:*` too */
	bool usdt_all = nargs == 1 && parse_have_pid &&
			(!strcmp(prov, "usdt") || (parse_listing && (!strcmp(prov, "uprobe") ||
								     !strcmp(prov, "uretprobe"))));
	int min = !strcmp(prov, "usdt") ? 2 : providers[which].min;
	if ((!lang && !usdt_all && (nargs < min || nargs > providers[which].max)) ||
	    n > (int)ARRAY_SIZE(parts)) {
		if (min == providers[which].max)
			diag_error(diags, ap->loc, "%s probe type requires %d argument%s", prov, min,
				   min == 1 ? "" : "s");
		else
			diag_error(diags, ap->loc, "%s probe type requires %d or %d arguments", prov, min,
				   providers[which].max);
		goto out;
	}
	struct ast_attach *a = &ap->attach;
	a->provider = xstrdup(prov);
	a->kernel = providers[which].kernel;
	if (!strcmp(prov, "tracepoint") && is_syscall_category(parts[1])) {
		/* served in user space (issue 16): the event's name may be a pattern */
		a->kernel = false;
		a->target = xstrdup(parts[1]);
		a->func = xstrdup(parts[2]);
		a->wildcard = attach_is_wild(a->func);
		ret = 0;
	} else if (a->kernel) {
		/* kept for the message; the parts are not interpreted */
		if (nargs >= 2)
			a->target = xstrdup(parts[1]);
		a->func = xstrdup(parts[nargs]);
		ret = 0;
	} else if (!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe")) {
		ret = parse_user_func(ap, diags, parts, nargs, prov, false);
	} else if (usdt_all) {
		a->target = xstrdup("");
		a->func = xstrdup(parts[1]);
		a->wildcard = attach_is_wild(a->func);
		ret = 0;
	} else if (!strcmp(prov, "usdt")) {
		ret = parse_user_func(ap, diags, parts, nargs, prov, true);
	} else if (!strcmp(prov, "interval") || !strcmp(prov, "profile")) {
		ret = parse_rate(ap, diags, parts, nargs, prov);
	} else {
		ret = 0; /* BEGIN, END */
	}
out:
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(parts); i++)
		free(parts[i]);
	return ret;
}

bool parse_have_pid, parse_listing;

int parse_attach_points(struct ast_node *prog, struct diags *diags)
{
	int ret = 0;
	for (int i = 0; i < prog->nkids; i++) {
		struct ast_node *probe = prog->kids[i];
		/* bpftrace drops empty attach points ("BEGIN, { }"); a probe left
		 * with none is an error. */
		int k = 0;
		for (int j = 0; j < probe->nkids; j++) {
			if (probe->kids[j]->str[0])
				probe->kids[k++] = probe->kids[j];
			else if (k || j + 1 < probe->nkids)
				ast_free(probe->kids[j]);
			else
				probe->kids[k++] = probe->kids[j];
		}
		probe->nkids = k;
		if (k == 1 && !probe->kids[0]->str[0]) {
			diag_error(diags, probe->kids[0]->loc, "No attach points for probe");
			ret = -1;
			continue;
		}
		for (int j = 0; j < probe->nkids; j++)
			if (parse_attach(probe->kids[j], diags))
				ret = -1;
	}
	return ret;
}
