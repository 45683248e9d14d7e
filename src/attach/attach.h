/*
 * attach.h - putting compiled probes into a process and taking them out.
 *
 * Pipeline position: after codegen.  The driver (tools/ubt.c) calls, in
 * order:
 *
 *   att_resolve()       attach points -> functions in ELF files (before
 *                       touching any process: bad input fails here)
 *   att_open()          -p PID: find the process; -c CMD: start it, stopped
 *                       at its entry point.  No target: shared memory only.
 *   att_facts()         what probe code needs to know about the target
 *                       (rseq, thread id location), for cg_compile()
 *   att_install()       stop all threads, map shared memory and code near
 *                       the probed code, link it (threads stay stopped)
 *   att_run_host()      run BEGIN/END code inside ubt on the same memory
 *   att_arm()           patch every site, let the threads go
 *   att_detach()        stop all threads, restore every patched byte, unmap
 *                       what no thread can still be using, let them go
 *
 * Every user-facing error is printed here, in bpftrace's format, and the
 * function returns -errno.
 *
 * Rooms (each folder's header opens with its rule; tests/layers/check.py
 * checks them): resolve/ (files only) and target/ (ptrace and /proc,
 * nothing of probes) below inject/ (the only code that changes the target;
 * owns the session) and features/ (optional parts with the same verbs);
 * arch/ (the machine) and src/elf (ELF files, /proc/PID/maps) below all of
 * them.  This header holds the verbs the driver calls and the accessors
 * of the session, which is opaque here (its fields are attach/session.h's,
 * included only under src/attach/); it includes resolve.h and target.h
 * (features.h is the driver's to include: inject/ runs features only
 * through their table).
 */
#ifndef UBT_ATTACH_H
#define UBT_ATTACH_H

#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include "attach/resolve/resolve.h"
#include "attach/target/target.h"

struct ast_node;
struct cg_layout;
struct cg_object;
struct rt_regs;

/*
 * The session: opaque outside src/attach (its fields are in
 * attach/session.h, attach's own); the driver reads what it needs through
 * the accessors below.
 */
struct att_session;

/*
 * A new, empty session, in memory shared with the watchdog process that
 * restores the target if ubt dies (see watchdog.c).  NULL if out of memory.
 * att_close() frees it.
 */
struct att_session *att_session_new(void);

/* pid > 0: attach to it; argv != NULL: start it; neither: no target. */
int att_open(struct att_session *s, pid_t pid, char *const *argv);

/*
 * Maps shared memory (in the target if there is one), writes the header
 * and map headers from the layout, links and places probe code and
 * trampolines.  target_obj may have no probes; host_obj holds BEGIN/END
 * (linked in ubt).  The target stays stopped until att_arm().
 */
int att_install(struct att_session *s, const struct cg_layout *layout,
		const struct cg_object *target_obj, const struct cg_object *host_obj);

/* Patches every site and lets the target run. */
int att_arm(struct att_session *s);

/*
 * Starts the process that restores the target if ubt dies (watchdog.c);
 * att_install() calls it before touching the target.  att_watchdog_stop()
 * ends it after a normal detach.
 */
int att_watchdog_start(struct att_session *s);
void att_watchdog_stop(struct att_session *s);

/* Runs the BEGIN (or END) probes of host_obj in ubt. */
void att_run_host(struct att_session *s, const struct cg_object *host_obj, const char *provider);
/* The host function of host_obj's probe i (BEGIN, END, interval), or NULL;
 * call it with a zeroed struct rt_regs. */
typedef void (*att_host_fn)(struct rt_regs *regs);
att_host_fn att_host_probe(struct att_session *s, const struct cg_object *host_obj, int i);

/* patch.c: plans, places and patches sites of pending points now loaded */
int att_arm_late(struct att_session *s, bool (*ready)(struct att_session *s));

/*
 * dump.c, the dumps of the attach stage (-d STAGE, --dump STAGE).
 * att_dump_sites(): every site from sites[first] on as planned and placed
 * (after att_install, or once a library loaded later is armed: first is
 * then its first site); name(addr) gives "symbol+offset (file)",
 * malloc'ed, or NULL.  att_dump_link(): the sections, externs and symbols
 * of the linked code (after att_install).  att_trace_rsys(): from now on
 * each remote system call in the target is printed on out with its result
 * (NULL: none); set it before att_open.
 */
void att_dump_sites(const struct att_session *s, int first, FILE *out,
		    char *(*name)(uint64_t addr));
void att_dump_link(const struct att_session *s, FILE *out);
void att_trace_rsys(struct att_session *s, FILE *out);

/* ---- accessors (inject/view.c): what the driver reads of the session ---- */

/* The data part (struct rt_shm_header first) as ubt sees it, after att_install. */
uint8_t *att_data(const struct att_session *s);

/* -p PID, for resolving library names: set before att_resolve(). */
void att_set_pid_hint(struct att_session *s, pid_t pid);
/* --no-warnings: resolve warns about nothing (inlined copies a probe misses). */
void att_set_quiet(struct att_session *s, bool quiet);

/* Resolved uprobe/usdt points (after att_resolve): all of them, or those of one attach point. */
int att_point_count(const struct att_session *s);
int att_points_of(const struct att_session *s, const struct ast_node *attach);

/*
 * The target, after att_open(): whether there is one (-p or -c), its pid
 * (0 without one), whether ubt started it (-c).  att_target_wait_exit()
 * is tracee_wait_exit() on it: 1 when it ended (*status its wait status,
 * or -1 if unknown), 0 if it still runs after timeout_ms (-1: wait), or
 * -errno.
 */
bool att_has_target(const struct att_session *s);
pid_t att_target_pid(const struct att_session *s);
/* The target's threads stand stopped until att_arm lets them go (a -c command). */
bool att_target_held(const struct att_session *s);
bool att_target_is_child(const struct att_session *s);
int att_target_wait_exit(struct att_session *s, int timeout_ms, int *status);

/* One patched site as the driver sees it (after att_install). */
struct att_site_info {
	uint64_t addr;   /* the patched instruction */
	uint64_t tramp;  /* its trampoline in the target, 0 if not placed */
	bool breakpoint; /* an int3, not a jmp */
	bool own;        /* one of ubt's own probes (signal actions, the loader, ...) */
};
int att_site_count(const struct att_session *s);
void att_site_get(const struct att_session *s, int i, struct att_site_info *info);

/* How long the target's threads were stopped, for -v (0 when not measured). */
struct att_stop_times {
	uint64_t attach_ns, detach_ns;
	uint64_t install_ns; /* one thread only, before: ubt's memory mapped and filled */
	int attach_nthreads;
};
void att_stop_times(const struct att_session *s, struct att_stop_times *t);

enum att_target_state {
	ATT_ALIVE,
	ATT_EXITED,
	ATT_EXECED, /* it called exec(): our code and patches are gone with the old image */
};

/* Cheap check, for the trace loop. */
int att_check_target(struct att_session *s);

/* Restores the target; safe to call when it already exited. */
int att_detach(struct att_session *s);
void att_close(struct att_session *s);

#endif
