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
 * saying they need the kernel tracer. */
static const struct {
	const char *name, *alias;
	bool kernel;
	int min, max; /* parts after the provider */
} providers[] = {
	{ "BEGIN", NULL, false, 0, 0 },          { "END", NULL, false, 0, 0 },
	{ "uprobe", "u", false, 2, 2 },          { "uretprobe", "ur", false, 2, 2 },
	{ "usdt", "U", false, 2, 3 },            { "interval", "i", false, 2, 2 },
	{ "profile", "p", false, 2, 2 },         { "kprobe", "k", true, 1, 1 },
	{ "kretprobe", "kr", true, 1, 1 },       { "tracepoint", "t", true, 2, 2 },
	{ "rawtracepoint", "rt", true, 1, 1 },   { "software", "s", true, 1, 2 },
	{ "hardware", "h", true, 1, 2 },         { "watchpoint", "w", true, 3, 3 },
	{ "asyncwatchpoint", "aw", true, 3, 3 }, { "kfunc", "f", true, 1, 1 },
	{ "kretfunc", "fr", true, 1, 1 },        { "iter", "it", true, 1, 1 },
	{ "fentry", NULL, true, 1, 1 },          { "fexit", NULL, true, 1, 1 },
};

static bool has_wildcard(const char *s)
{
	return s && strpbrk(s, "*?[") != NULL;
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

/* Splits "a:b:"c:d"" at ':' outside double quotes and removes the quotes. */
static int split_attach(char *text, char **parts, int max)
{
	int n = 0;
	char *w = text, *start = text;
	bool quoted = false;
	for (char *p = text;; p++) {
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		if ((*p == ':' && !quoted) || !*p) {
			bool end = !*p;
			*w++ = '\0';
			if (n < max)
				parts[n] = start;
			n++;
			start = w;
			if (end)
				break;
			continue;
		}
		*w++ = *p;
	}
	return n;
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
	if (n >= 2 && !*parts[1]) {
		diag_error(diags, ap->loc, "%s should have a target", prov);
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
	const char *plus = usdt ? NULL : strchr(func, '+');
	if (plus) {
		if (!parse_num(plus + 1, &v)) {
			diag_error(diags, ap->loc, "Invalid offset in %s probe: %s", prov, plus + 1);
			return -1;
		}
		a->offset = v;
		a->func = xstrndup(func, (size_t)(plus - func));
	} else {
		a->func = xstrdup(func);
	}
	a->wildcard = has_wildcard(a->target) || has_wildcard(a->ns) || has_wildcard(a->func);
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

/* "uprobe:./t:f" -> provider "uprobe", target "./t", func "f". */
static int parse_attach(struct ast_node *ap, struct diags *diags)
{
	char *parts[8];
	char *text = xstrdup(ap->str);
	int n = split_attach(text, parts, (int)ARRAY_SIZE(parts));
	int ret = -1, which = -1;
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
	/* uprobe:BIN:cpp:NAME and uprobe:BIN:c:NAME name the function's language */
	bool lang = (!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe")) && nargs == 3 &&
		    (!strcmp(parts[2], "cpp") || !strcmp(parts[2], "c"));
	if ((!lang && (nargs < providers[which].min || nargs > providers[which].max)) ||
	    n > (int)ARRAY_SIZE(parts)) {
		if (providers[which].min == providers[which].max)
			diag_error(diags, ap->loc, "%s probe type requires %d argument%s", prov,
				   providers[which].min, providers[which].min == 1 ? "" : "s");
		else
			diag_error(diags, ap->loc, "%s probe type requires %d or %d arguments", prov,
				   providers[which].min, providers[which].max);
		goto out;
	}
	struct ast_attach *a = &ap->attach;
	a->provider = xstrdup(prov);
	a->kernel = providers[which].kernel;
	if (a->kernel) {
		/* kept for the message; the parts are not interpreted */
		if (nargs >= 2)
			a->target = xstrdup(parts[1]);
		a->func = xstrdup(parts[nargs]);
		ret = 0;
	} else if (!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe")) {
		ret = parse_user_func(ap, diags, parts, nargs, prov, false);
	} else if (!strcmp(prov, "usdt")) {
		ret = parse_user_func(ap, diags, parts, nargs, prov, true);
	} else if (!strcmp(prov, "interval") || !strcmp(prov, "profile")) {
		ret = parse_rate(ap, diags, parts, nargs, prov);
	} else {
		ret = 0; /* BEGIN, END */
	}
out:
	free(text);
	return ret;
}

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
