/*
 * verbs.c - the session runs the features' verbs (features/table.c).
 *
 * Pipeline position: called by session.c (att_install) and patch.c
 * (att_arm, att_arm_late, att_detach) at the points struct att_feature
 * names.  Each walker runs one verb of every feature that has it, in the
 * table's order; an int verb stops the walk at its first error, which the
 * feature has already reported, and the caller undoes the session as on
 * any other error (detach and the watchdog call every undoing verb).
 */
#include "attach/session.h"
#include "attach/inject/session_internal.h"

#define EACH_FEATURE(f) for (const struct att_feature *const *f = att_features; *f; f++)

int att_features_plan(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		      int nmaps)
{
	int ret = 0;
	EACH_FEATURE(f)
		if ((*f)->plan && (ret = (*f)->plan(s, obj, maps, nmaps)))
			break;
	return ret;
}

int att_features_check_return(struct att_session *s, const struct att_point *p, uint64_t addr)
{
	int ret = 0;
	EACH_FEATURE(f)
		if ((*f)->check_return && (ret = (*f)->check_return(s, p, addr)))
			break;
	return ret;
}

int att_features_map(struct att_session *s, const struct cg_object *obj)
{
	int ret = 0;
	EACH_FEATURE(f)
		if ((*f)->map && (ret = (*f)->map(s, obj, (struct rt_shm_header *)att_data(s))))
			break;
	return ret;
}

int att_features_start(struct att_session *s, const struct cg_object *obj)
{
	int ret = 0;
	EACH_FEATURE(f)
		if ((*f)->start && (ret = (*f)->start(s, obj, (struct rt_shm_header *)att_data(s))))
			break;
	return ret;
}

int att_features_arm(struct att_session *s)
{
	int ret = 0;
	EACH_FEATURE(f)
		if ((*f)->arm && (ret = (*f)->arm(s)))
			break;
	return ret;
}

void att_features_stop(struct att_session *s)
{
	EACH_FEATURE(f)
		if ((*f)->stop)
			(*f)->stop(s);
}

void att_features_detach(struct att_session *s)
{
	EACH_FEATURE(f)
		if ((*f)->detach)
			(*f)->detach(s);
}

bool att_features_busy(const struct att_session *s, uint64_t rsp)
{
	EACH_FEATURE(f)
		if ((*f)->busy && (*f)->busy(s, rsp))
			return true;
	return false;
}

void att_features_unmap(struct att_session *s)
{
	EACH_FEATURE(f)
		if ((*f)->unmap)
			(*f)->unmap(s);
}

int att_features_plan_late(struct att_session *s, struct proc_map *maps, int nmaps)
{
	int ret = 0;
	EACH_FEATURE(f)
		if ((*f)->plan_late && (ret = (*f)->plan_late(s, maps, nmaps)))
			break;
	return ret;
}

void att_features_armed_late(struct att_session *s, int first)
{
	EACH_FEATURE(f)
		if ((*f)->armed_late)
			(*f)->armed_late(s, first);
}
