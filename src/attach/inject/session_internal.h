/*
 * session_internal.h - what session.c (planning, install), placement.c
 * (memory in the target) and patch.c (patching, detach) share.  Not part
 * of attach's interface (that is attach.h).
 *
 * Room rule (attach/inject/): inject is the only code, with features/,
 * that changes the target: memory mapped in it, trampolines and patches
 * written, state-changing remote system calls (att_rsys, tracee_write.h);
 * every step is undone by att_detach() or, if ubt dies, by the watchdog.
 * It owns the session and may use every lower room (target/, resolve/'s
 * points, arch/, the ELF layer).  Only inject/ and features/ include this
 * header (tests/layers/check.py).
 */
#ifndef UBT_ATTACH_SESSION_INTERNAL_H
#define UBT_ATTACH_SESSION_INTERNAL_H

#include "attach/session.h"
#include "attach/target/tracee_write.h"

#include <stdint.h>
#include <time.h>

#define PAGE 4096ull

static inline uint64_t att_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* session.c */
void att_sys_error(struct att_session *s, int err, const char *what);
int att_plan_sites(struct att_session *s, struct proc_map *maps, int nmaps);
/* The load bias of p's file in the target (opened through its root): 0 or -errno. */
int att_point_bias(const struct att_session *s, const struct att_point *p,
		   const struct proc_map *maps, int nmaps, uint64_t *bias);
int att_place_sites(struct att_session *s, int first);
/* session.c, every thread stopped: SIGTRAP's action is the runtime's once
 * a site needs a breakpoint; no other ubt mapped its memory meanwhile */
int att_trap_handler_ready(struct att_session *s);
int att_check_alone(struct att_session *s);
struct ef_file;
int att_open_mapped(const struct att_session *s, const struct proc_map *m,
		    const struct proc_map *maps, int nmaps, struct ef_file *f, uint64_t *bias);
int att_add_internal_site(struct att_session *s, uint64_t addr, uint64_t size,
			  const char *handler, bool jmp_only);
int att_add_internal_func(struct att_session *s, struct ef_file *f, uint64_t bias,
			  const char *sym, const char *handler);

/* plan_mid.c: says that p's library is not loaded in the target (its
 * probe is skipped, or armed when it loads); plans a mid-function site for
 * every usdt location and then every mid-function uprobe (p->mid, loaded,
 * at load bias p->bias), each location kept out of the others' jumps */
void att_point_not_loaded(struct att_session *s, struct att_point *p);
/* A site planned with a breakpoint: the warning that says why (vaddr: the
 * USDT site's address, 0 for a function's entry or offset). */
void att_warn_breakpoint(const struct att_point *p, const struct att_site *site, uint64_t vaddr);
/* the file of p as the target sees it, through its root (malloc'ed) */
char *att_point_file(const struct att_session *s, const struct att_point *p);
/* xref.c: an entry site another function branches into becomes a breakpoint */
void att_xref_check(struct att_session *s, const struct att_point *p, struct att_site *site);
void att_xref_free(struct att_session *s);
int att_plan_mids(struct att_session *s, const struct proc_map *maps, int nmaps);
/* plan_sites.c: the checks against the process (another tracer's
 * breakpoint in a planned site's bytes, or a hop's: -EBUSY, said), and a
 * static program's probes turned on at main (s->wait_main) */
int att_check_foreign_breakpoints(struct att_session *s, const struct proc_map *maps, int n);
int att_plan_main_wait(struct att_session *s, const struct proc_map *maps, int nmaps);

/*
 * A feature (attach/features/): an optional part of the session, with its
 * own fields in struct att_session, set up and undone at fixed points of
 * the session's life.  Every verb may be NULL; inject/ calls them through
 * the att_features_*() walkers below (verbs.c) and names no feature, so
 * features/ depends on inject/ and not the other way round.
 */
struct att_feature {
	const char *name;
	/* att_install, after the sites are planned; maps: the target's */
	int (*plan)(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		    int nmaps);
	/* a return probe's function at addr gets its first handler: -ECANCELED
	 * skips the point (warned), another -errno fails (said) */
	int (*check_return)(struct att_session *s, const struct att_point *p, uint64_t addr);
	/* att_install, code linked, before the trampolines are written */
	int (*map)(struct att_session *s, const struct cg_object *obj, struct rt_shm_header *h);
	/* att_install, trampolines written, threads still stopped */
	int (*start)(struct att_session *s, const struct cg_object *obj, struct rt_shm_header *h);
	/* att_arm, every site patched */
	int (*arm)(struct att_session *s);
	/* att_detach, threads stopped, before the sites are restored */
	void (*stop)(struct att_session *s);
	/* att_detach, after the sites are restored */
	void (*detach)(struct att_session *s);
	/* a thread with this stack pointer may still run the feature's code */
	bool (*busy)(const struct att_session *s, uint64_t rsp);
	/* att_detach, no thread in ubt's code: before the code is unmapped */
	void (*unmap)(struct att_session *s);
	/* att_arm_late: after the sites of libraries loaded later are planned,
	 * and once they are patched (first: the first new site) */
	int (*plan_late)(struct att_session *s, struct proc_map *maps, int nmaps);
	void (*armed_late)(struct att_session *s, int first);
};

