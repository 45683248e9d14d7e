/*
 * plan_mid.c - the sites of mid-function probes: uprobes at FUNC+OFFSET
 * or at an address inside a function, and USDT locations.
 *
 * Pipeline position: during att_install(), once the process is open and its
 * mappings known (session.c's att_plan_sites()).  resolve/ found the places
 * in the files (att_point: link-time addresses); here each becomes a site at
 * its load address, planned from the code the target has there (read with
 * ptrace), which is why this is inject's and not resolve's: resolve reads
 * files only.  Several points at one address share one site.
 */
#include "attach/session.h"
#include "attach/inject/session_internal.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the sites of both kinds ------------------------------------------ */

/* The site planned for the location at addr (its jump may start at the
 * instruction before: plan.mid_at), or NULL. */
static struct att_site *site_at(struct att_session *s, uint64_t addr)
{
	struct att_site *site = NULL;
	for (int j = 0; j < s->nsites; j++)
		if (s->sites[j].plan.site + s->sites[j].plan.mid_at == addr)
			site = &s->sites[j];
	return site;
}

/* The target's memory for the planner's jump tables (arch_mem). */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return tracee_read(ctx, addr, buf, len);
}

/*
 * A new mid-function site at addr, in the function at func (func_size
 * bytes, 0 if unknown, known from `from`, followed by fill bytes of
 * alignment fill no function owns), planned from the code the target has
 * there; others: the locations planned in the same pass, which its patch
 * must not cover.  0; -E2BIG with *out NULL (said here); or the -errno of reading
 * or decoding the code, with *out set (the caller says it, naming the point).
 */
static int mid_site_new(struct att_session *s, uint64_t addr, uint64_t func, uint64_t func_size,
			uint64_t fill, enum ef_bounds from, const uint64_t *others, int nothers,
			struct att_site **out)
{
	*out = NULL;
	if (s->nsites >= s->max_sites) {
		diag_sys(NULL, "internal: more than %d probed locations", s->max_sites);
		return -E2BIG;
	}
	struct att_site *site = *out = &s->sites[s->nsites++];
	memset(site, 0, sizeof(*site));
	site->mid = true;
	site->island = -1; /* not placed yet (placement.c groups sites by reach) */
	site->func_addr = func;
	site->func_len = func_size;
	site->func_from = from;
	if (!func_size)
		fill = 0;
	size_t len = func_size ? func_size + fill : (size_t)(addr - func) + ARCH_MAX_DISPLACED;
	uint8_t *code = xmalloc(len);
	int ret = tracee_read(&s->t, func, code, len);
	if (ret && fill) /* the fill is the file's: mapped like the code, but be sure */
		ret = tracee_read(&s->t, func, code, len -= fill), fill = 0;
	if (!ret) {
		/* the bytes the sites planned before write: a hop keeps out of them */
		int nsites = (int)(site - s->sites), ntaken = 0;
		struct arch_range *taken =
		    xcalloc((size_t)nsites * (1 + ARCH_MAX_HOPS) + 1, sizeof(*taken));
		for (int i = 0; i < nsites; i++) {
			const struct arch_site_plan *pl = &s->sites[i].plan;
			taken[ntaken++] = (struct arch_range){pl->site, pl->site + pl->orig_len};
			for (int h = 0; h < pl->nhops; h++)
				taken[ntaken++] = (struct arch_range){pl->hop[h].at,
								      pl->hop[h].at + ARCH_HOP_LEN};
		}
		struct arch_mem mem = {read_target, &s->t, taken, ntaken};
		ret = arch_plan_mid_site(code, func_size, fill, func, addr, others, nothers, &mem,
					 &site->plan);
		free(taken);
	}
	free(code);
	return ret;
}

/*
 * p's probe becomes one more handler of site, for the location at
 * site + hoff (0, or one the site's jump covers: plan.mid_cover); the
 * handlers stay in address order, in program order at one location, and
 * those after the first instruction (a system call's exit side,
 * p->sys_after) stay last.
 */
