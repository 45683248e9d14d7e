/*
 * session.c - installing probes into a process and removing them (the
 * sequence is described in attach.h).
 *
 * Memory placement: one memfd holds code then data.  The target maps the
 * code part read-execute at a free gap within rel32 reach of every probed
 * site, and the data part read-write right after it, so both trampolines
 * (jmp/call rel32) and probe code (RIP-relative ubt_shm) reach everything
 * directly.  ubt maps the same memfd read-write, and writes code and
 * headers through that mapping.  The memfd is created by a remote
 * memfd_create() in the target and opened by ubt through /proc/PID/fd, so
 * no file name is left behind, and the memory outlives ubt if ubt dies.
 *
 * Patching happens while every thread is stopped: a thread whose pc is
 * inside the bytes a patch displaces is moved to the same instruction in
 * the trampoline's relocated copy first.  Detach restores the original
 * bytes only where they still hold our patch, moves threads back out of
 * relocated copies, and unmaps the code and data only when no thread's pc
 * is inside them; otherwise they stay as inert pages.
 */
#include "attach.h"
#include "attach/elfsym.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ull

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

extern const unsigned char ubt_rt_object[];
extern const size_t ubt_rt_object_size;

static void sys_error(struct att_session *s, int err, const char *what)
{
	diag_sys(tracee_strerror_hint(-err), "pid %d: %s: %s", s->t.pid, what, strerror(-err));
}

/* The tracer of pid per /proc/PID/status, 0 if none or unknown. */
static pid_t tracer_of(pid_t pid)
{
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, &text, &len))
		return 0;
	const char *t = strstr(text, "\nTracerPid:");
	pid_t tracer = t ? (pid_t)atoi(t + 11) : 0;
	free(text);
	return tracer;
}

/* The Seccomp: line of /proc/PID/status (0 none, 1 strict, 2 filter), -1 unknown. */
static int seccomp_mode(pid_t pid)
{
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, &text, &len))
		return -1;
	const char *t = strstr(text, "\nSeccomp:");
	int mode = t ? atoi(t + 9) : -1;
	free(text);
	return mode;
}

/* PTRACE_SEIZE refused: say why when it is another tracer. */
static void seize_error(struct att_session *s, int err)
{
	pid_t tracer = err == -EPERM ? tracer_of(s->t.pid) : 0;
	if (tracer > 0) {
		char *hint = xasprintf("a process can have only one tracer; end or detach pid %d "
				       "(a debugger or tracer) first",
				       (int)tracer);
		diag_sys(hint, "pid %d: ptrace(PTRACE_SEIZE): %s: it is already traced by pid %d",
			 s->t.pid, strerror(-err), (int)tracer);
		free(hint);
		return;
	}
	sys_error(s, err, "ptrace(PTRACE_SEIZE)");
}

int att_open(struct att_session *s, pid_t pid, char *const *argv)
{
	int ret;
	if (pid > 0) {
		ret = tracee_open(&s->t, pid);
		if (ret) {
			if (ret == -ESRCH)
				diag_sys(NULL, "pid %d: no such process", pid);
			else
				sys_error(s, ret, "open");
			return ret;
		}
		s->has_target = true;
	} else if (argv) {
		ret = tracee_spawn(&s->t, argv);
		if (ret) {
			diag_sys(tracee_strerror_hint(-ret), "failed to start '%s': %s", argv[0],
				 strerror(-ret));
			return ret;
		}
		s->has_target = true;
	}
	return 0;
}

/* ---- planning --------------------------------------------------------- */

