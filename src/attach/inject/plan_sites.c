/*
 * plan_sites.c - planning the sites of a session: every point resolve/
 * found becomes a site at its load address, planned from the code the
 * target has there (a jump or a breakpoint, arch_plan_site), with ubt's
 * own internal sites; then the checks across sites (a branch one site
 * redirects or a hop it writes in another's bytes) and against the
 * process (another tracer's breakpoint in the planned bytes).  A static
 * program stopped at its entry gets its probes turned on at main
 * (att_plan_main_wait).
 *
 * Pipeline position: att_install (session.c), after att_open, with the
 * target's mappings read; mid-function sites are plan_mid.c's.
 */
#include "attach/inject/session_internal.h"
#include "attach/resolve/resolve.h"
#include "attach/session.h"
#include "attach/target/target.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The planned bytes of every site are the file's, or differ without a
 * breakpoint in them.  An int3 (0xcc) where the file has none is another
 * tracer's breakpoint: a kernel uprobe (bpftrace, perf probe) or a
 * debugger's.  A jump cannot be planned over it (the kernel would run the
 * file's instruction and go on inside our jump), and our int3 would hide
 * theirs: refused with the reason.  foreign_int3: 0, or -EBUSY (said)
 * when orig, the len bytes the process has at addr, holds an int3 that the
 * file has not there.
 */
