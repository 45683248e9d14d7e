/*
 * features.h - attach/features/: optional parts of a session, each with
 * its own verbs.
 *
 * Room rule: a feature is planned before the session places code (plan),
 * set up with the target's threads stopped once code is linked (install),
 * and undone by detach and by the watchdog (remove, detach, unmap): return
 * probes (ret.c), fault-tolerant reads (readsafe.c), probe stacks
 * (pstack.c), profile timers (profile.c), libraries loaded after attach
 * (dlopen.c), USDT semaphores (usdt_sema.c).  Each is a struct att_feature
 * of those verbs (inject/session_internal.h) in table.c, which the session
 * walks: inject/ never names a feature.  Like inject/, features may change
 * the target (tracee_write.h, att_rsys) and use the session's internals
 * (inject/session_internal.h); resolve/, target/, inject/ and the ELF
 * layer never include this room (tests/layers/check.py).  This header
 * declares each feature's own functions, for table.c, for each other and
 * for the driver (reports, profile planning, the late-library poll).
 */
#ifndef UBT_ATTACH_FEATURES_H
#define UBT_ATTACH_FEATURES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ast_node;
struct att_session;
struct cg_object;
struct proc_map;
struct rt_shm_header;

/* ret.c: return probes.  att_ret_check(): -ENOTSUP (said) if a return
 * probe cannot follow the function at addr, -ECANCELED (warned) when p is
 * one of a wildcard's matches, else 0 */
struct att_point;
int att_ret_check(struct att_session *s, const struct att_point *p, uint64_t addr);
bool att_ret_wanted(const struct att_session *s);
int att_ret_plan(struct att_session *s, struct proc_map *maps, int nmaps);
int att_ret_install(struct att_session *s, struct rt_shm_header *h);
/* dlopen.c: libgcc_s loaded after attach gets the unwinder probe too */
bool att_ret_wants_loader(const struct att_session *s);
int att_ret_plan_late(struct att_session *s, struct proc_map *maps, int nmaps);
void att_ret_armed_late(struct att_session *s, int first);
/* readsafe.c: the SIGSEGV/SIGBUS handler behind fault-tolerant reads */
int att_read_plan(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		  int nmaps);
int att_read_install(struct att_session *s, struct rt_shm_header *h);
void att_read_remove(struct att_session *s);
void att_ret_detach(struct att_session *s);
void att_ret_unmap(struct att_session *s);
/* pstack.c: probe stacks, where handlers that need more than a few words run */
int att_pstack_install(struct att_session *s, const struct cg_object *obj);
bool att_pstack_busy(const struct att_session *s, uint64_t rsp);
void att_pstack_unmap(struct att_session *s);
/* Says on stderr how many calls ran without their return probe. */
void att_ret_report(const struct att_session *s, bool verbose);

/* hostids.c: the host's tids for a target in another pid namespace */
int att_hostids_map(struct att_session *s, struct rt_shm_header *h);
void att_hostids_unmap(struct att_session *s);

/*
 * usdt_sema.c: semaphores (recorded by inject/plan_mid.c).  Take adds 1 to
 * each with every thread stopped, release subtracts it again from those
 * still held (both read-modify-write through /proc/PID/mem: never
 * overwrite a count other tracers share).
 */
int att_usdt_semas_take(struct att_session *s);
void att_usdt_semas_release(struct att_session *s);

/*
 * profile.c: profile:hz:N probes.  att_profile_plan() picks the signal
 * (after att_open, before att_install; an error if none is free);
 * att_profile_install() installs the handler and the timers (threads
 * stopped, code linked); att_profile_remove() deletes them (detach and
 * watchdog).
 */
bool att_profile_wanted(const struct ast_node *prog);
int att_profile_plan(struct att_session *s, const struct ast_node *prog);
int att_profile_install(struct att_session *s, struct rt_shm_header *h,
			const struct cg_object *obj);
void att_profile_remove(struct att_session *s);

/*
 * dlopen.c: libraries loaded after attach.  att_dl_plan() (during
 * att_install) puts ubt's own probe on the loader's _dl_debug_state when
 * some point's library is not loaded yet; att_dl_poll() (from the trace
 * loop, cheap) arms their probes once the loader reports a change, calls
 * armed(s, first new site) before letting the loading thread go on, and
 * returns the number of sites added, 0, or -errno.
 */
int att_dl_plan(struct att_session *s, struct proc_map *maps, int nmaps);
int att_dl_poll(struct att_session *s, void (*armed)(const struct att_session *s, int first));

#endif