static int plan_sites(struct att_session *s, struct proc_map *maps, int nmaps)
{
	for (int i = 0; i < s->npoints; i++) {
		struct att_point *p = &s->points[i];
		if (p->usdt)
			continue; /* usdt.c plans those */
		struct elf_file f = {.dev = p->dev, .ino = p->ino};
		uint64_t bias;
		char *path = p->path[0] == '/' && strncmp(p->path, "/proc/", 6)
				     ? xasprintf("/proc/%d/root%s", s->t.pid, p->path)
				     : xstrdup(p->path);
		int ret = elf_file_open(&f, path);
		free(path);
		if (!ret) {
			ret = proc_load_bias(maps, nmaps, &f, &bias);
			elf_file_close(&f);
		}
		if (ret && !p->main_exe) { /* a library not loaded (yet) */
			att_resolve_not_loaded(s, p);
			continue;
		}
		if (ret) {
			diag_sys(NULL, "pid %d: %s is not loaded in the process", s->t.pid, p->path);
			return -ENOENT;
		}
		if (p->mid) { /* FUNC+OFF: resolve.c plans it, after every entry site */
			p->bias = bias;
			p->loaded = true;
			continue;
		}
		uint64_t addr = bias + p->vaddr;
		struct att_site *site = NULL;
		for (int j = 0; j < s->nsites; j++)
			if (s->sites[j].func_addr == addr)
				site = &s->sites[j];
		if (!site) {
			if (s->nsites == ATT_MAX_SITES) {
				diag_sys(NULL, "more than %d probed functions", ATT_MAX_SITES);
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
			if (site->plan.kind != ARCH_PATCH_JMP)
				fprintf(stderr,
					"WARNING: %s:%s: using a breakpoint (about 2 us per hit) "
					"instead of a jump: %s\n",
					p->path, p->func, site->plan.why);
		}
		bool is_ret = !strcmp(p->attach->attach.provider, "uretprobe");
		int *nh = is_ret ? &site->nrhandlers : &site->nhandlers;
		if (*nh == (int)ARRAY_SIZE(site->handlers)) {
			diag_sys(NULL, "%s:%s: too many probes on one function", p->path, p->func);
			return -E2BIG;
		}
		if (is_ret && site->plan.kind != ARCH_PATCH_JMP) {
			diag_sys(NULL, "%s:%s: a return probe needs a jump at the function's entry: %s",
				 p->path, p->func, site->plan.why);
			return -ENOTSUP;
		}
		/* handler addresses are filled in after linking; keep the probe index */
		if (!is_ret)
			site->variants[site->nhandlers] = -1;
		(is_ret ? site->rhandlers : site->handlers)[(*nh)++] = (uint64_t)p->probe_index;
	}
	for (int i = 0; i < s->npoints; i++) {
		int ret;
		if (s->points[i].mid && s->points[i].loaded &&
		    (ret = att_resolve_plan_mid(s, &s->points[i], s->points[i].bias)))
			return ret;
	}
	return att_usdt_plan(s, maps, nmaps);
}

/*
 * Sites in rel32 reach of one region: the first site not yet placed picks
 * the window, every other unplaced site whose window overlaps it joins
 * (their island is set to `island`).  Sites out of reach are left for an
 * island of their own (a program's functions and a library's are usually
 * more than 2 GiB apart).
 */
static void group_sites(struct att_session *s, int island, uint64_t *lo, uint64_t *hi, uint64_t *ref)
{
	*lo = 0x10000, *hi = 0x7ffffffff000ull, *ref = 0;
	bool first = true;
	for (int i = 0; i < s->nsites; i++) {
		struct att_site *site = &s->sites[i];
		uint64_t l, h;
		if (site->island >= 0)
			continue;
		arch_near_window(site->func_addr, &l, &h);
		uint64_t nl = l > *lo ? l : *lo, nh = h < *hi ? h : *hi;
		if (nl >= nh || nh - nl < (1ull << 24)) /* no room left in reach of both */
			continue;
		*lo = nl, *hi = nh;
		if (first)
			*ref = site->func_addr;
		first = false;
		site->island = island;
	}
}

/* A free gap of `size` bytes in [lo, hi), nearest to ref. */
static int find_gap(struct proc_map *maps, int n, uint64_t lo, uint64_t hi, uint64_t ref,
		    uint64_t size, uint64_t *addr)
{
	/* gaps between mappings, with a guard page on each side */
	uint64_t best = 0, best_dist = UINT64_MAX;
	for (int i = 0; i <= n; i++) {
		uint64_t start = i ? maps[i - 1].end + PAGE : 0x10000;
		uint64_t end = i < n ? maps[i].start - PAGE : 0x7ffffffff000ull;
		if (start < lo)
			start = ALIGN_UP(lo, PAGE);
		if (end > hi)
			end = hi & ~(PAGE - 1);
		if (end <= start || end - start < size)
			continue;
		/* the end of the gap nearest to ref */
		uint64_t cand = ref > start ? (end - size) : start;
		uint64_t dist = cand > ref ? cand - ref : ref - cand;
		if (dist < best_dist) {
			best = cand;
			best_dist = dist;
		}
	}
	if (!best)
		return -ENOMEM;
	*addr = best;
	return 0;
}

/* ---- shared memory ---------------------------------------------------- */

static int rsys(struct att_session *s, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		uint64_t a5, uint64_t a6, int64_t *out)
{
	int ret = tracee_syscall(&s->t, nr, a1, a2, a3, a4, a5, a6, out);
	if (ret)
		return ret;
	return *out < 0 && *out > -4096 ? (int)*out : 0;
}

/*
 * The private page (struct rt_priv) right after the data part: anonymous,
 * private, wiped in a forked child, so a child's probes see enabled == 0.
 * `enabled` is set only once everything else is in place (att_arm).
 */
static int map_remote_priv(struct att_session *s, uint64_t at)
{
	int64_t r;
	int ret = rsys(s, SYS_mmap, at, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0, &r);
	if (!ret && (uint64_t)r != at)
		ret = -EEXIST;
	if (!ret)
		ret = rsys(s, SYS_madvise, at, PAGE, MADV_WIPEONFORK, 0, 0, 0, &r);
	if (!ret) {
		struct rt_priv p = {.size = sizeof(p), .enabled = 0, .pid = (uint32_t)s->t.pid};
		s->remote_priv = at;
		ret = tracee_write(&s->t, at, &p, sizeof(p));
	}
	return ret;
}

static int map_remote(struct att_session *s, uint64_t at)
{
	uint64_t total = s->code_size + s->data_size, name;
	int64_t fd, r;
	int ret = tracee_scratch(&s->t, "ubt", 4, &name);
	if (!ret)
		ret = rsys(s, SYS_memfd_create, name, MFD_CLOEXEC, 0, 0, 0, 0, &fd);
	if (ret) {
		if (ret == -EPERM && seccomp_mode(s->t.pid) > 0)
			diag_sys("the process runs under a seccomp filter (Seccomp in "
				 "/proc/PID/status) that refuses a system call ubt needs to place "
				 "its code; it cannot be traced this way",
				 "pid %d: memfd_create in the target: %s", s->t.pid, strerror(-ret));
		else
			sys_error(s, ret, "memfd_create in the target");
		return ret;
	}
	ret = rsys(s, SYS_ftruncate, fd, total, 0, 0, 0, 0, &r);
	if (!ret)
		ret = rsys(s, SYS_mmap, at, s->code_size, PROT_READ | PROT_EXEC,
			   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0, &r);
	if (!ret && (uint64_t)r != at)
		ret = -EEXIST;
	if (!ret) {
		s->remote_code = at;
		ret = rsys(s, SYS_mmap, at + s->code_size, s->data_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, s->code_size, &r);
		if (!ret && (uint64_t)r != at + s->code_size)
			ret = -EEXIST;
		if (ret) {
			int64_t dummy;
			rsys(s, SYS_munmap, at, s->code_size, 0, 0, 0, 0, &dummy);
		}
	}
	if (!ret) {
		s->remote_data = at + s->code_size;
		s->remote_mapped = true;
		ret = map_remote_priv(s, s->remote_data + s->data_size);
	}
	if (!ret) {
		char *path = xasprintf("/proc/%d/fd/%lld", s->t.pid, (long long)fd);
		int lfd = open(path, O_RDWR | O_CLOEXEC);
		free(path);
		if (lfd < 0) {
			ret = -errno;
		} else {
			void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
			ret = p == MAP_FAILED ? -errno : 0;
			if (!ret)
				s->local = p;
			close(lfd);
		}
	}
	int64_t dummy;
	rsys(s, SYS_close, fd, 0, 0, 0, 0, 0, &dummy);
	if (ret)
		sys_error(s, ret, "mapping shared memory in the target");
	return ret;
}

static int map_local_only(struct att_session *s)
{
	int fd = memfd_create("ubt", MFD_CLOEXEC);
	uint64_t total = s->code_size + s->data_size;
	if (fd < 0 || ftruncate(fd, total)) {
		diag_sys(NULL, "memfd_create: %s", strerror(errno));
		return -errno;
	}
	void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		diag_sys(NULL, "mmap: %s", strerror(errno));
		return -errno;
	}
	s->local = p;
	return 0;
}

