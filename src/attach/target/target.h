/*
 * target.h - attach/target/: the live process, through ptrace and /proc.
 *
 * Room rule: target knows the process and nothing of probes: stopping and
 * reading it (tracee.h), facts probe code is compiled for (rseq, thread id
 * location), comm/uid/gid changes, its cgroup, the clock.  It includes only
 * the ELF layer, util and runtime/abi.h (and attach/session.h for the
 * session it reads), never resolve/, inject/ or features/.  Writing the target is
 * tracee_write.h's, open to inject/ and features/ only
 * (tests/layers/check.py).
 */
#ifndef UBT_ATTACH_TARGET_H
#define UBT_ATTACH_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct att_session;
struct cg_facts;
struct rt_shm_header;

/* Facts about the target (or about ubt itself when host is set). */
void att_facts(struct att_session *s, bool host, struct cg_facts *facts);
bool att_other_pidns(pid_t pid); /* facts.c: pid's pid namespace is not ubt's */
/* facts.c: UBT_HOST_TIDS asks for host tids in another pid namespace */
bool att_host_tids_wanted(void);

/* cgroup.c: the cgroup v2 id of process pid (the `cgroup` builtin), 0 if unknown */
uint64_t att_cgroup_id(pid_t pid);
/* cgroup.c: a target in another user namespace: its uid and gid maps into
 * the header, so uid and gid are the host's (nothing in ubt's namespace) */
struct rt_shm_header;
void att_user_idmaps(pid_t pid, struct rt_shm_header *h);

/*
 * comm/uid/gid freshness (ids.c): a poll of /proc/PID/task that raises the
 * header's ids_gen when a thread's name or ids changed.  att_ids_open()
 * takes the baseline (call it before arming); att_ids_poll() does nothing
 * until the next poll is due (every 64 ms or more), so the trace loop can
 * call it on every pass.  use: enum rt_ids_use.
 */
struct att_ids;
int att_ids_open(struct att_ids **ids, pid_t pid, uint32_t use);
int att_ids_poll(struct att_ids *ids, volatile uint64_t *gen);
void att_ids_close(struct att_ids *ids);

/*
 * proc.c: /proc/PID/status (tid 0) or /proc/PID/task/TID/status.  The
 * text after "KEY:" (blanks skipped, cut to size), or the number it holds
 * in base; 0 or -errno (-ENOENT: no such process or no such line).
 */
int proc_status_text(pid_t pid, pid_t tid, const char *key, char *val, size_t size);
int proc_status_u64(pid_t pid, pid_t tid, const char *key, int base, uint64_t *v);
/* The TracerPid of pid (or its thread tid), 0 if none or unknown. */
pid_t proc_tracer_pid(pid_t pid, pid_t tid);
/* Field number `field` of /proc/PID/stat as proc(5) counts them (3 and up), 0 if unknown. */
uint64_t proc_stat_u64(pid_t pid, int field);

/* clock.c: the TSC -> CLOCK_BOOTTIME scale for rt_nsecs() */
void att_clock_calibrate(struct rt_shm_header *h);

#endif