static int mid_site_add(struct att_site *site, const struct att_point *p, int hoff)
{
	if (site->nhandlers == (int)ARRAY_SIZE(site->handlers)) {
		diag_sys(NULL, "%s:%s: too many probes on one location", p->path, p->func);
		return -E2BIG;
	}
	/* a location after the jump's first instruction (plan.mid_at): all its
	 * handlers run after that instruction, in program order */
	bool after = p->sys_after || site->plan.mid_at;
	if (site->plan.mid_at)
		hoff = site->plan.mid_at;
	int at = site->nhandlers;
	if (!after)
		for (at -= site->plan.mid_after; at > 0 && site->plan.mid_hoff[at - 1] > hoff;)
			at--;
	for (int i = site->nhandlers; i > at; i--) {
		site->variants[i] = site->variants[i - 1];
		site->name_ids[i] = site->name_ids[i - 1];
		site->handlers[i] = site->handlers[i - 1];
		site->plan.mid_hoff[i] = site->plan.mid_hoff[i - 1];
	}
	site->variants[at] = p->variant;
	site->name_ids[at] = p->name_id;
	site->handlers[at] = (uint64_t)p->probe_index;
	site->plan.mid_hoff[at] = (uint8_t)hoff;
	site->nhandlers++;
	if (after)
		site->plan.mid_after++;
	return 0;
}

/*
 * The site whose jump covers the usdt location at addr as one of its own
 * (plan.mid_cover: only nops before it), or NULL.
 */
static struct att_site *site_covering(struct att_session *s, uint64_t addr)
{
	for (int j = 0; j < s->nsites; j++) {
		struct att_site *o = &s->sites[j];
		uint64_t k = addr - o->plan.site;
		if (o->mid && o->plan.kind == ARCH_PATCH_JMP && addr > o->plan.site &&
		    k < (uint64_t)o->plan.orig_len && (o->plan.mid_cover >> k & 1))
			return o;
	}
	return NULL;
}

/* ---- uprobes at FUNC+OFFSET or an address inside a function ------------- */

/* Slots of struct rt_regs_mid a system-call site's `args` reads (codegen cg_args.c):
 * the six argument registers before the call, its result after it. */
static uint32_t sys_regs(const struct att_point *p)
{
#define SLOT(r) (1u << offsetof(struct rt_regs_mid, r) / 8)
	if (p->sys_kind == CG_SYS_ENTER && p->sys_nr < 0) /* and the number in rax */
		return SLOT(rdi) | SLOT(rsi) | SLOT(rdx) | SLOT(r10) | SLOT(r8) | SLOT(r9) |
		       SLOT(rax);
	if (p->sys_kind == CG_SYS_ENTER)
		return SLOT(rdi) | SLOT(rsi) | SLOT(rdx) | SLOT(r10) | SLOT(r8) | SLOT(r9);
	return p->sys_kind == CG_SYS_EXIT ? SLOT(rax) : 0;
#undef SLOT
}

/* 1 if no point before p is at p's address in p's file */
static int first_at(const struct att_session *s, const struct att_point *p)
{
	for (const struct att_point *q = s->points; q < p; q++)
		if (q->vaddr == p->vaddr && q->dev == p->dev && q->ino == p->ino)
			return 0;
	return 1;
}

/*
 * The site of a FUNC+OFFSET point (usdt locations are planned before:
 * att_plan_mids), kept out of the jumps of the others locations (avoid[]):
 * one inside a usdt location's jump after only nops is one more handler
 * of that site, as a usdt location is.
 */