/* Anonymous RWX memory for BEGIN/END code within rel32 reach of our data. */
static int map_host_code(struct att_session *s, size_t size)
{
	uint64_t data = (uint64_t)att_data(s);
	s->host_code_size = ALIGN_UP(size, PAGE) + PAGE; /* + the private page */
	for (uint64_t at = (data - s->code_size - s->host_code_size - PAGE) & ~(PAGE - 1);
	     data - at < (1ull << 30); at -= 1ull << 20) {
		void *p = mmap((void *)at, s->host_code_size, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED) {
			s->host_code = p;
			s->host_priv = (struct rt_priv *)((uint8_t *)p + s->host_code_size - PAGE);
			s->host_priv->size = sizeof(struct rt_priv);
			s->host_priv->enabled = 1;
			s->host_priv->pid = (uint32_t)getpid();
			return 0;
		}
	}
	diag_sys(NULL, "no room for BEGIN/END code near shared memory");
	return -ENOMEM;
}

static void write_headers(struct att_session *s, const struct cg_layout *l,
			  const struct cg_facts *facts)
{
	struct rt_shm_header *h = (struct rt_shm_header *)att_data(s);
	h->size = sizeof(*h);
	h->version = RT_ABI_VERSION;
	h->magic = RT_SHM_MAGIC;
	h->data_size = l->data_size;
	h->ncpu = l->ncpu;
	h->nthreads = l->nthreads;
	h->ring_size = l->ring_size;
	h->threads_off = l->threads_off;
	h->rings_off = l->rings_off;
	h->flags = (facts->has_rseq ? RT_F_RSEQ : 0) | (facts->has_tid ? RT_F_TID : 0);
	h->rseq_off = facts->rseq_off;
	h->tid_off = facts->tid_off;
	h->pid = s->has_target ? (uint32_t)s->t.pid : (uint32_t)getpid();
	att_clock_calibrate(h);
	for (int i = 0; i < l->nmaps; i++)
		memcpy(att_data(s) + l->maps[i].off, &l->maps[i].hdr, sizeof(struct rt_map));
	if (l->stacks_off) { /* ustack's table; output/stack.c fills the rest of h->stk */
		memcpy(att_data(s) + l->stacks_off, &l->stacks, sizeof(l->stacks));
		h->stk.table_off = l->stacks_off;
	}
}

/* ---- linking ---------------------------------------------------------- */

static int link_code(const struct cg_object *obj, uint64_t base, uint64_t shm, uint64_t priv,
		     struct link_image *img)
{
	struct link_input in[2] = {
		{ubt_rt_object, ubt_rt_object_size, "runtime"},
		{obj ? obj->elf : NULL, obj ? obj->elf_size : 0, "probes"},
	};
	struct link_extern ext[] = {{"ubt_shm", shm}, {"ubt_priv", priv}};
	char err[256];
	int ret = link_objects(in, obj && obj->elf ? 2 : 1, base, ext, 2, img, err, sizeof(err));
	if (ret)
		diag_sys(NULL, "internal: linking probe code: %s", err);
	return ret;
}

