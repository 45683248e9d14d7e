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
#include "attach/session.h"
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

/*
 * Moves threads whose pc is inside the displaced bytes of site into its
 * copy, at once: the patch is written after, so a ubt SIGKILLed between
 * the two leaves a thread running the copy (valid code, restored by the
 * watchdog), never one released into the middle of the jump.
 */
static int move_threads_in(struct att_session *s, struct att_site *site)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		struct tracee_thread *th = &s->t.threads[i];
		uint64_t pc = th->regs.rip, npc;
		if (pc > site->plan.site && pc < site->plan.site + site->plan.orig_len &&
		    !arch_pc_into_copy(&site->plan, site->copy_addr, pc, &npc)) {
			th->regs.rip = npc;
			th->regs_dirty = true;
			int ret = tracee_put_regs(&s->t, i);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static void move_threads_out(struct att_session *s, struct att_site *site)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		struct tracee_thread *th = &s->t.threads[i];
		uint64_t npc, sp_add;
		if (!arch_pc_from_copy(&site->plan, site->copy_addr, th->regs.rip, &npc, &sp_add)) {
			th->regs.rip = npc;
			th->regs.rsp += sp_add; /* between the push and the jmp of a call *op */
			th->regs_dirty = true;
		}
		/* on a hop's jmp: about to run what it stands for */
		for (int h = 0; h < site->plan.nhops; h++)
			if (th->regs.rip == site->plan.hop[h].at) {
				th->regs.rip = site->plan.hop[h].resume;
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
 * Fork children (runtime rt_fork_enable): on at arming, with what a
 * child's private page needs of the traced process's; off first thing at
 * detach, so no child turns its probes on while ubt takes them away:
 * through the target's memory (the watchdog, forked before ubt mapped the
 * memfd, has no mapping of its own; the memfd is shared with every child).
 */
void att_follow_forks(struct att_session *s, bool on)
{
	struct rt_shm_header *h;
	struct rt_priv p;
	if (!on) {
		uint32_t off = 0;
		tracee_write(&s->t, s->remote_data + offsetof(struct rt_shm_header, forks_on), &off,
			     sizeof(off));
		return;
	}
	h = (struct rt_shm_header *)att_data(s);
	if (tracee_read(&s->t, s->remote_priv, &p, sizeof(p)))
		return; /* then children keep their probes off */
	h->fork_rd_gen = p.rd_gen;
	h->fork_pstack_base = p.pstack_base;
	h->fork_pstack_size = p.pstack_size;
	h->fork_pstack_seg = p.pstack_seg;
	__atomic_store_n(&h->forks_on, 1, __ATOMIC_RELEASE);
}

/* At arming: on, or on once the program reaches main (plan_main_wait). */
static int set_enabled_at_arm(struct att_session *s)
{
	uint32_t on = 1;
	if (s->wait_main)
		return tracee_write(&s->t,
				    s->remote_priv + offsetof(struct rt_priv, enable_at_main), &on,
				    sizeof(on));
	return set_enabled(s, 1);
}

/*
 * Writes the site's patch.  Hops (struct arch_hop, in fill nothing runs)
 * go first, then the branches redirected into its trampoline (struct
 * arch_redirect), then the jump; they come back in the other order
 * (restore_sites): a ubt killed in between leaves the branches leading to
 * the relocated copy, valid code the watchdog takes back, never into the
 * middle of the jump.
 */
static int write_patch(struct att_session *s, struct att_site *site)
{
	const struct arch_site_plan *pl = &site->plan;
	int ret = 0, k, h;
	for (h = 0; !ret && h < pl->nhops; h++)
		ret = tracee_write(&s->t, pl->hop[h].at, site->hop_patch[h], ARCH_HOP_LEN);
	for (k = 0; !ret && k < pl->nredirs; k++)
		ret = tracee_write(&s->t, pl->redir[k].at, site->redir_patch[k], pl->redir[k].len);
	if (!ret)
		ret = tracee_write(&s->t, pl->site, site->patch, pl->orig_len);
	if (ret) { /* not patched: no branch may lead to code detach unmaps */
		while (k-- > 0)
			tracee_write(&s->t, pl->redir[k].at, pl->redir[k].orig, pl->redir[k].len);
		while (h-- > 0)
			tracee_write(&s->t, pl->hop[h].at, pl->hop[h].orig, ARCH_HOP_LEN);
	}
	return ret;
}

/* Takes back what write_patch() wrote (the threads are stopped). */
static void write_orig(struct att_session *s, struct att_site *site)
{
	const struct arch_site_plan *pl = &site->plan;
	tracee_write(&s->t, pl->site, pl->orig, pl->orig_len);
	for (int k = 0; k < pl->nredirs; k++)
		tracee_write(&s->t, pl->redir[k].at, pl->redir[k].orig, pl->redir[k].len);
	for (int h = 0; h < pl->nhops; h++)
		tracee_write(&s->t, pl->hop[h].at, pl->hop[h].orig, ARCH_HOP_LEN);
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
	bool same = !ret && !memcmp(now, site->plan.orig, site->plan.orig_len);
	for (int k = 0; same && k < site->plan.nredirs; k++)
		same = !(ret = tracee_read(&s->t, site->plan.redir[k].at, now,
					   site->plan.redir[k].len)) &&
		       !memcmp(now, site->plan.redir[k].orig, site->plan.redir[k].len);
	for (int h = 0; same && h < site->plan.nhops; h++)
		same = !(ret = tracee_read(&s->t, site->plan.hop[h].at, now, ARCH_HOP_LEN)) &&
		       !memcmp(now, site->plan.hop[h].orig, ARCH_HOP_LEN);
	if (!ret && !same) {
		diag_sys(NULL, "pid %d: code at 0x%llx changed while attaching", s->t.pid,
			 (unsigned long long)site->plan.site);
		ret = -EAGAIN;
	}
	return ret;
}

static int stop_patiently(struct att_session *s);

/*
 * Every thread stopped, from the trampolines placed (att_install, with one
 * thread stopped) to the patches written: what else needs them all stopped
 * comes first (signal actions, profile timers, another ubt's arrival).
 * Each error is said here.
 */
static int stop_for_arm(struct att_session *s)
{
	int ret = 0;
	if (!s->t.stopped) {
		s->stop_start_ns = att_now_ns();
		if ((ret = stop_patiently(s))) {
			att_seize_error(s, ret);
			return ret;
		}
	}
	if (!(ret = att_check_alone(s)) && !(ret = att_trap_handler_ready(s)))
		ret = att_features_start(s, s->tobj);
	return ret;
}

int att_arm(struct att_session *s)
{
	int ret = 0;
	if (!s->has_target)
		return 0;
	int stopped = stop_for_arm(s);
	if (stopped)
		goto out;
	ret = set_enabled_at_arm(s);
	for (int i = 0; i < s->nsites && !ret; i++) {
		struct att_site *site = &s->sites[i];
		if ((ret = site_unchanged(s, site)))
			break;
		if (!(ret = move_threads_in(s, site)))
			ret = write_patch(s, site);
		if (!ret)
			site->patched = true;
	}
	if (!ret)
		ret = att_features_arm(s); /* probes are live: usdt semaphores let the program fire them */
	if (!ret) {
		att_forks_armed(s); /* forks.c: what a process forked from now on inherits */
		att_follow_forks(s, true);
	}
	if (ret) {
		att_sys_error(s, ret, "patching");
		for (int i = 0; i < s->nsites; i++)
			if (s->sites[i].patched) {
				write_orig(s, &s->sites[i]);
				s->sites[i].patched = false;
			}
	}
out:
	s->attach_nthreads = s->t.nthreads;
	int r = tracee_release(&s->t);
	s->attach_stop_ns = att_now_ns() - s->stop_start_ns;
	return stopped ? stopped : ret ? ret : r;
}

/*
 * Puts the application's SIGTRAP action back if ours is still installed:
 * the one in the header, where rt_on_sigaction keeps an action the
 * program installed while traced (rt_trap.c).
 */
static void remove_trap_handler(struct att_session *s)
{
	struct rt_sigaction_k app;
	if (s->trap_installed && s->sig_watched &&
	    !tracee_read(&s->t, s->remote_data + offsetof(struct rt_shm_header, old_trap), &app,
			 sizeof(app)))
		s->old_trap = app;
	att_sig_restore(s, SIGTRAP, s->rt_sigtrap, &s->old_trap, &s->trap_installed);
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

static bool in_region(const struct att_region *rg, uint64_t pc)
{
	return rg->state != ATT_RG_NONE && pc >= rg->addr && pc < rg->addr + rg->len;
}

/* Unmaps ubt's memory in the target if no thread's pc (or stack pointer) is inside it. */
static bool unmap_if_idle(struct att_session *s)
{
	bool busy = false;
	for (int i = 0; i < s->t.nthreads; i++) {
		uint64_t pc = s->t.threads[i].regs.rip;
		busy |= in_region(&s->rg_code, pc) || in_region(&s->rg_data, pc) ||
			in_region(&s->rg_priv, pc);
		/* a signal handler of the program's that interrupted a probe
		 * runs on the probe stack: its pc is not ours */
		busy |= att_features_busy(s, s->t.threads[i].regs.rsp);
		for (int k = 0; k < s->nislands; k++)
			busy |= in_region(&s->islands[k].rg, pc);
		clear_rseq_cs(s, &s->t.threads[i]);
	}
	if (busy)
		return false;
	/* no thread is inside rt_sigtrap, whose return would put back the mask
	 * its signal frame saved: SIGTRAP can be blocked again where it was */
	att_reblock_sigtrap(s);
	/* no thread can be inside a read routine now: the handler can go, and
	 * the features' memory (shadow stacks, probe stacks) with the code */
	att_features_unmap(s);
	att_region_unmap(s, &s->rg_code);
	att_region_unmap(s, &s->rg_data);
	att_region_unmap(s, &s->rg_priv);
	for (int i = 0; i < s->nislands; i++)
		att_region_unmap(s, &s->islands[i].rg);
	s->remote_mapped = s->rg_code.state != ATT_RG_NONE || s->rg_data.state != ATT_RG_NONE ||
			   s->rg_priv.state != ATT_RG_NONE;
	return true;
}

/* ---- detach ------------------------------------------------------------ */

/* How long detach waits for the threads to leave ubt's code. */
#define ATT_UNMAP_WAIT_US 3000000

static const struct att_site *trap_site(const struct att_session *s, uint64_t at)
{
	for (int i = 0; i < s->nsites; i++)
		if (s->sites[i].plan.kind == ARCH_PATCH_INT3 && s->sites[i].plan.site == at &&
		    s->sites[i].tramp)
			return &s->sites[i];
	return NULL;
}

static bool is_trap(void *ctx, uint64_t at)
{
	return trap_site(ctx, at) != NULL;
}

/*
 * Stops every thread.  A thread caught in the SIGTRAP of one of our int3s
 * is put back on the int3 without it (tracee.c, struct tracee is_trap),
 * so whatever happens next (detach removing our handler, ubt dying with
 * the thread stopped) no thread holds a SIGTRAP that only our handler
 * knew.  A thread found just past one of our int3s without its SIGTRAP
 * lost it: a tracer died while holding it (the kernel drops a signal held
 * in a delivery-stop when the tracer dies).  Where the first instruction
 * is longer than the int3 that is no instruction boundary, so nothing
 * else leaves a thread there: it goes back on the int3 too.
 */
int att_stop_one(struct att_session *s)
{
	s->t.is_trap = is_trap;
	s->t.trap_ctx = s;
	return tracee_stop_one(&s->t);
}

/*
 * att_stop, again for up to a second while another tracer holds a thread
 * (-EPERM: a debugger's or a tracer's brief stop, e.g. a second ubt that
 * looks and gives up): arming and detaching need every thread.
 */
static int stop_patiently(struct att_session *s)
{
	int ret = att_stop(s);
	for (int i = 0; ret == -EPERM && i < 40; i++) {
		struct timespec ts = {0, 25 * 1000 * 1000};
		nanosleep(&ts, NULL);
		ret = att_stop(s);
	}
	return ret;
}

int att_stop(struct att_session *s)
{
	s->t.is_trap = is_trap;
	s->t.trap_ctx = s;
	int ret = tracee_stop_all(&s->t);
	for (int i = 0; !ret && i < s->t.nthreads; i++) {
		struct tracee_thread *th = &s->t.threads[i];
		const struct att_site *site = trap_site(s, th->regs.rip - 1);
		if (site && site->plan.orig_len > 1 && !th->in_signal_stop) {
			th->regs.rip--;
			th->regs_dirty = true;
		}
	}
	return ret;
}

/*
 * len bytes at `at` back to orig where they hold ours (patch); false, said,
 * where someone else changed them (naming the instruction at insn).
 */
static bool restore_bytes(struct att_session *s, uint64_t at, const uint8_t *patch,
			  const uint8_t *orig, size_t len, uint64_t insn)
{
	uint8_t now[ARCH_HOP_LEN];
	int rd = tracee_read(&s->t, at, now, len);
	if (!rd && !memcmp(now, patch, len)) {
		tracee_write(&s->t, at, orig, len);
	} else if (rd || memcmp(now, orig, len)) {
		diag_sys(NULL,
			 "pid %d: code at 0x%llx was changed by someone else; left as is, with "
			 "ubt's code mapped in case it still leads there",
			 s->t.pid, (unsigned long long)insn);
		return false;
	}
	return true;
}

/*
 * restore_sites() for the branches the site redirected, then its hops
 * (after its jump; also for a site whose jump was never written, as a ubt
 * killed inside write_patch() leaves it)
 */
static bool restore_redirects(struct att_session *s, const struct att_site *site)
{
	const struct arch_site_plan *pl = &site->plan;
	bool ok = true;
	for (int k = 0; k < pl->nredirs; k++)
		ok &= restore_bytes(s, pl->redir[k].at, site->redir_patch[k], pl->redir[k].orig,
				    pl->redir[k].len, pl->redir[k].insn);
	for (int h = 0; h < pl->nhops; h++)
		ok &= restore_bytes(s, pl->hop[h].at, site->hop_patch[h], pl->hop[h].orig,
				    ARCH_HOP_LEN, pl->hop[h].at);
	return ok;
}

/*
 * Puts the original bytes back where they still hold our patch.  A site
 * whose first byte someone else replaced after we patched it (a kernel
 * uprobe or a debugger puts an int3 there: `bpftrace -p` on the same
 * function) gets the rest of its original bytes back behind that byte, so
 * the other tracer's breakpoint, which runs the file's first instruction
 * and goes on after it, finds the original code there.  Any other change
 * may still jump into our code: false then, and the code stays mapped.
 */
static bool restore_sites(struct att_session *s)
{
	bool ok = true;
	for (int i = 0; i < s->nsites; i++) {
		struct att_site *site = &s->sites[i];
		const struct arch_site_plan *pl = &site->plan;
		uint8_t now[ARCH_MAX_DISPLACED];
		bool changed = false;
		if (!site->patched) { /* what a ubt killed inside write_patch() wrote */
			ok &= restore_redirects(s, site);
			move_threads_out(s, site);
			continue;
		}
		int r = tracee_read(&s->t, pl->site, now, pl->orig_len);
		if (!r && !memcmp(now, site->patch, pl->orig_len)) {
			tracee_write(&s->t, pl->site, pl->orig, pl->orig_len);
		} else if (!r && pl->kind == ARCH_PATCH_JMP &&
			   (now[0] == 0xcc || now[0] == pl->orig[0]) &&
			   now[0] != site->patch[0] &&
			   !memcmp(now + 1, site->patch + 1, pl->orig_len - 1)) {
			tracee_write(&s->t, pl->site + 1, pl->orig + 1, pl->orig_len - 1);
			fprintf(stderr, "WARNING: pid %d: another tracer's breakpoint (a kernel uprobe "
					"or a debugger) was written over ubt's jump at 0x%llx; the "
					"original code behind it is back\n",
				s->t.pid, (unsigned long long)pl->site);
		} else if (r || memcmp(now, pl->orig, pl->orig_len)) {
			diag_sys(NULL, "pid %d: code at 0x%llx was changed by someone else; left as "
				 "is, with ubt's code mapped in case it still leads there",
				 s->t.pid, (unsigned long long)pl->site);
			ok = false;
			changed = true;
		}
		/* the jump is gone: the branches may lead back into the bytes
		 * (someone else's change keeps them on ubt's code, mapped) */
		if (!changed)
			ok &= restore_redirects(s, site);
		site->patched = false;
		move_threads_out(s, site);
	}
	return ok;
}

/*
 * Detaches from the process in s->t (the traced one, or a process forked
 * from it), whose threads are stopped: undoes what is still ours, unmaps
 * ubt's memory once no thread is inside it, and lets the threads go.
 * Every step checks the process itself, so it is right whatever point an
 * earlier (dead) ubt had reached.
 */
int att_detach_stopped(struct att_session *s, uint64_t t0)
{
	int ret;
	set_enabled(s, 0);
	att_features_stop(s); /* profile timers, then the signal's action */
	bool unmap = restore_sites(s);
	remove_trap_handler(s);
	att_features_detach(s); /* return addresses back, usdt semaphores released */
	if (!unmap) {
		att_reblock_sigtrap(s);
		ret = tracee_release(&s->t);
		s->detach_stop_ns = att_now_ns() - t0;
		return ret;
	}
	if (!unmap_if_idle(s)) {
		/* A thread was inside our code.  Nothing leads there any more, so
		 * let it run out and look again, waiting longer each time (on a
		 * loaded machine a thread may not run for tens of ms), before
		 * leaving the memory behind as inert pages. */
		ret = tracee_release(&s->t);
		s->detach_stop_ns = att_now_ns() - t0;
		long wait_us = 500, waited_us = 0;
		while (!ret && s->remote_mapped && waited_us < ATT_UNMAP_WAIT_US) {
			struct timespec ts = {0, wait_us * 1000};
			nanosleep(&ts, NULL);
			waited_us += wait_us;
			wait_us = wait_us < 64000 ? wait_us * 2 : wait_us;
			if (att_stop(s))
				return 0;
			unmap_if_idle(s);
			ret = tracee_release(&s->t);
		}
		if (s->remote_mapped)
			fprintf(stderr, "WARNING: pid %d: a thread stayed inside ubt's code for %ld ms; "
					"its memory is left mapped, inert (nothing leads there)\n",
				s->t.pid, waited_us / 1000);
		return ret;
	}
	ret = tracee_release(&s->t);
	s->detach_stop_ns = att_now_ns() - t0;
	return ret;
}

/* The traced process itself. */
/* Anything of ours live in the target but memory: a patch, a signal action, a semaphore? */
static bool armed_any(const struct att_session *s)
{
	bool any = s->trap_installed || s->segv_installed || s->bus_installed || s->prof_installed;
	for (int i = 0; i < s->nsites && !any; i++)
		any = s->sites[i].patched;
	for (int i = 0; i < s->nsemas && !any; i++)
		any = s->semas[i].held;
	return any;
}

static int detach_main(struct att_session *s)
{
	if (!s->remote_mapped)
		return 0;
	int status;
	if (tracee_wait_exit(&s->t, 0, &status) == 1)
		return 0; /* gone: nothing to restore */
	if (s->t.stopped && s->t.one) /* attaching failed with one thread held */
		tracee_release(&s->t);
	uint64_t t0 = att_now_ns();
	int ret = stop_patiently(s);
	if (ret && ret != -ESRCH && !armed_any(s) && !att_stop_one(s)) {
		/* A thread we cannot stop (another tracer took it since the
		 * attach began), but nothing leads into our memory yet: it goes
		 * with one thread stopped, as it came. */
		unmap_if_idle(s);
		return tracee_release(&s->t);
	}
	if (ret) {
		if (ret == -ESRCH)
			return 0;
		att_sys_error(s, ret, "ptrace(PTRACE_SEIZE) for detach");
		return ret;
	}
	return att_detach_stopped(s, t0);
}

int att_detach(struct att_session *s)
{
	if (!s->has_target)
		return 0;
	if (s->remote_mapped)
		att_follow_forks(s, false);
	int ret = detach_main(s);
	att_forks_restore(s); /* forks.c: processes forked while we were attached */
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
	/* the old image took everything with it (forks made before keep theirs) */
	s->remote_mapped = false;
	s->rg_code.state = s->rg_data.state = s->rg_priv.state = s->rg_rets.state = ATT_RG_NONE;
	s->rg_pstack.state = ATT_RG_NONE;
	for (int i = 0; i < s->nislands; i++)
		s->islands[i].rg.state = ATT_RG_NONE;
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
	if ((ret = att_stop(s)))
		return ret;
	if (!ready(s) || (ret = proc_maps_read(s->t.pid, &maps, &nmaps)))
		goto out;
	/* att_plan_sites() over the pending points only */
	struct att_point *all = s->points, *late = xcalloc(s->npoints + 1, sizeof(*late));
	int nall = s->npoints, nlate = 0;
	for (int i = 0; i < nall; i++) {
		struct att_point *p = &all[i];
		uint64_t bias;
		if (!p->pending || att_point_bias(s, p, maps, nmaps, &bias))
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
	if ((ret = att_map_islands(s, &maps, &nmaps)) || (ret = att_place_sites(s, first)) ||
	    (ret = att_trap_handler_ready(s)))
		goto out;
	for (int i = first; i < s->nsites && !ret; i++) {
		struct att_site *site = &s->sites[i];
		if ((ret = site_unchanged(s, site)))
			break;
		ret = move_threads_in(s, site);
		if (!ret)
			ret = write_patch(s, site);
		if (!ret)
			site->patched = true;
	}
	if (!ret)
		att_forks_armed(s); /* the new islands */
out:
	proc_maps_free(maps, nmaps);
	if (ret) { /* take back what was patched: the session ends as before */
		for (int i = first; i < s->nsites; i++)
			if (s->sites[i].patched)
				write_orig(s, &s->sites[i]);
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
