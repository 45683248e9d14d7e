/*
 * usdt_sema.c - USDT semaphores: the counters a program tests before
 * computing a probe's arguments, raised while ubt's probes are armed.
 *
 * Pipeline position: inject/plan_mid.c records each location's semaphore
 * in the session while planning; the session takes them once the probes
 * are live (the arm verb, table.c) and releases them at detach.  The counts are shared
 * with every other tracer (the kernel's ref_ctr_offset adjusts the same
 * 2-byte counter), so they are only ever incremented and decremented.
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <string.h>

/*
 * The semaphores live in the session's shared memory, so the watchdog
 * (watchdog.c) sees `held` and gives back what ubt took if ubt dies;
 * `held` is set right after each write: dying in between leaks one count
 * (the program computes probe arguments for nothing) rather than taking
 * away another tracer's.
 *
 * Every thread is stopped (att_arm, att_detach), so this read-modify-write
 * through /proc/PID/mem is atomic with respect to the target; another
 * tracer's kernel uprobe (ref_ctr_offset) adjusts the same counter the
 * same way, by adding and subtracting, so counts from both add up.
 */
static int sema_adjust(struct att_session *s, uint64_t addr, int delta)
{
	uint16_t v;
	int ret = tracee_read(&s->t, addr, &v, sizeof(v));
	if (ret)
		return ret;
	if (delta < 0 && v == 0)
		return -ERANGE; /* someone reset it: never wrap to 65535 */
	v = (uint16_t)(v + delta);
	return tracee_write(&s->t, addr, &v, sizeof(v));
}

int att_usdt_semas_take(struct att_session *s)
{
	for (int i = 0; i < s->nsemas; i++) {
		int ret = sema_adjust(s, s->semas[i].addr, +1);
		if (ret) {
			diag_sys(NULL, "pid %d: usdt semaphore at 0x%llx: %s", s->t.pid,
				 (unsigned long long)s->semas[i].addr, strerror(-ret));
			att_usdt_semas_release(s);
			return ret;
		}
		s->semas[i].held = true;
	}
	return 0;
}

void att_usdt_semas_release(struct att_session *s)
{
	for (int i = 0; i < s->nsemas; i++) {
		if (!s->semas[i].held)
			continue;
		/* cleared first: if ubt dies here, the watchdog leaves one count
		 * too many rather than taking one that another tracer holds */
		s->semas[i].held = false;
		__sync_synchronize();
		sema_adjust(s, s->semas[i].addr, -1);
	}
}
