/*
 * dlopen.c - probes on libraries the target loads after ubt attached.
 *
 * Pipeline position: attach, during att_install() (att_dl_plan) and then
 * from the trace loop (att_dl_poll).  A uprobe on a library that is not
 * mapped at attach time (the program will dlopen it) stays pending
 * (resolve.c marks it).  If any is pending, ubt probes the dynamic
 * loader's `_dl_debug_state` with a runtime handler (runtime/thread/rt_dl.c) that
 * counts calls in the shared header: the loader calls it, through
 * r_debug.r_brk, before it maps or unmaps objects (r_state RT_ADD,
 * RT_DELETE) and after (RT_CONSISTENT).  The trace loop compares the count
 * with the last one it handled; when it moved, ubt stops the threads, and
 * if the loader is consistent (r_state read from `_r_debug`: no mapping
 * half done, so no MAP_FIXED can later cover a patched page) it arms every
 * pending point whose library is now mapped with the ordinary machinery
 * (patch.c att_arm_late: plan, islands, trampolines, patch), and says so
 * on stderr.  Entry, return and FUNC+OFFSET probes arm this way (return
 * probes: the shadow stacks were mapped at attach, ret.c); usdt probes in
 * such a library are not attached.  The target pays one atomic add per
 * loader event, and ubt no
 * system call while nothing is loaded.
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* struct r_debug (link.h): r_version, r_map, r_brk, r_state */
#define DL_R_STATE_OFF 24
#define DL_RT_CONSISTENT 0

static const struct proc_map *find_loader(const struct proc_map *maps, int n)
{
	for (int i = 0; i < n; i++) {
		const char *b = strrchr(maps[i].path, '/');
		if (b && !fnmatch("ld-linux*.so*", b + 1, 0))
			return &maps[i];
	}
	return NULL;
}

int att_dl_plan(struct att_session *s, struct proc_map *maps, int nmaps)
{
	/* libgcc_s for return probes (ret.c); system calls in any library */
	bool pending = att_ret_wants_loader(s) || s->nsys_attach;
	for (int i = 0; i < s->npoints; i++)
		pending |= s->points[i].pending;
	s->dl_state = 0;
	if (!pending)
		return 0;
	const struct proc_map *ld = find_loader(maps, nmaps);
	struct ef_file f;
	struct ef_symbol fn = {0}, rd = {0};
	uint64_t bias;
	int ret = -ENOENT;
	if (ld && !(ret = att_open_mapped(s, ld, maps, nmaps, &f, &bias))) {
		if (!(ret = ef_find_func(&f, "_dl_debug_state", &fn)))
			ret = ef_find_symbol(&f, "_r_debug", &rd);
		ef_close(&f);
	}
	/* one internal site; `ret` alone is shorter than a jump: then an
	 * int3, handled in the target (a few us per dlopen) */
	if (!ret && !(ret = att_add_internal_site(s, bias + fn.value, fn.size, "rt_dl_notify",
						  false)))
		s->dl_state = bias + rd.value + DL_R_STATE_OFF;
	free(fn.name);
	free(rd.name);
	if (ret)
		fprintf(stderr, "WARNING: pid %d: cannot watch the dynamic loader (%s): probes on "
				"libraries it loads later are not attached\n",
			s->t.pid, strerror(-ret));
	return 0;
}

/* With the threads stopped: is the loader between two changes? */
static bool loader_consistent(struct att_session *s)
{
	int32_t state = -1;
	return !tracee_read(&s->t, s->dl_state, &state, sizeof(state)) &&
	       state == DL_RT_CONSISTENT;
}

/* Lets a thread waiting in rt_dl_notify go on (a shared futex on the header). */
static void dl_ack(struct att_session *s, uint64_t now)
{
	struct rt_shm_header *h = (struct rt_shm_header *)att_data(s);
	__atomic_store_n(&h->dl_ack, (uint32_t)now, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->dl_ack, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

int att_dl_poll(struct att_session *s, void (*armed)(const struct att_session *s, int first))
{
	if (!s->dl_state || !s->has_target)
		return 0;
	const struct rt_shm_header *h = (const struct rt_shm_header *)att_data(s);
	uint64_t now = __atomic_load_n(&h->dl_events, __ATOMIC_ACQUIRE);
	if (now == s->dl_seen)
		return 0;
	int first = s->nsites, unserved = 0;
	/* the system-call sites of what was loaded: pending points too */
	if (s->nsys_attach)
		att_sys_late(s, s->t.pid, &unserved);
	bool *was = xcalloc(s->npoints + 1, sizeof(bool));
	for (int i = 0; i < s->npoints; i++)
		was[i] = s->points[i].pending;
	int n = att_arm_late(s, loader_consistent);
	if (n < 0) {
		fprintf(stderr, "WARNING: pid %d: attaching probes in a library it loaded: %s\n",
			s->t.pid, strerror(-n));
		s->dl_seen = now; /* do not retry for ever */
		dl_ack(s, now);
		free(was);
		return n;
	}
	/* before the ack: the loading thread waits for it, so the library is
	 * still mapped while the driver reads its symbols */
	if (n > 0 && armed)
		armed(s, first);
	if (loader_consistent(s)) { /* (threads run again: a hint, not a proof) */
		s->dl_seen = now;
		dl_ack(s, now);
	}
	bool pending = att_ret_wants_loader(s) || s->nsys_attach;
	for (int i = 0; i < s->npoints; i++)
		pending |= s->points[i].pending;
	if (!pending) { /* nothing left to wait for: loads no longer wait for ubt */
		((struct rt_shm_header *)att_data(s))->dl_rstate = 0;
		s->dl_state = 0;
	}
	/* n counts sites; the message counts probes (an entry and a return
	 * probe on one function share a site) */
	const char *lib = NULL;
	int armed_points = 0;
	for (int i = 0; i < s->npoints; i++)
		if (was[i] && !s->points[i].pending) {
			lib = lib ? lib : s->points[i].path;
			armed_points++;
		}
	free(was);
	if (n > 0 && armed_points)
		fprintf(stderr, "ubt: pid %d loaded %s: %d probe%s attached\n", s->t.pid,
			lib ? lib : "a probed library", armed_points,
			armed_points == 1 ? "" : "s");
	if (unserved)
		fprintf(
		    stderr,
		    "WARNING: pid %d: %d system-call site%s in a library it loaded make%s calls "
		    "no site made when ubt attached: not traced\n",
		    s->t.pid, unserved, unserved == 1 ? "" : "s", unserved == 1 ? "s" : "");
	return n;
}
