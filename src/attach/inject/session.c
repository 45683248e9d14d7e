/*
 * session.c - installing probes into a process (the sequence is described
 * in attach.h): opening the target, linking the probe code, writing the
 * shared headers, emitting trampolines, and the session's own lifetime
 * (att_session_new/att_close).
 *
 * Planning the sites is plan_sites.c's (and plan_mid.c's for sites inside
 * functions); where the code and data go in the target is placement.c's;
 * patching the sites, detaching and the late arming of dlopen'ed libraries
 * are patch.c's.  They share internal helpers through session_internal.h.
 */
#include "attach/session.h"
#include "attach/inject/session_internal.h"
#include "attach/resolve/resolve.h"
#include "attach/target/target.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern const unsigned char ubt_rt_object[];
extern const size_t ubt_rt_object_size;

void att_sys_error(struct att_session *s, int err, const char *what)
{
	diag_sys(tracee_strerror_hint(-err), "pid %d: %s: %s", s->t.pid, what, strerror(-err));
}

/* The tracer of one of the process's threads that is not us, or 0. */
static pid_t other_tracer(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	pid_t tracer = 0;
	while (d && !tracer && (de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9') {
			pid_t t = proc_tracer_pid(pid, atoi(de->d_name));
			tracer = t > 0 && t != getpid() ? t : 0;
		}
	if (d)
		closedir(d);
	return tracer;
}

/* PTRACE_SEIZE refused: say why when it is another tracer. */
void att_seize_error(struct att_session *s, int err)
{
	pid_t tracer = err == -EPERM ? other_tracer(s->t.pid) : 0;
	if (tracer > 0) {
		char *hint = xasprintf("a process can have only one tracer; end or detach pid %d "
				       "(a debugger or tracer) first",
				       (int)tracer);
		diag_sys(hint, "pid %d: ptrace(PTRACE_SEIZE): %s: it is already traced by pid %d",
			 s->t.pid, strerror(-err), (int)tracer);
		free(hint);
		return;
	}
	att_sys_error(s, err, "ptrace(PTRACE_SEIZE)");
}

static int sites_alloc(struct att_session *s);

int att_open(struct att_session *s, pid_t pid, char *const *argv)
{
	int ret;
	if (pid > 0) {
		ret = tracee_open(&s->t, pid);
		if (ret) {
			if (ret == -ESRCH)
				diag_sys(NULL, "pid %d: no such process", pid);
			else
				att_sys_error(s, ret, "open");
			return ret;
		}
		s->has_target = true;
	} else if (argv) {
		/* the watchdog first: if we die while the command runs to its
		 * entry point, it takes the entry stub out (spawn.c); the sites
		 * it restores if we die later are in memory it must share, so
		 * that memory is made before it forks */
		s->has_target = true;
		if ((ret = sites_alloc(s)) || (ret = att_watchdog_start(s)))
			return ret;
		ret = tracee_spawn(&s->t, argv);
		if (ret) {
			diag_sys(tracee_strerror_hint(-ret), "failed to start '%s': %s", argv[0],
				 strerror(-ret));
			att_watchdog_stop(s);
			s->has_target = false;
			return ret;
		}
	}
	/* the program's own system calls, other libraries' */
	ret = att_sys_objects(s, s->t.pid);
	if (ret && argv) { /* the command has not run: it never does, as under bpftrace */
		int status;
		kill(s->t.pid, SIGKILL);
		tracee_wait_exit(&s->t, -1, &status);
		att_watchdog_stop(s);
		tracee_close(&s->t); /* att_close skips a session without a target */
		s->has_target = false;
	}
	return ret;
}

/* ---- what else is in the process ---------------------------------------- */

/*
 * Another ubt traces the process: its data part is mapped there (a
 * `memfd:ubt` rw-s mapping), the header names it as tracer, and that
 * process maps the same memfd.  Two sets of patches on one process
 * cannot be undone in any order, so the second ubt refuses.  Memory a
 * ubt left behind after detaching (tracer 0) or whose ubt died is no
 * obstacle.  Called before planning, for the message, and again with the
 * threads stopped, where no other ubt can be attaching meanwhile.
 */
static int check_other_ubt(struct att_session *s, const struct proc_map *maps, int n)
{
	for (int i = 0; i < n; i++) {
		struct rt_shm_header h;
		const struct proc_map *m = &maps[i];
		if (!strstr(m->path, "memfd:ubt") || strcmp(m->perms, "rw-s") ||
		    (s->memfd_ino && m->ino == s->memfd_ino) ||
		    tracee_read(&s->t, m->start, &h, offsetof(struct rt_shm_header, heartbeat)) ||
		    h.magic != RT_SHM_MAGIC || !h.tracer || (pid_t)h.tracer == getpid() ||
		    !proc_maps_file((pid_t)h.tracer, m->dev, m->ino))
			continue;
		diag_sys("one ubt per process: end the other one first (its probes can share one "
			 "script)", "pid %d: ubt already traces this process (pid %u)", s->t.pid,
			 h.tracer);
		return -EBUSY;
	}
	return 0;
}

/*
 * The layout part of the headers at base: the header's sizes and offsets,
 * every map's struct rt_map, the stack table's header.  Written into the
 * data part for the target's runtime, and into ubt's read-only copy for
 * the runtime linked into ubt (BEGIN, END, interval): the target can
 * rewrite the first, never the second (DESIGN.md decision 10).
 */
static void write_layout(uint8_t *base, const struct att_session *s, const struct cg_layout *l,
			 const struct cg_facts *facts)
{
	struct rt_shm_header *h = (struct rt_shm_header *)base;
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
	/* tests: the runtime's fallback for kernels before 6.11 (runtime/mem/rt_vma.c) */
	if (getenv("UBT_TEST_NO_PROCMAP_QUERY"))
		h->flags |= RT_F_NO_PROCMAP_QUERY;
	h->rseq_off = facts->rseq_off;
	h->tid_off = facts->tid_off;
	h->pid = s->has_target ? (uint32_t)s->t.pid : (uint32_t)getpid();
	h->tracer = (uint32_t)getpid();
	for (int i = 0; i < l->nmaps; i++)
		memcpy(base + l->maps[i].off, &l->maps[i].hdr, sizeof(struct rt_map));
	if (l->stacks_off) { /* ustack's table; output/stack.c fills the rest of h->stk */
		memcpy(base + l->stacks_off, &l->stacks, sizeof(l->stacks));
		h->stk.table_off = l->stacks_off;
	}
}

/* Bytes of the data part that write_layout() writes into. */
static size_t layout_extent(const struct cg_layout *l)
{
	uint64_t end = sizeof(struct rt_shm_header);
	for (int i = 0; i < l->nmaps; i++)
		if (l->maps[i].off + sizeof(struct rt_map) > end)
			end = l->maps[i].off + sizeof(struct rt_map);
	if (l->stacks_off && l->stacks_off + sizeof(l->stacks) > end)
		end = l->stacks_off + sizeof(l->stacks);
	return ALIGN_UP(end, PAGE);
}

/*
 * ubt's read-only copy of the headers, for the runtime linked into ubt
 * (host_priv->layout, runtime/rt.h): sparse memory as large as the headers'
 * extent, of which only the header page and the maps' first pages are ever
 * touched.
 */
static int map_host_layout(struct att_session *s, const struct cg_layout *l,
			   const struct cg_facts *facts)
{
	size_t extent = layout_extent(l);
	void *p = mmap(NULL, extent, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED || (write_layout(p, s, l, facts), mprotect(p, extent, PROT_READ))) {
		int err = errno;
		diag_sys(NULL, "mapping the layout for BEGIN/END: %s", strerror(err));
		if (p != MAP_FAILED)
			munmap(p, extent);
		return -err;
	}
	s->host_layout = p;
	s->host_layout_size = extent;
	s->host_priv->layout = (uint64_t)p;
	return 0;
}

static void write_headers(struct att_session *s, const struct cg_layout *l,
			  const struct cg_facts *facts)
{
	write_layout(att_data(s), s, l, facts);
	att_clock_calibrate((struct rt_shm_header *)att_data(s));
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
	int ret = link_objects(in, obj && obj->elf ? 2 : 1, base, ext, ARRAY_SIZE(ext), img, err,
			       sizeof(err));
	if (ret)
		diag_sys(NULL, "internal: linking probe code: %s", err);
	return ret;
}

/*
 * glibc's restorer for SA_RESTORER actions (`mov $15,%rax; syscall`, 16
 * byte aligned in libc's code), or 0.  rt_on_sigaction needs it to keep
 * an action the program installs while int3 sites exist as glibc would
 * have installed it (the kernel cannot deliver a signal to a handler
 * without a restorer on x86-64).
 */
static uint64_t libc_restorer(struct att_session *s)
{
	static const uint8_t want[] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	struct proc_map *maps;
	const struct proc_map *libc;
	int n;
	uint64_t found = 0;
	if (proc_maps_read(s->t.pid, &maps, &n))
		return 0;
	if ((libc = proc_find_libc(maps, n))) {
		for (int i = 0; i < n && !found; i++) {
			const struct proc_map *m = &maps[i];
			if (m->perms[2] != 'x' || strcmp(m->path, libc->path))
				continue;
			char *path = xasprintf("/proc/%d/root%s", s->t.pid, m->path);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			free(path);
			size_t len = m->end - m->start;
			uint8_t *text = fd < 0 ? NULL : xmalloc(len);
			ssize_t got = text ? pread(fd, text, len, (off_t)m->offset) : -1;
			for (ssize_t k = 0; k + (ssize_t)sizeof(want) <= got && !found; k += 16)
				if (!memcmp(text + k, want, sizeof(want)))
					found = m->start + (uint64_t)k;
			free(text);
			if (fd >= 0)
				close(fd);
		}
	}
	proc_maps_free(maps, n);
	return found;
}

/*
 * The kernel forces an int3's SIGTRAP on a thread that blocks it by
 * resetting the process's action to the default: the program would die.
 * Every stopped thread gets SIGTRAP unblocked; rt_on_sigmask keeps it so
 * (rt_trap.c), and new threads inherit their creator's mask.
 */
static void unblock_sigtrap(struct att_session *s)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		pid_t tid = s->t.threads[i].tid;
		uint64_t mask;
		if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask) < 0 ||
		    !(mask & 1ull << (SIGTRAP - 1)))
			continue;
		mask &= ~(1ull << (SIGTRAP - 1));
		if (!ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask) &&
		    s->ntrap_blocked < (int)ARRAY_SIZE(s->trap_blocked))
			s->trap_blocked[s->ntrap_blocked++] = tid;
	}
}

