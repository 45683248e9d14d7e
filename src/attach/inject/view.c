/*
 * view.c - what the driver may read of the session: the accessors that
 * attach.h declares for an opaque struct att_session.
 *
 * Pipeline position: beside every verb of attach.h.  tools/ubt.c needs a
 * few facts between the stages (how many points att_resolve found for an
 * attach point, whether there is a target and its pid, the sites for
 * symbolizing trampolines and for -v, how long threads were stopped); it
 * reads them here instead of field by field, so that the session's layout
 * (attach/session.h) stays attach's to change.  Nothing here changes the
 * session or the target, except att_set_pid_hint(), which is an input of
 * att_resolve().
 */
#include "attach/resolve/resolve.h"
#include "attach/session.h"

uint8_t *att_data(const struct att_session *s)
{
	return s->local + s->code_size;
}

void att_set_pid_hint(struct att_session *s, pid_t pid)
{
	s->pid_hint = pid;
}

void att_set_quiet(struct att_session *s, bool quiet) { s->quiet = quiet; }

int att_point_count(const struct att_session *s)
{
	return s->npoints;
}

int att_points_of(const struct att_session *s, const struct ast_node *attach)
{
	/* bpftrace counts a tracepoint once, whatever ubt patches for it */
	int events = att_sys_event_count(attach);
	if (events)
		return events;
	int n = 0;
	for (int i = 0; i < s->npoints; i++)
		n += s->points[i].attach == attach;
	return n;
}

bool att_has_target(const struct att_session *s)
{
	return s->has_target;
}

bool att_target_held(const struct att_session *s)
{
	return s->has_target && s->t.stopped && !s->t.one;
}

pid_t att_target_pid(const struct att_session *s)
{
	return s->has_target ? s->t.pid : 0;
}

bool att_target_is_child(const struct att_session *s)
{
	return s->has_target && s->t.is_child;
}

int att_target_wait_exit(struct att_session *s, int timeout_ms, int *status)
{
	return tracee_wait_exit(&s->t, timeout_ms, status);
}

int att_site_count(const struct att_session *s)
{
	return s->nsites;
}

void att_site_get(const struct att_session *s, int i, struct att_site_info *info)
{
	const struct att_site *site = &s->sites[i];
	info->addr = site->plan.site;
	info->tramp = site->tramp;
	info->breakpoint = site->plan.kind == ARCH_PATCH_INT3;
	info->own = site->internal != NULL;
}

void att_stop_times(const struct att_session *s, struct att_stop_times *t)
{
	t->attach_ns = s->attach_stop_ns;
	t->install_ns = s->install_stop_ns;
	t->detach_ns = s->detach_stop_ns;
	t->attach_nthreads = s->attach_nthreads;
}