static int plan_mid_point(struct att_session *s, const struct att_point *p, uint64_t bias,
			  const uint64_t *avoid, int navoid)
{
	uint64_t addr = bias + p->vaddr, func = bias + p->func_vaddr;
	struct att_site *site = site_at(s, addr), *cover = site ? NULL : site_covering(s, addr);
	for (int j = 0; j < s->nsites; j++) {
		const struct att_site *o = &s->sites[j];
		if (!o->mid && addr > o->plan.site && addr < o->plan.site + (uint64_t)o->plan.orig_len) {
			diag_sys("probe one of them only, or the other at an offset past the jump",
				 "%s:%s: the jump patched at the function's entry (0x%llx) covers "
				 "this probe's address 0x%llx",
				 p->path, p->func, (unsigned long long)o->plan.site,
				 (unsigned long long)addr);
			return -EINVAL;
		}
	}
	if (site && !site->mid) {
		diag_sys(NULL, "%s:%s: two kinds of probe at the same address 0x%llx", p->path,
			 p->func, (unsigned long long)addr);
		return -EINVAL;
	}
	if (cover && p->sys_kind != CG_SYS_NONE) {
		/* its handlers would run before the nops, or after the first of
		 * them: not a system call's place */
		s->sys_nojump += first_at(s, p);
		return 0;
	}
	if (cover) {
		cover->plan.mid_read |= sys_regs(p);
		return mid_site_add(cover, p, (int)(addr - cover->plan.site));
	}
	if (!site) {
		int ret = mid_site_new(s, addr, func, p->func_size, 0, p->func_from, avoid, navoid,
				       &site);
		if (ret && site)
			diag_sys(NULL, "%s:%s: cannot decode its code: %s", p->path, p->func,
				 strerror(-ret));
		if (ret)
			return ret;
		/* a system call's exit handlers run after its first instruction,
		 * which a jump from the instruction before would make that one */
		if (p->sys_kind != CG_SYS_NONE && site->plan.mid_at)
			arch_plan_to_int3(&site->plan,
					  "too close to the end of the function for a jmp");
		if (p->sys_at_insn && site->plan.kind != ARCH_PATCH_JMP) {
			/* a breakpoint per system call would cost every call made
			 * there ~2 us, wanted or not: left unpatched, counted */
			s->nsites--;
			s->sys_nojump += first_at(s, p);
			return 0;
		}
		if (p->vaddr == p->func_vaddr && p->sys_kind == CG_SYS_NONE)
			att_xref_check(s, p, site); /* a function's entry: others jump past it */
		att_warn_breakpoint(p, site, 0);
	}
	site->plan.mid_read |= sys_regs(p);
	return mid_site_add(site, p, 0);
}

void att_warn_breakpoint(const struct att_point *p, const struct att_site *site, uint64_t vaddr)
{
	if (site->plan.kind == ARCH_PATCH_JMP)
		return;
	fprintf(stderr, "WARNING: %s:%s", p->path, p->func);
	if (vaddr)
		fprintf(stderr, " at 0x%llx", (unsigned long long)vaddr);
	fprintf(stderr, ": using a breakpoint (about 2 us per hit) instead of a jump: %s\n",
		site->plan.why);
}

void att_point_not_loaded(struct att_session *s, struct att_point *p)
{
	/* uprobes (entry and FUNC+OFFSET) and uretprobes are armed when the
	 * library is loaded (dlopen.c); usdt probes are not */
	bool later = !strcmp(p->attach->attach.provider, "uprobe") ||
		     !strcmp(p->attach->attach.provider, "uretprobe");
	p->pending = later;
	/* once per file */
	for (const struct att_point *q = s->points; q < p; q++)
		if (q->dev == p->dev && q->ino == p->ino)
			return;
	if (later)
		fprintf(stderr, "WARNING: %s is not loaded in pid %d: its probes will be attached "
				"when it is\n", p->path, (int)s->t.pid);
	else
		fprintf(stderr, "WARNING: %s is not loaded in pid %d: its probes are not attached\n",
			p->path, (int)s->t.pid);
}

/* ---- usdt locations --------------------------------------------------- */

/* a semaphore to take at arm (features/usdt_sema.c), once per address */
static int sema_add(struct att_session *s, uint64_t addr)
{
	for (int i = 0; i < s->nsemas; i++)
		if (s->semas[i].addr == addr)
			return 0;
	if (s->nsemas == ATT_MAX_SEMAS) {
		diag_sys(NULL, "more than %d usdt semaphores", ATT_MAX_SEMAS);
		return -E2BIG;
	}
	s->semas[s->nsemas++] = (struct att_sema){addr, false};
	return 0;
}

static int load_bias(struct att_session *s, const struct att_point *p, const struct proc_map *maps,
		     int nmaps, uint64_t *bias)
{
	int ret = att_point_bias(s, p, maps, nmaps, bias);
	if (ret)
		diag_sys(NULL, "pid %d: %s is not loaded in the process", s->t.pid, p->path);
	return ret ? -ENOENT : 0;
}

