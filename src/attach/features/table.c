/*
 * table.c - the features, in the order the session runs their verbs.
 *
 * Pipeline position: inject/ walks att_features[] (inject/verbs.c) at
 * fixed points of att_install(), att_arm(), att_arm_late() and
 * att_detach(); it names no feature.  Each entry adapts a feature's own
 * functions to the verbs' one signature per point; a NULL verb is a point
 * the feature has nothing to do at.  The order is the order the calls had
 * when the session named each feature: return probes first (their plan
 * adds ubt's own sites that safe reads then see), then safe reads, late
 * libraries, probe stacks, profile timers, USDT semaphores and host thread ids.
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "attach/inject/session_internal.h"
#include "runtime/abi.h"

#include <stddef.h>

static int ret_plan(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		    int nmaps)
{
	return att_ret_plan(s, maps, nmaps);
}

static int ret_map(struct att_session *s, const struct cg_object *obj, struct rt_shm_header *h)
{
	return att_ret_install(s, h);
}

static const struct att_feature ret = {
	.name = "return probes",
	.plan = ret_plan,
	.check_return = att_ret_check,
	.map = ret_map,
	.detach = att_ret_detach,
	.unmap = att_ret_unmap,
	.plan_late = att_ret_plan_late,
	.armed_late = att_ret_armed_late,
};

static int read_start(struct att_session *s, const struct cg_object *obj,
		      struct rt_shm_header *h)
{
	return att_read_install(s, h);
}

static const struct att_feature readsafe = {
	.name = "safe reads",
	.plan = att_read_plan,
	.start = read_start,
	.unmap = att_read_remove,
};

static int dl_plan(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		   int nmaps)
{
	return att_dl_plan(s, maps, nmaps);
}

/* the runtime waits for ubt after the loader mapped a library */
static int dl_start(struct att_session *s, const struct cg_object *obj, struct rt_shm_header *h)
{
	h->dl_rstate = s->dl_state;
	return 0;
}

static const struct att_feature dlopen = {
	.name = "libraries loaded later",
	.plan = dl_plan,
	.start = dl_start,
};

static int pstack_map(struct att_session *s, const struct cg_object *obj,
		      struct rt_shm_header *h)
{
	return att_pstack_install(s, obj);
}

static const struct att_feature pstack = {
	.name = "probe stacks",
	.map = pstack_map,
	.busy = att_pstack_busy,
	.unmap = att_pstack_unmap,
};

/* the timers start now; probes run once enabled */
static int profile_start(struct att_session *s, const struct cg_object *obj,
			 struct rt_shm_header *h)
{
	return att_profile_install(s, h, obj);
}

static const struct att_feature profile = {
	.name = "profile timers",
	.start = profile_start,
	.stop = att_profile_remove,
};

static const struct att_feature usdt_sema = {
	.name = "usdt semaphores",
	.arm = att_usdt_semas_take,
	.detach = att_usdt_semas_release,
};

static int hostids_map(struct att_session *s, const struct cg_object *obj,
		       struct rt_shm_header *h)
{
	return att_hostids_map(s, h);
}

static const struct att_feature hostids = {
	.name = "host thread ids",
	.map = hostids_map,
	.unmap = att_hostids_unmap,
};

const struct att_feature *const att_features[] = {
	&ret, &readsafe, &dlopen, &pstack, &profile, &usdt_sema, &hostids, NULL,
};