static int foreign_int3(struct att_session *s, const struct proc_map *maps, int n, uint64_t addr,
			const uint8_t *orig, int len)
{
	uint8_t file[ARCH_MAX_DISPLACED];
	const struct proc_map *m = NULL;
	for (int k = 0; k < n && !m; k++)
		if (maps[k].start <= addr && addr + len <= maps[k].end && maps[k].path[0] == '/')
			m = &maps[k];
	if (!m || len > (int)sizeof(file) || !memchr(orig, 0xcc, len))
		return 0;
	char *path = xasprintf("/proc/%d/root%s", s->t.pid, m->path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	ssize_t got = fd < 0 ? -1 : pread(fd, file, len, (off_t)(addr - m->start + m->offset));
	if (fd >= 0)
		close(fd);
	if (got != len)
		return 0;
	for (int b = 0; b < len; b++) {
		if (orig[b] != 0xcc || file[b] == 0xcc)
			continue;
		diag_sys("end the other tracer's probe on this function first: a kernel uprobe "
			 "and ubt cannot share an instruction",
			 "pid %d: %s at 0x%llx holds a breakpoint that is not in the file: "
			 "another tracer (a kernel uprobe from bpftrace or perf, or a "
			 "debugger) probes it",
			 s->t.pid, m->path, (unsigned long long)(addr + b));
		return -EBUSY;
	}
	return 0;
}

/* foreign_int3() for every site's bytes and its hops' (fill, which may hold
 * int3s of its own: only one the file does not have counts) */
int att_check_foreign_breakpoints(struct att_session *s, const struct proc_map *maps, int n)
{
	int ret = 0;
	for (int i = 0; i < s->nsites && !ret; i++) {
		const struct arch_site_plan *pl = &s->sites[i].plan;
		ret = foreign_int3(s, maps, n, pl->site, pl->orig, pl->orig_len);
		for (int h = 0; h < pl->nhops && !ret; h++)
			ret =
			    foreign_int3(s, maps, n, pl->hop[h].at, pl->hop[h].orig, ARCH_HOP_LEN);
	}
	return ret;
}

/* ---- planning --------------------------------------------------------- */

/*
 * Opens the file behind mapping m as the target sees it (through
 * /proc/PID/root) and finds its load bias.  0 with *f open (the caller
 * closes it), or -errno with nothing open.
 */
int att_open_mapped(const struct att_session *s, const struct proc_map *m,
		    const struct proc_map *maps, int nmaps, struct ef_file *f, uint64_t *bias)
{
	char *path = xasprintf("/proc/%d/root%s", s->t.pid, m->path);
	int ret = ef_open(f, path);
	free(path);
	if (!ret && (ret = proc_load_bias(maps, nmaps, f, bias)))
		ef_close(f);
	return ret;
}

/*
 * Plans one of ubt's own entry probes (the runtime's C handler `handler`,
 * on a trampoline that passes struct rt_regs) on the function at addr,
 * size bytes long (0: unknown), as the next site.  jmp_only refuses a
 * site that would need a breakpoint.  0 (the site added) or -errno
 * (nothing added).
 */
int att_add_internal_site(struct att_session *s, uint64_t addr, uint64_t size, const char *handler,
			  bool jmp_only)
{
	if (s->nsites >= s->max_sites)
		return -E2BIG;
	size_t len = size ? size : ARCH_MAX_DISPLACED;
	uint8_t *code = xmalloc(len);
	struct att_site *site = &s->sites[s->nsites]; /* in the shared session */
	memset(site, 0, sizeof(*site));
	site->func_addr = addr;
	site->func_len = size;
	site->internal = handler;
	site->island = -1;
	int ret = tracee_read(&s->t, addr, code, len);
	if (!ret)
		ret = arch_plan_site(code, size, addr, addr, &site->plan);
	free(code);
	if (!ret && jmp_only && site->plan.kind != ARCH_PATCH_JMP)
		ret = -ENOTSUP;
	if (ret)
		return ret;
	site->nhandlers = 1;
	s->nsites++;
	return 0;
}

/*
 * One of ubt's own entry probes (att_add_internal_site, a jump only) on
 * the function named sym in f, loaded at bias: 0, -EEXIST when the script
 * probes that function itself, or -errno (nothing added).
 */
int att_add_internal_func(struct att_session *s, struct ef_file *f, uint64_t bias, const char *sym,
			  const char *handler)
{
	struct ef_symbol es = {0};
	int ret = ef_find_func(f, sym, &es);
	if (ret)
		return ret;
	uint64_t addr = bias + es.value, size = es.size;
	free(es.name);
	for (int i = 0; i < s->nsites; i++)
		if (s->sites[i].func_addr == addr)
			return -EEXIST; /* the script probes it too */
	return att_add_internal_site(s, addr, size, handler, true);
}

char *att_point_file(const struct att_session *s, const struct att_point *p)
{
	return att_open_path(s->t.pid, p->path);
}

int att_point_bias(const struct att_session *s, const struct att_point *p,
		   const struct proc_map *maps, int nmaps, uint64_t *bias)
{
	struct ef_file f = {0};
	char *path = att_point_file(s, p);
	int ret = ef_open(&f, path);
	free(path);
	if (!ret) {
		/* the file its addresses came from, not another one renamed over
		 * it since (an upgrade while ubt runs): those addresses mean
		 * nothing in another file's mapping */
		ret = p->ino && (f.dev != p->dev || f.ino != p->ino)
			  ? -ESTALE
			  : proc_load_bias(maps, nmaps, &f, bias);
		ef_close(&f);
	}
	return ret;
}

/*
 * A return probe's function cannot take the jump at its entry (the return
 * trampoline `call`s the relocated body: a breakpoint cannot).  One the
 * script names is an error; one a wildcard matched is skipped with a
 * warning, as the other matches attach: `uretprobe:libc:p*` must not fail
 * for pthread_rwlock_tryrdlock, whose loop branches back into its first
 * bytes.  0 when skipped, else -ENOTSUP (said).
 */
static int ret_without_jump(const struct att_point *p, const struct att_site *site)
{
	const struct ast_attach *at = &p->attach->attach;
	if (attach_is_wild(at->func) || attach_is_wild(at->target)) {
		fprintf(stderr,
			"WARNING: %s:%s: return probe not attached: it needs a jump at the "
			"function's entry: %s\n",
			p->path, p->func, site->plan.why);
		return 0;
	}
	diag_sys(NULL, "%s:%s: a return probe needs a jump at the function's entry: %s", p->path,
		 p->func, site->plan.why);
	return -ENOTSUP;
}

static int plan_sites(struct att_session *s, struct proc_map *maps, int nmaps)
{
	/* a wildcard's points share their file: its bias is found once (opening
	 * libc.so.6 for each of 3,679 points took ~0.3 s) */
	const struct att_point *last = NULL;
	uint64_t last_bias = 0;
	int last_ret = 0;
	for (int i = 0; i < s->npoints; i++) {
		struct att_point *p = &s->points[i];
		if (p->usdt)
			continue; /* usdt.c plans those */
		uint64_t bias = last_bias;
		int ret = last_ret;
		if (!last || strcmp(last->path, p->path))
			ret = att_point_bias(s, p, maps, nmaps, &bias);
		last = p;
		last_bias = bias;
		last_ret = ret;
		if (ret && !p->main_exe) { /* a library not loaded (yet) */
			att_point_not_loaded(s, p);
			continue;
		}
		if (ret) {
			diag_sys(NULL, "pid %d: %s is not loaded in the process", s->t.pid,
				 p->path);
			return -ENOENT;
		}
		if (p->mid) { /* FUNC+OFF: resolve.c plans it, after every entry site */
			p->bias = bias;
			p->loaded = true;
			continue;
		}
		uint64_t addr = bias + p->vaddr;
		struct att_site *site = NULL;
		bool is_ret = !strcmp(p->attach->attach.provider, "uretprobe"), fresh = false;
		for (int j = 0; j < s->nsites; j++)
			if (s->sites[j].func_addr == addr)
				site = &s->sites[j];
		if (!site) {
			fresh = true;
			if (s->nsites >= s->max_sites) {
				diag_sys(NULL, "internal: more than %d probed functions",
					 s->max_sites);
				return -E2BIG;
			}
			site = &s->sites[s->nsites++];
			memset(site, 0, sizeof(*site));
			site->func_addr = addr;
			site->func_len = p->size;
			site->island = -1;
			size_t len = p->size ? p->size + p->fill : ARCH_MAX_DISPLACED;
			uint8_t *code = xmalloc(len);
			ret = tracee_read(&s->t, addr, code, len);
			if (!ret)
				ret = arch_plan_site_padded(code, p->size, p->fill, addr, addr,
							    &site->plan);
			free(code);
			if (ret) {
				diag_sys(NULL, "%s:%s: cannot decode the function: %s", p->path,
					 p->func, strerror(-ret));
				return ret;
			}
			att_xref_check(s, p, site);
		}
		int *nh = is_ret ? &site->nrhandlers : &site->nhandlers;
		if (*nh == (int)ARRAY_SIZE(site->handlers)) {
			diag_sys(NULL, "%s:%s: too many probes on one function", p->path, p->func);
			return -E2BIG;
		}
		if (is_ret && site->plan.kind != ARCH_PATCH_JMP) {
			if ((ret = ret_without_jump(p, site)))
				return ret;
			if (fresh)
				s->nsites--; /* planned for this probe alone */
			continue;
		}
		if (fresh && !is_ret)
			att_warn_breakpoint(p, site, 0);
		if (is_ret && !*nh && (ret = att_features_check_return(s, p, addr))) {
			if (ret != -ECANCELED)
				return ret;
			if (!site->nhandlers && !site->nrhandlers)
				s->nsites--; /* planned for this probe alone */
			continue;
		}
		/* handler addresses are filled in after linking; keep the probe index */
		(is_ret ? site->rvariants : site->variants)[*nh] = p->variant;
		(is_ret ? site->rname_ids : site->name_ids)[*nh] = p->name_id;
		(is_ret ? site->rhandlers : site->handlers)[(*nh)++] = (uint64_t)p->probe_index;
	}
	int ret = att_plan_mids(s, maps, nmaps); /* usdt and FUNC+OFF */
	int nojump = s->sys_nojump - s->sys_nojump_said;
	if (nojump > 0)
		fprintf(stderr,
			"WARNING: %d system-call site%s take%s no jump (a jump table in the "
			"function, a branch into the bytes it would cover, or too little room): "
			"calls made there are not counted\n",
			nojump, nojump == 1 ? "" : "s", nojump == 1 ? "s" : "");
	s->sys_nojump_said = s->sys_nojump;
	return ret;
}

/* Does [a, a + n) overlap what site o writes: its patch, or one of its hops? */
static bool writes_over(const struct att_site *o, uint64_t a, uint64_t n)
{
	const struct arch_site_plan *op = &o->plan;
	if (a < op->site + (uint64_t)op->orig_len && op->site < a + n)
		return true;
	for (int h = 0; h < op->nhops; h++)
		if (a < op->hop[h].at + ARCH_HOP_LEN && op->hop[h].at < a + n)
			return true;
	return false;
}

/*
 * The other site whose bytes overlap what site i writes outside its own
 * patch: a branch it redirects (struct arch_redirect), or a hop (struct
 * arch_hop), which two sites may both have found in the same fill.  NULL
 * if none; *what says which of its own it is (*hop: a hop's address).
 */
static const struct att_site *overlap(struct att_session *s, int i, uint64_t *what, bool *hop)
{
	const struct arch_site_plan *pl = &s->sites[i].plan;
	for (int j = 0; j < s->nsites; j++) {
		if (j == i)
			continue;
		for (int k = 0; k < pl->nredirs; k++) {
			const struct arch_redirect *r = &pl->redir[k];
			if (writes_over(&s->sites[j], r->insn, r->at + r->len - r->insn)) {
				*what = r->insn;
				*hop = false;
				return &s->sites[j];
			}
		}
		for (int h = 0; h < pl->nhops; h++)
			if (writes_over(&s->sites[j], pl->hop[h].at, ARCH_HOP_LEN)) {
				*what = pl->hop[h].at;
				*hop = true;
				return &s->sites[j];
			}
	}
	return NULL;
}

/*
 * A site whose plan redirects branches into its trampoline (struct
 * arch_redirect) or has hops rewrites code outside its own bytes.  If
 * another site displaces one of those branches, that site's trampoline
 * would run the branch as the file has it, into the middle of the jump;
 * two hops in the same bytes would take each other's: the site takes an
 * int3 instead (1 byte, no redirect, no hop).  One that covers other
 * locations (a row of USDT probes, plan.mid_cover) cannot give them up
 * here: then attaching fails, saying why.
 */
static int check_redirects(struct att_session *s)
{
	for (int i = 0; i < s->nsites; i++) {
		struct att_site *site = &s->sites[i];
		uint64_t what = 0;
		bool hop = false;
		const struct att_site *o = overlap(s, i, &what, &hop);
		const char *mine = hop ? "the hop" : "the branch";
		if (!o)
			continue;
		if (site->plan.mid_cover) {
			diag_sys("probe one of them only",
				 "%s at 0x%llx leads into the jump at 0x%llx and is itself in the "
				 "bytes patched at 0x%llx",
				 mine, (unsigned long long)what,
				 (unsigned long long)site->plan.site,
				 (unsigned long long)o->plan.site);
			return -EINVAL;
		}
		arch_plan_to_int3(&site->plan,
				  "%s at 0x%llx into the patched bytes is in the bytes another "
				  "probe patches at 0x%llx",
				  mine, (unsigned long long)what, (unsigned long long)o->plan.site);
		fprintf(stderr,
			"WARNING: 0x%llx: using a breakpoint (about 2 us per hit) instead of a "
			"jump: %s\n",
			(unsigned long long)site->plan.site, site->plan.why);
	}
	return 0;
}

int att_plan_sites(struct att_session *s, struct proc_map *maps, int nmaps)
{
	int ret = plan_sites(s, maps, nmaps);
	att_xref_free(s); /* planning's alone */
	return ret ? ret : check_redirects(s);
}

/*
 * A static program that `ubt -c` stopped at its entry point has no thread
 * pointer yet (%fs base 0): its start-up code runs before it sets one, and
 * probe code there that reads %fs (a thread's slot, `tid`) killed it with
 * SIGSEGV.  The probes then stay off until ubt's own probe on the function
 * that calls main (glibc's __libc_start_call_main, else main; runtime
 * rt_tls_ready) turns them on: probes on the start-up code do not fire,
 * as with the dynamic loader's code under -c.  Without either function
 * nothing changes (and the program may not be glibc's).
 */
int att_plan_main_wait(struct att_session *s, const struct proc_map *maps, int nmaps)
{
	static const char *const funcs[] = {"__libc_start_call_main", "main"};
	char link[64], exe[PATH_MAX];
	s->wait_main = false;
	if (!s->t.is_child || !s->t.stopped || !s->t.nthreads || s->t.threads[0].regs.fs_base)
		return 0;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->t.pid);
	ssize_t len = readlink(link, exe, sizeof(exe) - 1);
	if (len <= 0)
		return 0;
	exe[len] = 0;
	const struct proc_map *m = NULL;
	for (int i = 0; i < nmaps && !m; i++)
		if (!strcmp(maps[i].path, exe))
			m = &maps[i];
	struct ef_file f;
	uint64_t bias;
	if (!m || att_open_mapped(s, m, maps, nmaps, &f, &bias))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(funcs) && !s->wait_main; i++)
		s->wait_main = !att_add_internal_func(s, &f, bias, funcs[i], "rt_tls_ready");
	ef_close(&f);
	return 0;
}