static size_t tramp_max(const struct att_site *site)
{
	if (site->mid)
		return ALIGN_UP(arch_trampoline_mid_max(site->nhandlers), 64);
	if (site->nrhandlers)
		return ALIGN_UP(arch_ret_trampoline_max(site->nhandlers, site->nrhandlers), 64);
	return ALIGN_UP(arch_trampoline_max(site->nhandlers), 64);
}

/* Trampoline bytes of the sites placed in island i (0: the main code). */
static size_t tramp_bytes(const struct att_session *s, int island)
{
	size_t n = 0;
	for (int i = 0; i < s->nsites; i++)
		if (s->sites[i].island == island)
			n += tramp_max(&s->sites[i]);
	return n;
}

/* Maps an island for every group of sites out of reach of the main code. */
static int map_islands(struct att_session *s, struct proc_map **maps, int *nmaps)
{
	for (;;) {
		uint64_t lo, hi, ref, at;
		int idx = s->nislands + 1;
		bool left = false;
		for (int i = 0; i < s->nsites; i++)
			left |= s->sites[i].island < 0;
		if (!left)
			return 0;
		if (s->nislands == (int)ARRAY_SIZE(s->islands)) {
			diag_sys(NULL, "pid %d: probed code too far apart", s->t.pid);
			return -E2BIG;
		}
		group_sites(s, idx, &lo, &hi, &ref);
		uint64_t size = ALIGN_UP(tramp_bytes(s, idx), PAGE);
		int64_t r;
		int ret = find_gap(*maps, *nmaps, lo, hi, ref, size, &at);
		if (!ret)
			ret = rsys(s, SYS_mmap, at, size, PROT_READ | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, (uint64_t)-1, 0,
				   &r);
		if (ret) {
			diag_sys(NULL, "pid %d: no room for trampolines near 0x%llx", s->t.pid,
				 (unsigned long long)ref);
			return ret;
		}
		s->islands[s->nislands++] = (struct att_island){at, size, 0};
		proc_maps_free(*maps, *nmaps);
		*maps = NULL;
		if ((ret = proc_maps_read(s->t.pid, maps, nmaps)))
			return ret;
	}
}

/* Sends SIGTRAP to the runtime's handler; keeps the old action for chaining. */
static int install_trap_handler(struct att_session *s, struct rt_shm_header *h)
{
	struct rt_sigaction_k act = {
		.handler = link_lookup(&s->image, "rt_sigtrap"),
		.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | 0x04000000 /* SA_RESTORER */,
		.restorer = link_lookup(&s->image, "rt_sigreturn"),
		.mask = 0,
	};
	struct rt_sigaction_k both[2] = {act, {0}};
	uint64_t at;
	int64_t r;
	int ret = tracee_scratch(&s->t, both, sizeof(both), &at);
	if (!ret)
		ret = rsys(s, SYS_rt_sigaction, SIGTRAP, at, at + sizeof(act), 8, 0, 0, &r);
	if (!ret)
		ret = tracee_read(&s->t, at + sizeof(act), &h->old_trap, sizeof(h->old_trap));
	if (!ret) {
		/* copies the watchdog can use without ubt's mappings */
		s->old_trap = h->old_trap;
		s->rt_sigtrap = act.handler;
	}
	if (ret)
		sys_error(s, ret, "rt_sigaction(SIGTRAP) in the target");
	else
		s->trap_installed = true;
	return ret;
}

/* Puts the application's SIGTRAP action back if ours is still installed. */
static void remove_trap_handler(struct att_session *s)
{
	struct rt_sigaction_k cur;
	uint64_t at;
	int64_t r;
	if (!s->trap_installed || tracee_scratch(&s->t, &s->old_trap, sizeof(cur), &at))
		return;
	if (rsys(s, SYS_rt_sigaction, SIGTRAP, 0, at + 64, 8, 0, 0, &r) ||
	    tracee_read(&s->t, at + 64, &cur, sizeof(cur)))
		return;
	if (cur.handler == s->rt_sigtrap)
		rsys(s, SYS_rt_sigaction, SIGTRAP, at, 0, 8, 0, 0, &r);
	s->trap_installed = false;
}

/*
 * A thread that executed one of our int3s but was stopped before its
 * SIGTRAP was delivered would, after detach, meet the application's
 * action: rewind it to re-run the restored instruction instead.
 */
static void rewind_trapped(struct att_session *s, const struct att_site *site)
{
	if (site->plan.kind != ARCH_PATCH_INT3)
		return;
	for (int i = 0; i < s->t.nthreads; i++) {
		struct tracee_thread *th = &s->t.threads[i];
		if (th->pending_sig == SIGTRAP && th->regs.rip == site->plan.site + 1) {
			th->regs.rip = site->plan.site;
			th->regs_dirty = true;
			th->pending_sig = 0;
		}
	}
}

static int lookup_probe(struct att_session *s, uint64_t *h, int variant)
{
	char name[64];
	if (variant >= 0) /* usdt: compiled per argument list */
		snprintf(name, sizeof(name), "ubt_probe_%d_u%d", (int)*h, variant);
	else
		snprintf(name, sizeof(name), "ubt_probe_%d", (int)*h);
	*h = link_lookup(&s->image, name);
	if (!*h) {
		diag_sys(NULL, "internal: probe function %s missing", name);
		return -ENOENT;
	}
	return 0;
}