/* Slots of struct rt_regs_mid point p's argument list reads (bit = offset / 8). */
static uint32_t regs_read(const struct att_session *s, const struct att_point *p)
{
	uint32_t m = 0;
	for (int i = 0; i < s->nusdt; i++) {
		if (s->usdt[i].probe_index != p->probe_index)
			continue;
		const struct cg_usdt_spec *spec = &s->usdt[i].specs[p->variant];
		for (int k = 0; k < spec->nargs; k++) {
			if (spec->args[k].reg != CG_USDT_NOREG)
				m |= 1u << (spec->args[k].reg / 8);
			if (spec->args[k].index != CG_USDT_NOREG)
				m |= 1u << (spec->args[k].index / 8);
			if (spec->args[k].pcrel)
				m |= 1u << (offsetof(struct rt_regs_mid, pc) / 8);
		}
	}
	return m;
}

/*
 * One site per distinct location address, planned as a mid-function site;
 * semaphores are recorded for att_arm().  Called by session.c's planning
 * with the target's mappings.
 */
/* qsort_r order of point indices: by load address, then program order */
static int by_addr(const void *a, const void *b, void *arg)
{
	const uint64_t *at = arg;
	int i = *(const int *)a, j = *(const int *)b;
	if (at[i] != at[j])
		return at[i] < at[j] ? -1 : 1;
	return i - j;
}

static int usdt_plan(struct att_session *s, const uint64_t *bias, uint64_t *at,
		     const uint64_t *addrs, int naddrs)
{
	int *order = xcalloc(s->npoints + 1, sizeof(*order));
	int ret = 0, n = 0;
	for (int i = 0; i < s->npoints; i++)
		if (s->points[i].usdt)
			order[n++] = i;
	/* in address order, so that a location is planned before the ones its jump may cover */
	qsort_r(order, n, sizeof(*order), by_addr, at);
	for (int o = 0; o < n && !ret; o++) {
		int i = order[o];
		struct att_point *p = &s->points[i];
		uint64_t addr = bias[i] + p->vaddr, func = bias[i] + p->func_vaddr;
		if (p->sema && (ret = sema_add(s, bias[i] + p->sema)))
			break;
		struct att_site *site = site_at(s, addr),
				*cover = site ? NULL : site_covering(s, addr);
		if (cover) {
			if ((ret = mid_site_add(cover, p, (int)(addr - cover->plan.site))))
				break;
			cover->plan.mid_read |= regs_read(s, p);
			continue;
		}
		if (site && !site->mid) {
			diag_sys(NULL, "%s: a uprobe and a usdt probe at the same address 0x%llx",
				 p->path, (unsigned long long)addr);
			ret = -EINVAL;
			break;
		}
		if (!site) {
			ret = mid_site_new(s, addr, func, p->func_size, p->fill, p->func_from,
					   addrs, naddrs, &site);
			if (ret && site)
				diag_sys(NULL, "%s: usdt probe %s at 0x%llx: cannot decode its code: %s",
					 p->path, p->func, (unsigned long long)p->vaddr,
					 strerror(-ret));
			if (ret)
				break;
			att_warn_breakpoint(p, site, p->vaddr);
		}
		if ((ret = mid_site_add(site, p, 0)))
			break;
		site->plan.mid_read |= regs_read(s, p);
	}
	free(order);
	return ret;
}

int att_plan_mids(struct att_session *s, const struct proc_map *maps, int nmaps)
{
	uint64_t *addrs = xcalloc(s->npoints + 1, sizeof(*addrs)),
		 *bias = xcalloc(s->npoints + 1, 8);
	uint64_t *at = xcalloc(s->npoints + 1, sizeof(*at));
	int ret = 0, n = 0;
	/* every location, so that no site's jump covers another's */
	for (int i = 0; i < s->npoints && !ret; i++) {
		struct att_point *p = &s->points[i];
		if (p->usdt)
			ret = load_bias(s, p, maps, nmaps, &bias[i]);
		else if (p->mid && p->loaded)
			bias[i] = p->bias;
		else
			continue;
		at[i] = bias[i] + p->vaddr;
		addrs[n++] = at[i];
	}
	if (!ret)
		ret = usdt_plan(s, bias, at, addrs, n);
	for (int i = 0; i < s->npoints && !ret; i++)
		if (s->points[i].mid && s->points[i].loaded)
			ret = plan_mid_point(s, &s->points[i], s->points[i].bias, addrs, n);
	free(addrs);
	free(bias);
	free(at);
	return ret;
}
