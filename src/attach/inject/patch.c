/*
 * patch.c - patching probed sites and taking the patches back (the last
 * step of attach, and detach; placement.c and session.c prepare what is
 * patched in).
 *
 * Patching happens while every thread is stopped: a thread whose pc is
 * inside the bytes a patch displaces is moved to the same instruction in
 * the trampoline's relocated copy first.  Detach restores the original
 * bytes only where they still hold our patch, moves threads back out of
 * relocated copies, and unmaps the code and data only when no thread's pc
 * is inside them; otherwise they stay as inert pages.  Sites of libraries
 * loaded after attach are armed here too (att_arm_late).
 */
#include "attach/attach.h"
#include "elf/elfsym.h"
#include "util/util.h"
#include "attach/inject/session_internal.h"

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

/*
 * The site's bytes are still those it was planned from: 0, or -EAGAIN (said).
 * Two sites closer than a jump (FUNC+7 and FUNC+9 of `mov (%rdx),%eax;
 * add %edi,%eax`) would otherwise patch each other's bytes.
 */
static int site_unchanged(struct att_session *s, const struct att_site *site)
{
	uint8_t now[ARCH_MAX_DISPLACED];
	int ret = tracee_read(&s->t, site->plan.site, now, site->plan.orig_len);
	if (!ret && memcmp(now, site->plan.orig, site->plan.orig_len)) {
		diag_sys(NULL, "pid %d: code at 0x%llx changed while attaching", s->t.pid,
			 (unsigned long long)site->plan.site);
		ret = -EAGAIN;
	}
	return ret;
}

int att_arm(struct att_session *s)
{
	int ret = 0;
	if (!s->has_target)
		return 0;
	ret = set_enabled(s, 1);
	for (int i = 0; i < s->nsites && !ret; i++) {
		struct att_site *site = &s->sites[i];
		if ((ret = site_unchanged(s, site)))
			break;
		move_threads_in(s, site);
		if (!ret)
			ret = tracee_write(&s->t, site->plan.site, site->patch, site->plan.orig_len);
		if (!ret)
			site->patched = true;
	}
	if (!ret)
		ret = att_features_arm(s); /* probes are live: usdt semaphores let the program fire them */
	if (ret) {
		att_sys_error(s, ret, "patching");
		for (int i = 0; i < s->nsites; i++)
			if (s->sites[i].patched) {
				tracee_write(&s->t, s->sites[i].plan.site, s->sites[i].plan.orig,
					     s->sites[i].plan.orig_len);
				s->sites[i].patched = false;
			}
	}
	s->attach_nthreads = s->t.nthreads;
	int r = tracee_release(&s->t);
	s->attach_stop_ns = att_now_ns() - s->stop_start_ns;
	return ret ? ret : r;
}

/* Puts the application's SIGTRAP action back if ours is still installed. */
static void remove_trap_handler(struct att_session *s)
{
	struct rt_sigaction_k cur;
	uint64_t at;
	int64_t r;
	if (!s->trap_installed || tracee_scratch(&s->t, &s->old_trap, sizeof(cur), &at))
		return;
	if (att_rsys(s, SYS_rt_sigaction, SIGTRAP, 0, at + 64, 8, 0, 0, &r) ||
	    tracee_read(&s->t, at + 64, &cur, sizeof(cur)))
		return;
	if (cur.handler == s->rt_sigtrap)
		att_rsys(s, SYS_rt_sigaction, SIGTRAP, at, 0, 8, 0, 0, &r);
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

/* Unmaps ubt's memory in the target if no thread's pc (or stack pointer) is inside it. */
static bool unmap_if_idle(struct att_session *s)
{
	bool busy = false;
	for (int i = 0; i < s->t.nthreads; i++) {
		uint64_t pc = s->t.threads[i].regs.rip;
		if (pc >= s->remote_code && pc < s->remote_priv + PAGE)
			busy = true;
		/* a signal handler of the program's that interrupted a probe
		 * runs on the probe stack: its pc is not ours */
		if (att_features_busy(s, s->t.threads[i].regs.rsp))
			busy = true;
		for (int k = 0; k < s->nislands; k++)
			if (pc >= s->islands[k].addr && pc < s->islands[k].addr + s->islands[k].size)
				busy = true;
		clear_rseq_cs(s, &s->t.threads[i]);
	}
	if (busy)
		return false;
	int64_t r;
	/* no thread can be inside a read routine now: the handler can go, and
	 * the features' memory (shadow stacks, probe stacks) with the code */
	att_features_unmap(s);
	att_rsys(s, SYS_munmap, s->remote_code, s->code_size + s->data_size + PAGE, 0, 0, 0, 0, &r);
	s->remote_mapped = false;
	for (int i = 0; i < s->nislands; i++)
		att_rsys(s, SYS_munmap, s->islands[i].addr, s->islands[i].size, 0, 0, 0, 0, &r);
	return true;
}

int att_detach(struct att_session *s)
{
	if (!s->has_target || !s->remote_mapped)
		return 0;
	int status;
	if (tracee_wait_exit(&s->t, 0, &status) == 1)
		return 0; /* gone: nothing to restore */
	uint64_t t0 = att_now_ns();
	int ret = tracee_stop_all(&s->t);
	if (ret) {
		if (ret == -ESRCH)
			return 0;
		att_sys_error(s, ret, "ptrace(PTRACE_SEIZE) for detach");
		return ret;
	}
	set_enabled(s, 0);
	att_features_stop(s); /* profile timers, then the signal's action */
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
	remove_trap_handler(s);
	att_features_detach(s); /* return addresses back, usdt semaphores released */
	if (!unmap_if_idle(s)) {
		/* A thread was inside our code.  Nothing leads there any more, so
		 * let it run out and look again a few times before leaving the
		 * memory behind as inert pages. */
		ret = tracee_release(&s->t);
		s->detach_stop_ns = att_now_ns() - t0;
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
	s->detach_stop_ns = att_now_ns() - t0;
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
	if (n == 0) {
		/* an exiting process has no mappings left before its exit is
		 * reported; a program after exec always has some */
		proc_maps_free(maps, n);
		return ATT_ALIVE;
	}
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
	s->stop_start_ns = att_now_ns();
	if ((ret = tracee_stop_all(&s->t)))
		return ret;
	if (!ready(s) || (ret = proc_maps_read(s->t.pid, &maps, &nmaps)))
		goto out;
	/* att_plan_sites() over the pending points only */
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
	ret = nlate ? att_plan_sites(s, maps, nmaps) : 0;
	s->points = all;
	s->npoints = nall;
	free(late);
	if (!ret)
		ret = att_features_plan_late(s, maps, nmaps); /* libgcc_s's unwinder (ret.c) */
	if (ret || s->nsites == first)
		goto out;
	if ((ret = att_map_islands(s, &maps, &nmaps)) || (ret = att_place_sites(s, first)))
		goto out;
	for (int i = first; i < s->nsites && !ret; i++) {
		struct att_site *site = &s->sites[i];
		if ((ret = site_unchanged(s, site)))
			break;
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
	} else {
		att_features_armed_late(s, first);
	}
	int r = tracee_release(&s->t);
	s->attach_stop_ns = att_now_ns() - s->stop_start_ns;
	if (ret)
		return ret;
	return r ? r : s->nsites - first;
}