/* Detach, threads stopped, our int3s gone: those threads block SIGTRAP again. */
void att_reblock_sigtrap(struct att_session *s)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		pid_t tid = s->t.threads[i].tid;
		uint64_t mask;
		for (int k = 0; k < s->ntrap_blocked; k++) {
			if (s->trap_blocked[k] != tid ||
			    ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask) < 0)
				continue;
			mask |= 1ull << (SIGTRAP - 1);
			ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask);
		}
	}
	s->ntrap_blocked = 0;
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
	/* the watchdog restores from the session's copies, not from ubt's mappings */
	s->rt_sigtrap = act.handler;
	int ret = att_sig_install(s, SIGTRAP, &act, false, &s->old_trap, &s->trap_installed);
	h->old_trap = s->old_trap;
	if (ret) {
		att_sys_error(s, ret, "rt_sigaction(SIGTRAP) in the target");
		return ret;
	}
	/* without SA_RESTORER the kernel ignores the field: it carries the one
	 * glibc would give an action the program installs later */
	if (!(h->old_trap.flags & 0x04000000 /* SA_RESTORER */))
		h->old_trap.restorer = libc_restorer(s);
	unblock_sigtrap(s);
	return 0;
}

static int lookup_probe(struct att_session *s, uint64_t *h, int variant)
{
	char name[64];
	if (variant >= 0) /* compiled per usdt argument list or `probe` name (names.c) */
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

/* Does the handler of probe `index`, variant k, read its site's name by site id? */
static bool needs_site_id(const struct att_session *s, int index, int k)
{
	for (int i = 0; i < s->nusdt && k >= 0; i++)
		if (s->usdt[i].probe_index == index)
			return s->usdt[i].name_of && k < s->usdt[i].nspecs &&
			       s->usdt[i].name_of[k] < 0;
	return false;
}

/*
 * The site ids of the site's handlers (runtime/abi.h, "Site ids"): the
 * trampoline passes them when one of its handlers reads its name by id,
 * and then to every handler (a fixed call size keeps the pc mapping
 * simple; the others ignore theirs).  Before resolve_handlers, while
 * handlers[] still holds probe indices.
 */
static void site_ids(const struct att_session *s, struct att_site *site)
{
	struct arch_site_plan *plan = &site->plan;
	plan->call_ids = false;
	if (site->internal)
		return;
	for (int h = 0; h < site->nhandlers; h++) {
		plan->call_id[h] = site->variants[h] >= 0 ? (uint32_t)site->name_ids[h] : 0;
		plan->call_ids |= needs_site_id(s, (int)site->handlers[h], site->variants[h]);
	}
	for (int h = 0; h < site->nrhandlers; h++) {
		plan->ret_call_id[h] = site->rvariants[h] >= 0 ? (uint32_t)site->rname_ids[h] : 0;
		plan->call_ids |= needs_site_id(s, (int)site->rhandlers[h], site->rvariants[h]);
	}
}

/* Probe indices (or the internal handler's name) -> addresses in the target. */
static int resolve_handlers(struct att_session *s, struct att_site *site)
{
	int ret = 0;
	site_ids(s, site);
	if (site->internal) {
		site->handlers[0] = link_lookup(&s->image, site->internal);
		return site->handlers[0] ? 0 : -ENOENT;
	}
	for (int h = 0; h < site->nhandlers && !ret; h++)
		ret = lookup_probe(s, &site->handlers[h], site->variants[h]);
	for (int h = 0; h < site->nrhandlers && !ret; h++)
		ret = lookup_probe(s, &site->rhandlers[h], site->rvariants[h]);
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
int att_place_sites(struct att_session *s, int first)
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
			cap = att_tramp_max(site);
			buf = ibuf = xcalloc(1, cap);
		} else {
			site->tramp = s->remote_code + off;
		}
		if (site->plan.mid && s->uses_stack) /* rt_stack_id reads them */
			site->plan.mid_read |= 1u << offsetof(struct rt_regs_mid, pc) / 8 |
					       1u << offsetof(struct rt_regs_mid, rsp) / 8 |
					       1u << offsetof(struct rt_regs_mid, rbp) / 8;
		if (site->plan.mid) /* reg() in usdt / FUNC+OFF probes */
			site->plan.mid_read |= s->mid_regs;
		ret = emit_site(s, site, buf, cap, &len);
		if (!ret && ibuf) {
			ret = tracee_write(&s->t, site->tramp, ibuf, len);
			s->islands[site->island - 1].used += ALIGN_UP(len, 64);
		}
		free(ibuf);
		if (!ret)
			ret = arch_patch_bytes(&site->plan, site->tramp, site->patch);
		for (int k = 0; !ret && k < site->plan.nredirs; k++)
			ret = arch_redirect_bytes(&site->plan, site->copy_addr, k,
						  site->redir_patch[k]);
		for (int h = 0; !ret && h < site->plan.nhops; h++)
			ret = arch_hop_bytes(&site->plan, site->tramp, site->copy_addr, h,
					     site->hop_patch[h]);
		if (ret) {
			diag_sys(NULL, "internal: trampoline for 0x%llx: %s",
				 (unsigned long long)site->func_addr, strerror(-ret));
			return ret;
		}
		if (!site->island)
			off += ALIGN_UP(len, 64);
		if (site->plan.kind == ARCH_PATCH_INT3) {
			/* the count is ubt's: the header is the target's to scribble on */
			if (s->ntraps == RT_TRAP_MAX) {
				diag_sys(NULL, "too many probes need a breakpoint (at most %d)",
					 RT_TRAP_MAX);
				return -E2BIG;
			}
			h->traps[s->ntraps].site = site->plan.site;
			h->traps[s->ntraps].tramp = site->tramp;
			__atomic_store_n(&h->ntraps, (uint32_t)++s->ntraps, __ATOMIC_RELEASE);
		}
	}
	return 0;
}

