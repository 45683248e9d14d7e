/*
 * pstack.c - the probe stacks in the target (runtime/thread/rt_pstack.c; layout
 * in runtime/abi.h, "Probe stacks"), on the same life cycle as the shadow
 * stacks of return probes (ret.c):
 *
 *   att_pstack_install()  when some code runs on a probe stack
 *                         (cg_object.pstack), one private anonymous
 *                         mapping of nthreads stacks, its place and sizes
 *                         written into the target's private page
 *   att_pstack_busy()     a thread's stack pointer is in it: a handler,
 *                         or a signal handler of the program's that
 *                         interrupted one, is running there (the busy
 *                         verb, asked by inject/patch.c before unmapping)
 *   att_pstack_unmap()    with the rest of ubt's memory, once no thread's
 *                         stack pointer is in it
 *
 * The mapping is a struct att_region (s->rg_pstack), so the watchdog and
 * the restore of fork children (forks.c) unmap it too.
 *
 * Each stack holds RT_PSTACK_DEPTH segments, one per probe nested in
 * another (a signal handler's), of the largest handler frame LLVM reported
 * plus room for what handlers call in the runtime (rt_stack_id's frames and
 * the like, 2.4 KiB at most by gcc's -fstack-usage) and for a signal frame
 * and a small signal handler of the program's (with AVX-512 state a
 * signal frame is ~3.5 KiB).  Mapped MAP_NORESERVE: a stack costs only the
 * pages its thread touches (a printf handler: one page).
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define PSTACK_CALLEES 4096 /* the runtime functions a handler calls */
#define PSTACK_SIGNAL 12288 /* a signal frame and a small handler of the program's */

static size_t seg_size(const struct cg_object *obj)
{
	return ALIGN_UP((size_t)obj->pstack_frame + 64 + PSTACK_CALLEES + PSTACK_SIGNAL, PAGE);
}

int att_pstack_install(struct att_session *s, const struct cg_object *obj)
{
	if (!obj || !obj->pstack || !s->has_target)
		return 0;
	size_t seg = seg_size(obj), size = RT_PSTACK_GUARD + RT_PSTACK_DEPTH * seg;
	size_t total = size * s->layout->nthreads;
	int ret = att_region_map(s, &s->rg_pstack, 0, total, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ret) {
		diag_sys(NULL, "pid %d: mapping probe stacks (%zu KiB for each of %u threads): %s",
			 s->t.pid, size >> 10, s->layout->nthreads, strerror(-ret));
		return ret;
	}
	uint64_t f[3] = {s->rg_pstack.addr, size, seg}; /* pstack_base, _size, _seg */
	ret = tracee_write(&s->t, s->remote_priv + offsetof(struct rt_priv, pstack_base), f,
			   sizeof(f));
	if (ret)
		att_sys_error(s, ret, "writing the probe stacks' place");
	return ret;
}

bool att_pstack_busy(const struct att_session *s, uint64_t rsp)
{
	const struct att_region *rg = &s->rg_pstack;
	return rg->state != ATT_RG_NONE && rsp >= rg->addr && rsp < rg->addr + rg->len;
}

void att_pstack_unmap(struct att_session *s)
{
	att_region_unmap(s, &s->rg_pstack);
}