/* features/table.c: every feature, in the order its verbs run; NULL-terminated */
extern const struct att_feature *const att_features[];

/* verbs.c: each walks att_features[] for one verb; the int ones stop at
 * the first error and return it */
int att_features_plan(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		      int nmaps);
int att_features_check_return(struct att_session *s, const struct att_point *p, uint64_t addr);
int att_features_map(struct att_session *s, const struct cg_object *obj);
int att_features_start(struct att_session *s, const struct cg_object *obj);
int att_features_arm(struct att_session *s);
void att_features_stop(struct att_session *s);
void att_features_detach(struct att_session *s);
bool att_features_busy(const struct att_session *s, uint64_t rsp);
void att_features_unmap(struct att_session *s);
int att_features_plan_late(struct att_session *s, struct proc_map *maps, int nmaps);
void att_features_armed_late(struct att_session *s, int first);

/* session.c: threads that blocked SIGTRAP at attach block it again (detach) */
void att_reblock_sigtrap(struct att_session *s);
/* forks.c: ubt's own probes on vfork and posix_spawn (rt_on_vfork) */
int att_vfork_plan(struct att_session *s, struct proc_map *maps, int nmaps);

/* patch.c: stops every thread; a thread caught in the SIGTRAP of one of
 * our int3s goes back to the int3 without it (see settle_traps) */
int att_stop(struct att_session *s);
/* patch.c: fork children's probes on (at arm) or off (first at detach) */
void att_follow_forks(struct att_session *s, bool on);
/* session.c: PTRACE_SEIZE or a stop refused, naming another tracer if there is one */
void att_seize_error(struct att_session *s, int err);
/* patch.c: stops one thread only, for remote system calls (tracee_stop_one) */
int att_stop_one(struct att_session *s);

/* patch.c: detaches from the process in s->t, threads stopped (the traced
 * one or a fork child); t0 is when the stop began, for -v */
int att_detach_stopped(struct att_session *s, uint64_t t0);

/* forks.c: att_forks_begin() notes the time and pid before our memory goes
 * in, att_forks_armed() what a process forked from now on inherits (at
 * arm, and again after a late arm); att_forks_restore() restores every
 * process forked since (detach, watchdog) */
void att_forks_begin(struct att_session *s);
void att_forks_armed(struct att_session *s);
void att_forks_restore(struct att_session *s);

/* placement.c: remote mmap/munmap recorded in a struct att_region;
 * att_region_settle() decides a call in flight when ubt died (watchdog) */
int att_region_map(struct att_session *s, struct att_region *rg, uint64_t addr, uint64_t len,
		   int prot, int flags, int64_t fd, uint64_t off);
int att_region_unmap(struct att_session *s, struct att_region *rg);
void att_region_settle(struct att_session *s, struct att_region *rg);
void att_close_remote_fd(struct att_session *s);
/*
 * placement.c: the runtime's handler for a signal.  att_sig_install()
 * reads the application's action into *old, sets *installed, then puts
 * act in (with SA_ONSTACK added if onstack_as_app and the application's
 * action has it); att_sig_restore() puts *old back if ours (handler `ours`) is
 * still the action, and clears *installed.  att_sig_current() reads it.
 */
int att_sig_install(struct att_session *s, int sig, const struct rt_sigaction_k *act,
		    bool onstack_as_app, struct rt_sigaction_k *old, bool *installed);
void att_sig_restore(struct att_session *s, int sig, uint64_t ours,
		     const struct rt_sigaction_k *old, bool *installed);
int att_sig_current(struct att_session *s, int sig, struct rt_sigaction_k *cur);

/* dump.c: -d rsys, one remote system call (from att_rsys; s->rsys_out set):
 * err is tracee_syscall()'s, result the call's when err is 0 */
void att_dump_rsys(const struct att_session *s, long nr, const uint64_t args[6], int err,
		   int64_t result);

/* placement.c */
int att_rsys(struct att_session *s, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
	     uint64_t a5, uint64_t a6, int64_t *out);
void att_group_sites(struct att_session *s, int island, uint64_t *lo, uint64_t *hi,
		     uint64_t *ref);
int att_find_gap(struct proc_map *maps, int n, uint64_t lo, uint64_t hi, uint64_t ref,
		 uint64_t size, uint64_t *addr);
int att_map_remote(struct att_session *s, uint64_t lo, uint64_t hi, uint64_t ref);
int att_map_local_only(struct att_session *s);
int att_map_host_code(struct att_session *s, size_t size);
size_t att_tramp_max(const struct att_site *site);
size_t att_tramp_bytes(const struct att_session *s, int island);
int att_map_islands(struct att_session *s, struct proc_map **maps, int *nmaps);

#endif
