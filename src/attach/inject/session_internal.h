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

#include "attach/attach.h"
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
int att_place_sites(struct att_session *s, int first);
struct elf_file;
int att_open_mapped(const struct att_session *s, const struct proc_map *m,
		    const struct proc_map *maps, int nmaps, struct elf_file *f, uint64_t *bias);
int att_add_internal_site(struct att_session *s, uint64_t addr, uint64_t size,
			  const char *handler, bool jmp_only);
int att_add_internal_func(struct att_session *s, struct elf_file *f, uint64_t bias,
			  const char *sym, const char *handler);

/* ret.c: -ENOTSUP (said) if a return probe cannot follow the function at
 * addr, -ECANCELED (warned) when p is one of a wildcard's matches, else 0 */
int att_ret_check(struct att_session *s, const struct att_point *p, uint64_t addr);

/* plan_mid.c: says that p's library is not loaded in the target (its
 * probe is skipped, or armed when it loads); plans the site of a
 * mid-function uprobe (p->mid) at load bias `bias`; plans a mid-function
 * site for every usdt location */
void att_point_not_loaded(struct att_session *s, struct att_point *p);
int att_plan_mid(struct att_session *s, const struct att_point *p, uint64_t bias);
int att_usdt_plan(struct att_session *s, const struct proc_map *maps, int nmaps);

/*
 * features/usdt_sema.c: semaphores (recorded by att_usdt_plan through
 * att_usdt_sema_add).  Take adds 1 to each with every thread stopped,
 * release subtracts it again from those still held (both read-modify-write
 * through /proc/PID/mem: never overwrite a count other tracers share).
 */
int att_usdt_sema_add(struct att_session *s, uint64_t addr);
int att_usdt_semas_take(struct att_session *s);
void att_usdt_semas_release(struct att_session *s);

/* placement.c */
int att_rsys(struct att_session *s, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
	     uint64_t a5, uint64_t a6, int64_t *out);
void att_group_sites(struct att_session *s, int island, uint64_t *lo, uint64_t *hi,
		     uint64_t *ref);
int att_find_gap(struct proc_map *maps, int n, uint64_t lo, uint64_t hi, uint64_t ref,
		 uint64_t size, uint64_t *addr);
int att_map_remote(struct att_session *s, uint64_t at);
int att_map_local_only(struct att_session *s);
int att_map_host_code(struct att_session *s, size_t size);
size_t att_tramp_max(const struct att_site *site);
size_t att_tramp_bytes(const struct att_session *s, int island);
int att_map_islands(struct att_session *s, struct proc_map **maps, int *nmaps);

#endif
