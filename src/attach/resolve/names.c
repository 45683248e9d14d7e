/*
 * names.c - the `probe` builtin's value at each site.
 *
 * Pipeline position: the last step of att_resolve(), after every attach
 * point became att_points and before codegen.  bpftrace gives each expanded
 * attach point its own name:
 *
 *   uprobe:./t:m*,uretprobe:./t:add { @[probe] = count(); }
 *
 *   @[uprobe:./t:main]: 1
 *   @[uprobe:./t:mul]: 4
 *   @[uretprobe:./t:add]: 4
 *
 * The names are data, not code: a probe that reads `probe` is compiled
 * once per distinct argument list (one for every uprobe site, one per
 * usdt list, one per system call), and the names of its sites go into
 * one table (cg_usdt_variants.names, codegen.h), which its code indexes
 * by the id each site's trampoline passes (runtime/abi.h, "Site ids";
 * att_point.name_id).  A variant whose sites all have one name (a single
 * function, a usdt location whose argument list is its own) keeps the
 * name as a constant, so `@[probe]` there still hashes a constant key.
 * Why: one variant per name made `uprobe:libc:* { @[probe] = count(); }`
 * compile 3,600 functions (15 s, and more than codegen could check);
 * the table costs a wildcard probe a load of its id and a copy of its
 * name into the key.  The variants go into the session's
 * cg_usdt_variants list, which codegen compiles as ubt_probe_<N>_u<K>
 * and attach calls per point (att_point.variant).
 */
#include "attach/session.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The probe's code reads `probe`. */
static bool reads_probe(const struct ast_node *n)
{
	if (!n)
		return false;
	if (n->kind == AST_BUILTIN && !strcmp(n->str, "probe"))
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (reads_probe(sub[i]))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (reads_probe(n->kids[i]))
			return true;
	return false;
}

/* bpftrace's name of one expanded point: uprobe:./t:mul, usdt:./t:prov:name,
 * tracepoint:syscalls:sys_enter_write (func is the event) */
static char *point_name(const struct att_point *p)
{
	if (p->sys_kind)
		return xasprintf("tracepoint:%s:%s", p->attach->attach.target, p->func);
	return xasprintf("%s:%s:%s", p->attach->attach.provider, p->path, p->func);
}

/* The variant of an argument list (NULL: a site that is not a usdt location). */
static int variant_add(struct cg_usdt_variants *v, const struct cg_usdt_spec *spec)
{
	for (int k = 0; k < v->nspecs; k++)
		if (spec ? !memcmp(&v->specs[k], spec, sizeof(*spec)) : v->specs[k].nargs < 0)
			return k;
	v->specs = xrealloc(v->specs, (v->nspecs + 1) * sizeof(*v->specs));
	v->name_of = xrealloc(v->name_of, (v->nspecs + 1) * sizeof(*v->name_of));
	if (spec) {
		v->specs[v->nspecs] = *spec;
	} else {
		memset(&v->specs[v->nspecs], 0, sizeof(*v->specs));
		v->specs[v->nspecs].nargs = -1;
	}
	v->name_of[v->nspecs] = -2; /* no site yet */
	return v->nspecs++;
}

/*
 * The distinct names of a probe's sites, found through a hash table of
 * their indices (open addressing, 2x the points): a libc wildcard has
 * thousands, which a linear search would compare pairwise.
 */
struct name_set {
	int *slot; /* index into names + 1, 0: empty */
	size_t cap;
};