/* With every thread stopped: SIGTRAP to the runtime once a site needs a breakpoint. */
int att_trap_handler_ready(struct att_session *s)
{
	if (s->ntraps && !s->trap_installed)
		return install_trap_handler(s, (struct rt_shm_header *)att_data(s));
	return 0;
}

/* With every thread stopped, before arming: no other ubt came meanwhile. */
int att_check_alone(struct att_session *s)
{
	struct proc_map *maps = NULL;
	int nmaps = 0, ret = proc_maps_read(s->t.pid, &maps, &nmaps);
	if (!ret)
		ret = check_other_ubt(s, maps, nmaps);
	proc_maps_free(maps, nmaps);
	return ret;
}

int att_install(struct att_session *s, const struct cg_layout *layout,
		const struct cg_object *target_obj, const struct cg_object *host_obj)
{
	struct proc_map *maps = NULL;
	int nmaps = 0, ret;
	struct cg_facts facts;

	s->layout = layout;
	s->tobj = target_obj; /* att_arm starts its features */
	s->data_size = layout->data_size;
	s->uses_stack = target_obj && target_obj->uses_stack;
	s->mid_regs = target_obj ? target_obj->mid_regs : 0;
	att_clock_calibrate(NULL); /* before any thread is stopped */
	att_facts(s, false, &facts);
	s->facts = facts;
	if (s->has_target) {
		if (!s->sites && (ret = sites_alloc(s))) /* -c made it before the watchdog */
			return ret;
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps))) {
			att_sys_error(s, ret, "reading /proc/PID/maps");
			return ret;
		}
		if ((ret = check_other_ubt(s, maps, nmaps)) ||
		    (ret = att_plan_sites(s, maps, nmaps)) ||
		    (ret = att_features_plan(s, target_obj, maps, nmaps)) ||
		    (ret = att_plan_main_wait(s, maps, nmaps)) ||
		    (ret = att_vfork_plan(s, maps, nmaps)) || /* forks.c */
		    (ret = att_check_foreign_breakpoints(s, maps, nmaps)))
			goto out;
		uint64_t lo, hi, ref;
		att_group_sites(s, 0, &lo, &hi, &ref);
		/* the image's size does not depend on where it is linked */
		struct link_image probe;
		if ((ret = link_code(target_obj, 0, 0, 0, &probe)))
			goto out;
		s->code_size = ALIGN_UP(probe.size + 16 + att_tramp_bytes(s, 0), PAGE);
		link_image_free(&probe);
		if ((ret = att_watchdog_start(s)))
			goto out;
		/* One thread stopped while our memory goes in and is filled: the
		 * program does not use that memory yet, so the others run on
		 * (att_arm stops them all for the patches).  A -c command's
		 * threads stand stopped already. */
		bool one = !s->t.stopped;
		uint64_t t0 = att_now_ns();
		s->stop_start_ns = t0;
		if (one && (ret = att_stop_one(s))) {
			att_seize_error(s, ret);
			goto out;
		}
		att_forks_begin(s); /* forks.c: processes started from now on may inherit us */
		proc_maps_free(maps, nmaps);
		maps = NULL;
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps)) ||
		    (ret = check_other_ubt(s, maps, nmaps)) ||
		    (ret = att_map_remote(s, lo, hi, ref)))
			goto out;
		proc_maps_free(maps, nmaps);
		maps = NULL;
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps)) ||
		    (ret = att_map_islands(s, &maps, &nmaps)))
			goto out;
		if ((ret = link_code(target_obj, s->remote_code, s->remote_data, s->remote_priv,
				     &s->image)))
			goto out;
		memcpy(s->local, s->image.bytes, s->image.size);
		write_headers(s, layout, &facts);
		if ((ret = att_features_map(s, target_obj)))
			goto out;
		if ((ret = att_place_sites(s, 0)))
			goto out;
		if (one) {
			att_forks_armed(s); /* a fork meanwhile inherits our memory: what to undo */
			ret = tracee_release(&s->t);
			s->install_stop_ns = att_now_ns() - t0;
			if (ret) {
				att_sys_error(s, ret, "letting the thread go on");
				goto out;
			}
		}
	} else {
		s->code_size = 0;
		if ((ret = att_map_local_only(s)))
			goto out;
		write_headers(s, layout, &facts);
	}
	if (host_obj && host_obj->nprobes) {
		struct link_image probe;
		if ((ret = link_code(host_obj, 0, 0, 0, &probe)))
			goto out;
		size_t size = probe.size;
		link_image_free(&probe);
		if ((ret = att_map_host_code(s, size)) || (ret = map_host_layout(s, layout, &facts)))
			goto out;
		if ((ret = link_code(host_obj, (uint64_t)s->host_code, (uint64_t)att_data(s),
				     (uint64_t)s->host_priv, &s->host_image)))
			goto out;
		memcpy(s->host_code, s->host_image.bytes, s->host_image.size);
	}