/* Probe indices (or the internal handler's name) -> addresses in the target. */
static int resolve_handlers(struct att_session *s, struct att_site *site)
{
	int ret = 0;
	if (site->internal) {
		site->handlers[0] = link_lookup(&s->image, site->internal);
		return site->handlers[0] ? 0 : -ENOENT;
	}
	for (int h = 0; h < site->nhandlers && !ret; h++)
		ret = lookup_probe(s, &site->handlers[h], site->variants[h]);
	for (int h = 0; h < site->nrhandlers && !ret; h++)
		ret = lookup_probe(s, &site->rhandlers[h], -1);
	return ret;
}

static int emit_site(struct att_session *s, struct att_site *site, uint8_t *buf, size_t cap,
		     size_t *len)
{
	/* the runtime's own handlers are C taking struct rt_regs *, not probe code (abi.h) */
	if (site->internal)
		site->plan.c_abi = true;
	if (!site->nrhandlers) {
		int ret = arch_emit_trampoline(&site->plan, site->tramp, site->handlers,
					       site->nhandlers, buf, cap, len);
		if (!ret)
			ret = arch_pc_into_trampoline(&site->plan, site->tramp, site->nhandlers,
						      site->plan.site, &site->copy_addr);
		return ret;
	}
	struct arch_ret_spec spec = {
		.handlers = site->handlers,
		.nhandlers = site->nhandlers,
		.rhandlers = site->rhandlers,
		.nrhandlers = site->nrhandlers,
		.enter = link_lookup(&s->image, "rt_ret_enter"),
		.leave = link_lookup(&s->image, "rt_ret_leave"),
		.enabled = s->remote_priv + offsetof(struct rt_priv, enabled),
		.stacks = s->remote_rets,
		.nstacks = s->layout->nthreads,
		.has_tid = s->facts.has_tid,
		.tid_off = s->facts.tid_off,
	};
	return arch_emit_ret_trampoline(&site->plan, site->tramp, &spec, buf, cap, len,
					&site->copy_addr);
}

/* Emits the trampolines of sites[first..] (the main code's from its start:
 * only att_install places sites there; later ones go to islands). */
static int place_sites(struct att_session *s, int first)
{
	struct rt_shm_header *h = (struct rt_shm_header *)att_data(s);
	/* each trampoline on its own cache line(s): hot code shares no line */
	uint64_t off = ALIGN_UP(s->image.size, 64);
	for (int i = first; i < s->nsites; i++) {
		struct att_site *site = &s->sites[i];
		int ret = resolve_handlers(s, site);
		if (ret)
			return ret;
		size_t len;
		uint8_t *buf = s->local + off, *ibuf = NULL;
		size_t cap = s->code_size - off;
		if (site->island > 0) {
			struct att_island *is = &s->islands[site->island - 1];
			site->tramp = is->addr + is->used;
			cap = tramp_max(site);
			buf = ibuf = xcalloc(1, cap);
		} else {
			site->tramp = s->remote_code + off;
		}
		if (site->plan.mid && s->uses_stack) /* rt_stack_id reads them */
			site->plan.mid_read |= 1u << offsetof(struct rt_regs_mid, pc) / 8 |
					       1u << offsetof(struct rt_regs_mid, rsp) / 8 |
					       1u << offsetof(struct rt_regs_mid, rbp) / 8;
		ret = emit_site(s, site, buf, cap, &len);
		if (!ret && ibuf) {
			ret = tracee_write(&s->t, site->tramp, ibuf, len);
			s->islands[site->island - 1].used += ALIGN_UP(len, 64);
		}
		free(ibuf);
		if (!ret)
			ret = arch_patch_bytes(&site->plan, site->tramp, site->patch);
		if (ret) {
			diag_sys(NULL, "internal: trampoline for 0x%llx: %s",
				 (unsigned long long)site->func_addr, strerror(-ret));
			return ret;
		}
		if (!site->island)
			off += ALIGN_UP(len, 64);
		if (site->plan.kind == ARCH_PATCH_INT3) {
			if (h->ntraps == RT_TRAP_MAX) {
				diag_sys(NULL, "too many probes need a breakpoint (at most %d)",
					 RT_TRAP_MAX);
				return -E2BIG;
			}
			h->traps[h->ntraps].site = site->plan.site;
			h->traps[h->ntraps].tramp = site->tramp;
			h->ntraps++;
		}
	}
	if (h->ntraps && !s->trap_installed)
		return install_trap_handler(s, h);
	return 0;
}

static int place_trampolines(struct att_session *s, const struct cg_object *obj)
{
	(void)obj;
	return place_sites(s, 0);
}

