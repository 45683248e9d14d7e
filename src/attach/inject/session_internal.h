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

/* plan_mid.c: says that p's library is not loaded in the target (its
 * probe is skipped, or armed when it loads); plans the site of a
 * mid-function uprobe (p->mid) at load bias `bias`; plans a mid-function
 * site for every usdt location */
void att_point_not_loaded(struct att_session *s, struct att_point *p);
int att_plan_mid(struct att_session *s, const struct att_point *p, uint64_t bias);
int att_usdt_plan(struct att_session *s, const struct proc_map *maps, int nmaps);

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