static size_t name_hash(const char *s)
{
	size_t h = 14695981039346656037ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* The id of name (taken) in v->names, adding it if new. */
static int name_add(struct cg_usdt_variants *v, struct name_set *set, char *name)
{
	size_t i = name_hash(name) & (set->cap - 1);
	for (; set->slot[i]; i = (i + 1) & (set->cap - 1))
		if (!strcmp(v->names[set->slot[i] - 1], name)) {
			free(name);
			return set->slot[i] - 1;
		}
	v->names = xrealloc(v->names, (v->nnames + 1) * sizeof(*v->names));
	v->names[v->nnames] = name;
	set->slot[i] = ++v->nnames;
	return v->nnames - 1;
}

/* Probe `index`: every point gets a variant (its argument list) and a name id. */
static void name_probe(struct att_session *s, int index)
{
	struct cg_usdt_variants *old = NULL, nv = {.probe_index = index};
	struct name_set set = {.cap = 16};
	while (set.cap < 2 * (size_t)s->npoints)
		set.cap *= 2;
	set.slot = xcalloc(set.cap, sizeof(*set.slot));
	for (int i = 0; i < s->nusdt; i++)
		if (s->usdt[i].probe_index == index)
			old = &s->usdt[i];
	for (int i = 0; i < s->npoints; i++) {
		struct att_point *p = &s->points[i];
		if (p->probe_index != index)
			continue;
		const struct cg_usdt_spec *spec = p->usdt && old ? &old->specs[p->variant] : NULL;
		struct cg_usdt_spec sys;
		memset(&sys, 0, sizeof(sys)); /* compared with memcmp, padding too */
		sys.nargs = -1;
		sys.sys_nr = p->sys_nr;
		sys.sys_kind = p->sys_kind;
		sys.sys_dyn = p->sys_dyn;
		if (p->sys_kind)
			spec = &sys;
		p->variant = variant_add(&nv, spec);
		p->name_id = name_add(&nv, &set, point_name(p));
		int *of = &nv.name_of[p->variant];
		*of = *of == -2 || *of == p->name_id ? p->name_id : -1;
	}
	free(set.slot);
	if (!nv.nspecs)
		return;
	if (old) {
		free(old->specs);
		att_probe_names_free(old);
		*old = nv;
		return;
	}
	s->usdt = xrealloc(s->usdt, (s->nusdt + 1) * sizeof(*s->usdt));
	s->usdt[s->nusdt++] = nv;
}

/* A probe with system-call sites: each call's number is a constant of its variant. */
static bool has_sys_sites(const struct att_session *s, int index)
{
	for (int i = 0; i < s->npoints; i++)
		if (s->points[i].probe_index == index && s->points[i].sys_kind)
			return true;
	return false;
}

/* Probe index has a system-call point before points[end] (named already). */
static bool has_sys_sites_before(const struct att_session *s, int index, int end)
{
	for (int i = 0; i < end; i++)
		if (s->points[i].probe_index == index && s->points[i].sys_kind)
			return true;
	return false;
}

void att_probe_names(const struct ast_node *prog, struct att_session *s)
{
	for (int i = 0; i < prog->nkids; i++) {
		const struct ast_node *probe = prog->kids[i];
		if (reads_probe(probe->pred) || reads_probe(probe->body) || has_sys_sites(s, i))
			name_probe(s, i);
	}
}

void att_probe_names_sys(struct att_session *s)
{
	int done = -1;
	for (int i = 0; i < s->npoints; i++) {
		int index = s->points[i].probe_index;
		if (!s->points[i].sys_kind || index == done || has_sys_sites_before(s, index, i))
			continue;
		name_probe(s, index);
		done = index;
	}
}

/*
 * Before sema: the longest name each probe that reads `probe` gives, from
 * its points resolved into a scratch session (as att_dwarf_args does);
 * resolution errors are left for att_resolve() to report.
 */
void att_probe_name_sizes(struct ast_node *prog, pid_t pid)
{
	for (int i = 0; i < prog->nkids; i++) {
		struct ast_node *probe = prog->kids[i];
		if (!reads_probe(probe->pred) && !reads_probe(probe->body))
			continue;
		struct att_session *tmp = xcalloc(1, sizeof(*tmp));
		struct diags quiet;
		diag_init(&quiet, "", "", 0);
		tmp->pid_hint = pid;
		for (int j = 0; j < probe->nkids; j++) {
			const struct ast_node *a = probe->kids[j];
			const char *prov = a->attach.provider ? a->attach.provider : "";
			int len = (int)strlen(a->str);
			if (!strcmp(prov, "usdt"))
				att_usdt_resolve(probe, i, a, tmp, &quiet);
			else if (!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe"))
				att_resolve_one(probe, i, a, tmp, &quiet);
			if (a->attach.target && a->attach.func)
				len = (int)(strlen(prov) + strlen(a->attach.target) +
					    strlen(a->attach.func) + 2);
			if (att_sys_name_len(a) > len) /* sys_enter_* expanded */
				len = att_sys_name_len(a);
			if (len > probe->probe_name_len)
				probe->probe_name_len = len;
		}
		for (int k = 0; k < tmp->npoints; k++) {
			char *name = point_name(&tmp->points[k]);
			if ((int)strlen(name) > probe->probe_name_len)
				probe->probe_name_len = (int)strlen(name);
			free(name);
			free(tmp->points[k].path);
			free(tmp->points[k].func);
		}
		free(tmp->points);
		att_usdt_free(tmp);
		free(tmp);
		diag_free(&quiet);
	}
}

void att_probe_names_free(struct cg_usdt_variants *v)
{
	for (int k = 0; v->names && k < v->nnames; k++)
		free(v->names[k]);
	free(v->names);
	free(v->name_of);
	v->names = NULL;
	v->name_of = NULL;
	v->nnames = 0;
}