int att_install(struct att_session *s, const struct cg_layout *layout,
		const struct cg_object *target_obj, const struct cg_object *host_obj)
{
	struct proc_map *maps = NULL;
	int nmaps = 0, ret;
	struct cg_facts facts;

	s->layout = layout;
	s->data_size = layout->data_size;
	s->uses_stack = target_obj && target_obj->uses_stack;
	att_clock_calibrate(NULL); /* before any thread is stopped */
	att_facts(s, false, &facts);
	s->facts = facts;
	if (s->has_target) {
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps))) {
			sys_error(s, ret, "reading /proc/PID/maps");
			return ret;
		}
		if ((ret = plan_sites(s, maps, nmaps)) || (ret = att_ret_plan(s, maps, nmaps)) ||
		    (ret = att_read_plan(s, target_obj, maps, nmaps)) ||
		    (ret = att_dl_plan(s, maps, nmaps))) /* dlopen.c */
			goto out;
		uint64_t lo, hi, ref;
		group_sites(s, 0, &lo, &hi, &ref);
		/* the image's size does not depend on where it is linked */
		struct link_image probe;
		if ((ret = link_code(target_obj, 0, 0, 0, &probe)))
			goto out;
		s->code_size = ALIGN_UP(probe.size + 16 + tramp_bytes(s, 0), PAGE);
		link_image_free(&probe);
		if ((ret = att_watchdog_start(s)))
			goto out;
		s->stop_start_ns = now_ns();
		if (!s->t.stopped && (ret = tracee_stop_all(&s->t))) {
			seize_error(s, ret);
			goto out;
		}
		uint64_t at;
		proc_maps_free(maps, nmaps);
		maps = NULL;
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps)))
			goto out;
		if ((ret = find_gap(maps, nmaps, lo, hi, ref, s->code_size + s->data_size + PAGE,
				     &at))) {
			diag_sys(NULL, "pid %d: no free address range near the probed code",
				 s->t.pid);
			goto out;
		}
		if ((ret = map_remote(s, at)))
			goto out;
		proc_maps_free(maps, nmaps);
		maps = NULL;
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps)) ||
		    (ret = map_islands(s, &maps, &nmaps)))
			goto out;
		if ((ret = link_code(target_obj, s->remote_code, s->remote_data, s->remote_priv,
				     &s->image)))
			goto out;
		memcpy(s->local, s->image.bytes, s->image.size);
		write_headers(s, layout, &facts);
		if ((ret = att_ret_install(s, (struct rt_shm_header *)att_data(s))))
			goto out;
		if ((ret = place_trampolines(s, target_obj)))
			goto out;
		/* dlopen.c: the runtime waits for ubt after the loader mapped a library */
		((struct rt_shm_header *)att_data(s))->dl_rstate = s->dl_state;
		if ((ret = att_read_install(s, (struct rt_shm_header *)att_data(s))))
			goto out;
	} else {
		s->code_size = 0;
		if ((ret = map_local_only(s)))
			goto out;
		write_headers(s, layout, &facts);
	}
	if (host_obj && host_obj->nprobes) {
		struct link_image probe;
		if ((ret = link_code(host_obj, 0, 0, 0, &probe)))
			goto out;
		size_t size = probe.size;
		link_image_free(&probe);
		if ((ret = map_host_code(s, size)))
			goto out;
		if ((ret = link_code(host_obj, (uint64_t)s->host_code, (uint64_t)att_data(s),
				     (uint64_t)s->host_priv, &s->host_image)))
			goto out;
		memcpy(s->host_code, s->host_image.bytes, s->host_image.size);
	}
out:
	proc_maps_free(maps, nmaps);
	return ret;
}

/* ---- patching --------------------------------------------------------- */

/* Moves threads whose pc is inside the displaced bytes of site. */
static void move_threads_in(struct att_session *s, struct att_site *site)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		struct tracee_thread *th = &s->t.threads[i];
		uint64_t pc = th->regs.rip, npc;
		if (pc > site->plan.site && pc < site->plan.site + site->plan.orig_len &&
		    !arch_pc_into_copy(&site->plan, site->copy_addr, pc, &npc)) {
			th->regs.rip = npc;
			th->regs_dirty = true;
		}
	}
}

static void move_threads_out(struct att_session *s, struct att_site *site)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		struct tracee_thread *th = &s->t.threads[i];
		uint64_t npc;
		if (!arch_pc_from_copy(&site->plan, site->copy_addr, th->regs.rip, &npc)) {
			th->regs.rip = npc;
			th->regs_dirty = true;
		}
	}
}

/* Turns every probe in the target on or off (struct rt_priv). */
static int set_enabled(struct att_session *s, uint32_t on)
{
	return tracee_write(&s->t, s->remote_priv + offsetof(struct rt_priv, enabled), &on,
			    sizeof(on));
}

int att_arm(struct att_session *s)
{
	int ret = 0;
	if (!s->has_target)
		return 0;
	ret = set_enabled(s, 1);
	for (int i = 0; i < s->nsites && !ret; i++) {
		struct att_site *site = &s->sites[i];
		uint8_t now[ARCH_MAX_DISPLACED];
		ret = tracee_read(&s->t, site->plan.site, now, site->plan.orig_len);
		if (!ret && memcmp(now, site->plan.orig, site->plan.orig_len)) {
			diag_sys(NULL, "pid %d: code at 0x%llx changed while attaching", s->t.pid,
				 (unsigned long long)site->plan.site);
			ret = -EAGAIN;
			break;
		}
		move_threads_in(s, site);
		if (!ret)
			ret = tracee_write(&s->t, site->plan.site, site->patch, site->plan.orig_len);
		if (!ret)
			site->patched = true;
	}
	if (!ret)
		ret = att_usdt_semas_take(s); /* probes are live: let the program fire them */
	if (ret) {
		sys_error(s, ret, "patching");
		for (int i = 0; i < s->nsites; i++)
			if (s->sites[i].patched) {
				tracee_write(&s->t, s->sites[i].plan.site, s->sites[i].plan.orig,
					     s->sites[i].plan.orig_len);
				s->sites[i].patched = false;
			}
	}
	s->attach_nthreads = s->t.nthreads;
	int r = tracee_release(&s->t);
	s->attach_stop_ns = now_ns() - s->stop_start_ns;
	return ret ? ret : r;
}