out:
	if (s->t.stopped && s->t.one) /* failed with the one thread held */
		tracee_release(&s->t);
	proc_maps_free(maps, nmaps);
	return ret;
}

void att_run_host(struct att_session *s, const struct cg_object *host_obj, const char *provider)
{
	if (!host_obj || !s->host_code)
		return;
	struct rt_regs regs = {0};
	for (int i = 0; i < host_obj->nprobes; i++) {
		const struct cg_probe *p = &host_obj->probes[i];
		/* any of its attach points: `BEGIN,END { }` runs at both */
		bool match = false;
		for (int j = 0; j < p->probe->nkids && !match; j++)
			match = !strcmp(p->probe->kids[j]->attach.provider, provider);
		if (!match)
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

static size_t session_bytes(void);

void att_close(struct att_session *s)
{
	if (s->local)
		munmap(s->local, s->code_size + s->data_size);
	if (s->host_code)
		munmap(s->host_code, s->host_code_size);
	if (s->host_layout)
		munmap(s->host_layout, s->host_layout_size);
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
	if (s->sites)
		munmap(s->sites, s->sites_bytes);
	munmap(s, session_bytes());
}

/*
 * The session lives in memory shared with the watchdog (watchdog.c), which
 * forks before the target is first touched and must see every later step.
 */
static size_t session_bytes(void)
{
	return ALIGN_UP(sizeof(struct att_session), PAGE);
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
	s->remote_fd = -1;
	s->host_proc_fd = -1;
	s->t.mem_fd = s->t.pidfd = -1;
	return s;
}

/*
 * Room for a site per attach point (BPFTRACE_MAX_PROBES bounds them, in
 * tools/ubt.c) and ubt's own probes, in memory shared with the watchdog:
 * made before it forks, with every site any later step can add (libraries
 * loaded later arm points counted here).
 */
static int sites_alloc(struct att_session *s)
{
	/* -c: made before the command runs, when the sites of its other
	 * objects than libc are not known yet (att_sys_objects) */
	size_t n = (size_t)s->npoints + ATT_OWN_SITES + (s->nsys_attach ? ATT_SYS_LATE_SITES : 0);
	size_t bytes = ALIGN_UP(n * sizeof(struct att_site), PAGE);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		diag_sys(NULL, "mmap (%zu probe sites): %s", n, strerror(errno));
		return -ENOMEM;
	}
	s->sites = p;
	s->max_sites = (int)n;
	s->sites_bytes = bytes;
	return 0;
}