void att_run_host(struct att_session *s, const struct cg_object *host_obj, const char *provider)
{
	if (!host_obj || !s->host_code)
		return;
	struct rt_regs regs = {0};
	for (int i = 0; i < host_obj->nprobes; i++) {
		const struct cg_probe *p = &host_obj->probes[i];
		if (strcmp(p->probe->kids[0]->attach.provider, provider))
			continue;
		void (*fn)(struct rt_regs *) =
			(void (*)(struct rt_regs *))link_lookup(&s->host_image, p->sym);
		if (fn)
			fn(&regs);
	}
}

/* The host function of host_obj's probe i (BEGIN, END, interval), or NULL. */
att_host_fn att_host_probe(struct att_session *s, const struct cg_object *host_obj, int i)
{
	if (!host_obj || !s->host_code || i < 0 || i >= host_obj->nprobes)
		return NULL;
	return (att_host_fn)link_lookup(&s->host_image, host_obj->probes[i].sym);
}

/*
 * Probe code leaves the thread's rseq_cs pointing at its descriptor (the
 * kernel clears it lazily).  Before that code is unmapped, clear it: the
 * kernel would otherwise fault reading it on the thread's next preemption.
 */
static void clear_rseq_cs(struct att_session *s, const struct tracee_thread *th)
{
	if (!s->facts.has_rseq)
		return;
	uint64_t at = th->regs.fs_base + s->facts.rseq_off + RT_RSEQ_CS, cs;
	if (tracee_read(&s->t, at, &cs, sizeof(cs)))
		return;
	if (cs >= s->remote_code && cs < s->remote_code + s->code_size) {
		cs = 0;
		tracee_write(&s->t, at, &cs, sizeof(cs));
	}
}

/* Unmaps ubt's memory in the target if no thread's pc is inside it. */
static bool unmap_if_idle(struct att_session *s)
{
	bool busy = false;
	for (int i = 0; i < s->t.nthreads; i++) {
		uint64_t pc = s->t.threads[i].regs.rip;
		if (pc >= s->remote_code && pc < s->remote_priv + PAGE)
			busy = true;
		for (int k = 0; k < s->nislands; k++)
			if (pc >= s->islands[k].addr && pc < s->islands[k].addr + s->islands[k].size)
				busy = true;
		clear_rseq_cs(s, &s->t.threads[i]);
	}
	if (busy)
		return false;
	int64_t r;
	/* no thread can be inside a read routine now: the handler can go */
	att_read_remove(s);
	rsys(s, SYS_munmap, s->remote_code, s->code_size + s->data_size + PAGE, 0, 0, 0, 0, &r);
	s->remote_mapped = false;
	for (int i = 0; i < s->nislands; i++)
		rsys(s, SYS_munmap, s->islands[i].addr, s->islands[i].size, 0, 0, 0, 0, &r);
	att_ret_unmap(s);
	return true;
}

int att_detach(struct att_session *s)
{
	if (!s->has_target || !s->remote_mapped)
		return 0;
	int status;
	if (tracee_wait_exit(&s->t, 0, &status) == 1)
		return 0; /* gone: nothing to restore */
	uint64_t t0 = now_ns();
	int ret = tracee_stop_all(&s->t);
	if (ret) {
		if (ret == -ESRCH)
			return 0;
		sys_error(s, ret, "ptrace(PTRACE_SEIZE) for detach");
		return ret;
	}
	set_enabled(s, 0);
	for (int i = 0; i < s->nsites; i++) {
		struct att_site *site = &s->sites[i];
		if (!site->patched)
			continue;
		uint8_t now[ARCH_MAX_DISPLACED];
		int r = tracee_read(&s->t, site->plan.site, now, site->plan.orig_len);
		if (!r && !memcmp(now, site->patch, site->plan.orig_len))
			tracee_write(&s->t, site->plan.site, site->plan.orig, site->plan.orig_len);
		else if (r || memcmp(now, site->plan.orig, site->plan.orig_len))
			diag_sys(NULL, "pid %d: code at 0x%llx was changed by someone else; left as is",
				 s->t.pid, (unsigned long long)site->plan.site);
		site->patched = false;
		move_threads_out(s, site);
		rewind_trapped(s, site);
	}
	att_usdt_semas_release(s);
	remove_trap_handler(s);
	att_ret_detach(s);
	if (!unmap_if_idle(s)) {
		/* A thread was inside our code.  Nothing leads there any more, so
		 * let it run out and look again a few times before leaving the
		 * memory behind as inert pages. */
		ret = tracee_release(&s->t);
		s->detach_stop_ns = now_ns() - t0;
		for (int tries = 0; tries < 20 && !ret && s->remote_mapped; tries++) {
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
			if (tracee_stop_all(&s->t))
				return 0;
			unmap_if_idle(s);
			ret = tracee_release(&s->t);
		}
		return ret;
	}
	ret = tracee_release(&s->t);
	s->detach_stop_ns = now_ns() - t0;
	return ret;
}

int att_check_target(struct att_session *s)
{
	int status;
	if (!s->has_target)
		return ATT_ALIVE;
	if (tracee_wait_exit(&s->t, 0, &status) == 1)
		return ATT_EXITED;
	if (!s->remote_mapped)
		return ATT_ALIVE;
	/* after an exec the process has a new address space without our code */
	struct proc_map *maps;
	int n;
	if (proc_maps_read(s->t.pid, &maps, &n))
		return ATT_EXITED;
	bool found = false;
	for (int i = 0; i < n && !found; i++)
		found = maps[i].start == s->remote_code;
	proc_maps_free(maps, n);
	if (found)
		return ATT_ALIVE;
	s->remote_mapped = false;
	for (int i = 0; i < s->nsites; i++)
		s->sites[i].patched = false;
	return ATT_EXECED;
}

static size_t session_bytes(void);

void att_close(struct att_session *s)
{
	if (s->local)
		munmap(s->local, s->code_size + s->data_size);
	if (s->host_code)
		munmap(s->host_code, s->host_code_size);
	link_image_free(&s->image);
	link_image_free(&s->host_image);
	for (int i = 0; i < s->npoints; i++) {
		free(s->points[i].path);
		free(s->points[i].func);
	}
	free(s->points);
	att_usdt_free(s);
	if (s->has_target)
		tracee_close(&s->t);
	munmap(s, session_bytes());
}

/*
 * The session lives in memory shared with the watchdog (watchdog.c), which
 * forks before the target is first touched and must see every later step.
 */
static size_t session_bytes(void)
{
	return ALIGN_UP(sizeof(struct att_session) + ATT_MAX_SITES * sizeof(struct att_site), PAGE);
}

struct att_session *att_session_new(void)
{
	void *p = mmap(NULL, session_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED) {
		diag_sys(NULL, "mmap: %s", strerror(errno));
		return NULL;
	}
	struct att_session *s = p;
	s->sites = (struct att_site *)ALIGN_UP((uintptr_t)(s + 1), 64);
	return s;
}

/* ---- sites of libraries loaded after attach (dlopen.c decides when) ---- */

/*
 * With every thread stopped: plans the entry sites of pending points whose
 * library is now mapped, puts their trampolines in new islands, patches
 * them.  Returns the number of sites added (0: nothing loaded yet), or
 * -errno.  Threads are released before returning.
 */
int att_arm_late(struct att_session *s, bool (*ready)(struct att_session *s))
{
	struct proc_map *maps = NULL;
	int nmaps = 0, first = s->nsites, ret;
	s->stop_start_ns = now_ns();
	if ((ret = tracee_stop_all(&s->t)))
		return ret;
	if (!ready(s) || (ret = proc_maps_read(s->t.pid, &maps, &nmaps)))
		goto out;
	/* plan_sites() over the pending points only */
	struct att_point *all = s->points, *late = xcalloc(s->npoints + 1, sizeof(*late));
	int nall = s->npoints, nlate = 0;
	for (int i = 0; i < nall; i++) {
		struct att_point *p = &all[i];
		struct elf_file f = {0};
		uint64_t bias;
		if (!p->pending)
			continue;
		char *path = p->path[0] == '/' && strncmp(p->path, "/proc/", 6)
				     ? xasprintf("/proc/%d/root%s", s->t.pid, p->path)
				     : xstrdup(p->path);
		bool loaded = !elf_file_open(&f, path) && !proc_load_bias(maps, nmaps, &f, &bias);
		if (f.elf)
			elf_file_close(&f);
		free(path);
		if (!loaded)
			continue;
		p->pending = false;
		late[nlate++] = *p;
	}
	s->points = late;
	s->npoints = nlate;
	ret = nlate ? plan_sites(s, maps, nmaps) : 0;
	s->points = all;
	s->npoints = nall;
	free(late);
	if (ret || s->nsites == first)
		goto out;
	if ((ret = map_islands(s, &maps, &nmaps)) || (ret = place_sites(s, first)))
		goto out;
	for (int i = first; i < s->nsites && !ret; i++) {
		struct att_site *site = &s->sites[i];
		/* as in att_arm: two sites closer than a jump (FUNC+7, FUNC+9)
		 * would patch each other's bytes */
		uint8_t now[ARCH_MAX_DISPLACED];
		ret = tracee_read(&s->t, site->plan.site, now, site->plan.orig_len);
		if (!ret && memcmp(now, site->plan.orig, site->plan.orig_len)) {
			diag_sys(NULL, "pid %d: code at 0x%llx changed while attaching", s->t.pid,
				 (unsigned long long)site->plan.site);
			ret = -EAGAIN;
			break;
		}
		move_threads_in(s, site);
		ret = tracee_write(&s->t, site->plan.site, site->patch, site->plan.orig_len);
		if (!ret)
			site->patched = true;
	}
out:
	proc_maps_free(maps, nmaps);
	if (ret) { /* take back what was patched: the session ends as before */
		for (int i = first; i < s->nsites; i++)
			if (s->sites[i].patched)
				tracee_write(&s->t, s->sites[i].plan.site, s->sites[i].plan.orig,
					     s->sites[i].plan.orig_len);
		s->nsites = first;
	}
	int r = tracee_release(&s->t);
	s->attach_stop_ns = now_ns() - s->stop_start_ns;
	if (ret)
		return ret;
	return r ? r : s->nsites - first;
}
