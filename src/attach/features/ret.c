/*
 * ret.c - the attach side of return probes (session.c calls these).
 *
 * att_ret_plan() adds, when the script has return probes, ubt's own
 * entry probes on the unwinder: on libgcc's _Unwind_Find_FDE() (its
 * handler rt_ret_unwind_fde shows the unwinder a hijacked frame's real
 * return address) in every mapped file that has it, and on glibc's
 * _dl_find_object() (rt_ret_unwind, the fallback that hands hijacked
 * slots back while libgcc has no probe; see docs/ARCHITECTURE.md "Return
 * probes").  A libgcc_s that the program loads later (glibc loads it for
 * backtrace() and pthread_cancel) gets its probe through dlopen.c
 * (att_ret_plan_late).
 * att_ret_install() maps the private shadow stacks in the target.
 * att_ret_detach() puts the caller's return address back into every slot
 * that still holds a trampoline's stub, so after detach no return address
 * points into ubt's code.
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "elf/elfsym.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Return probes now, or pending until their library loads (dlopen.c): the
 * shadow stacks and the _dl_find_object probe are set up at attach either way. */
bool att_ret_wanted(const struct att_session *s)
{
	for (int i = 0; i < s->nsites; i++)
		if (s->sites[i].nrhandlers)
			return true;
	for (int i = 0; i < s->npoints; i++)
		if (s->points[i].pending && !strcmp(s->points[i].attach->attach.provider, "uretprobe"))
			return true;
	return false;
}

/* Mapping m is the first of a file that may hold libgcc's unwinder:
 * libgcc_s.so.1, or the program itself (static, or -static-libgcc). */
static bool unwinder_file(const struct att_session *s, const struct proc_map *m)
{
	char exe[64], path[4096];
	const char *b = strrchr(m->path, '/');
	if (m->offset || !b)
		return false;
	if (!strncmp(b + 1, "libgcc_s.so", 11))
		return true;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", s->t.pid);
	ssize_t n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = 0;
	return !strcmp(path, m->path);
}

/*
 * ubt's probe on _Unwind_Find_FDE in every mapped file that has one
 * (rt_ret_unwind_fde shows the unwinder the real return addresses).
 * Returns how many were added.
 */
static int plan_fde_hooks(struct att_session *s, struct proc_map *maps, int nmaps)
{
	int added = 0;
	for (int i = 0; i < nmaps; i++) {
		struct ef_file f;
		uint64_t bias;
		if (!unwinder_file(s, &maps[i]) || att_open_mapped(s, &maps[i], maps, nmaps, &f, &bias))
			continue;
		int ret = att_add_internal_func(s, &f, bias, "_Unwind_Find_FDE", "rt_ret_unwind_fde");
		ef_close(&f);
		if (!ret)
			added++;
		else if (ret != -ENOENT)
			fprintf(stderr, "WARNING: cannot probe _Unwind_Find_FDE in %s (%s): C++ "
					"exceptions through functions with return probes lose "
					"return probes of frames they pass\n",
				maps[i].path, strerror(-ret));
	}
	return added;
}

/*
 * Unwinders: the probe on _Unwind_Find_FDE where libgcc is loaded, and on
 * glibc's _dl_find_object (libc.so.6) as the fallback for a libgcc loaded
 * later (dlopen.c then adds the first: att_ret_plan_late).
 */
int att_ret_plan(struct att_session *s, struct proc_map *maps, int nmaps)
{
	if (!att_ret_wanted(s))
		return 0;
	s->ret_fde_hooked = plan_fde_hooks(s, maps, nmaps) > 0;
	const struct proc_map *libc = proc_find_libc(maps, nmaps);
	struct ef_file f;
	int ret = -ENOENT;
	uint64_t bias;
	if (libc && !(ret = att_open_mapped(s, libc, maps, nmaps, &f, &bias))) {
		ret = att_add_internal_func(s, &f, bias, "_dl_find_object", "rt_ret_unwind");
		ef_close(&f);
	}
	if (ret && ret != -EEXIST && !s->ret_fde_hooked)
		fprintf(stderr, "WARNING: cannot probe _dl_find_object in libc (%s): C++ exceptions, "
				"backtrace() and thread cancellation through functions with return "
				"probes will not work\n",
			strerror(-ret));
	return 0;
}

bool att_ret_wants_loader(const struct att_session *s)
{
	return att_ret_wanted(s) && !s->ret_fde_hooked;
}

int att_ret_plan_late(struct att_session *s, struct proc_map *maps, int nmaps)
{
	if (att_ret_wants_loader(s))
		plan_fde_hooks(s, maps, nmaps);
	return 0;
}

/* After att_arm_late patched sites[first..]: the unwinder probe is live. */
void att_ret_armed_late(struct att_session *s, int first)
{
	for (int i = first; i < s->nsites; i++)
		if (s->sites[i].internal && !strcmp(s->sites[i].internal, "rt_ret_unwind_fde"))
			s->ret_fde_hooked = true;
	if (s->ret_fde_hooked && s->local)
		((struct rt_shm_header *)att_data(s))->ret_precise = 1;
}

/*
 * A return probe on a function that keeps its own return address to
 * return through it again (arch_copies_return: setjmp, getcontext,
 * swapcontext, vfork) would send that second return into a stub whose
 * entry is gone: refused, with the reason.  The straight-line code is
 * followed through up to 4 direct jumps (setjmp -> __sigsetjmp).
 */
int att_ret_check(struct att_session *s, const struct att_point *p, uint64_t addr)
{
	uint8_t code[512];
	for (int hop = 0; hop < 4 && addr; hop++) {
		uint64_t next = 0;
		size_t len = sizeof(code);
		while (len >= 16 && tracee_read(&s->t, addr, code, len))
			len /= 2; /* near the end of a mapping */
		if (len < 16)
			return 0;
		if (arch_copies_return(code, len, addr, &next) > 0) {
			static const char why[] = "a return probe cannot follow this function: it "
						  "keeps its own return address to return through "
						  "it again later (as setjmp, getcontext, "
						  "swapcontext and vfork do)";
			if (!p->attach->attach.wildcard) {
				diag_sys(NULL, "%s:%s: %s", p->path, p->func, why);
				return -ENOTSUP;
			}
			fprintf(stderr, "WARNING: %s:%s: %s; skipped\n", p->path, p->func, why);
			return -ECANCELED;
		}
		addr = next;
	}
	return 0;
}

static size_t rets_size(const struct att_session *s)
{
	return ALIGN_UP((size_t)s->layout->nthreads * sizeof(struct rt_ret_stack), 4096);
}

int att_ret_install(struct att_session *s, struct rt_shm_header *h)
{
	if (!att_ret_wanted(s))
		return 0;
	int ret = att_region_map(s, &s->rg_rets, 0, rets_size(s), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret) {
		diag_sys(NULL, "pid %d: mapping shadow stacks: %s", s->t.pid, strerror(-ret));
		return ret;
	}
	s->remote_rets = s->rg_rets.addr;
	h->rets_addr = s->rg_rets.addr;
	h->ret_precise = s->ret_fde_hooked;
	return 0;
}


/*
 * Puts the caller's address back into every slot that holds an entry's
 * stub, for every entry of every thread's shadow stack and park (frames on
 * a suspended coroutine's stack included).  Chains resolve from the top:
 * the slot of a tail call first gets the stub below it, which the entry
 * below then matches; e[] is walked from the top and a chain is parked top
 * first, so one pass does it, and a few more (bounded: the shadow stacks
 * are the target's memory) catch any other order.  A slot in a
 * stopped thread's red zone (128 bytes below its rsp: a leaf's locals) is
 * never written.
 */
static bool red_zone(const struct att_session *s, uint64_t addr)
{
	for (int i = 0; i < s->t.nthreads; i++) {
		uint64_t sp = s->t.threads[i].regs.rsp;
		if (addr < sp && sp - addr <= 128)
			return true;
	}
	return false;
}

static int restore_pass(struct att_session *s, const struct rt_ret_stack *tab, uint32_t n)
{
	int wrote = 0;
	for (uint32_t t = 0; t < n; t++) {
		const struct rt_ret_stack *st = &tab[t];
		uint32_t top = st->top < RT_RET_DEPTH ? st->top : RT_RET_DEPTH;
		if (!st->tp)
			continue;
		for (uint32_t k = 0; k < RT_RET_DEPTH + RT_RET_PARK; k++) {
			if (k < RT_RET_DEPTH && k >= top)
				continue;
			const struct rt_ret_entry *e = k < RT_RET_DEPTH ? &st->e[top - 1 - k]
									 : &st->park[k - RT_RET_DEPTH];
			uint64_t slot;
			if (!e->sp || (e->sp & 1) || (e->sp & 7) || red_zone(s, e->sp))
				continue;
			if (!tracee_read(&s->t, e->sp, &slot, 8) && slot == e->stub &&
			    !tracee_write(&s->t, e->sp, &e->ret, 8))
				wrote++;
		}
	}
	return wrote;
}

void att_ret_detach(struct att_session *s)
{
	if (!s->remote_rets)
		return;
	uint32_t n = s->layout->nthreads;
	struct rt_ret_stack *tab = xcalloc(n, sizeof(*tab));
	if (!tracee_read(&s->t, s->remote_rets, tab, (size_t)n * sizeof(*tab)))
		for (int pass = 0; pass < 4; pass++) /* chains resolve in one pass, in the
						       * order they are pushed and parked */
			if (!restore_pass(s, tab, n))
				break;
	free(tab);
}

void att_ret_unmap(struct att_session *s)
{
	att_region_unmap(s, &s->rg_rets);
	if (s->rg_rets.state == ATT_RG_NONE)
		s->remote_rets = 0;
}

void att_ret_report(const struct att_session *s, bool verbose)
{
	if (!s->local || !att_ret_wanted(s))
		return;
	const struct rt_shm_header *h = (const struct rt_shm_header *)att_data(s);
	if (h->ret_skipped)
		fprintf(stderr,
			"WARNING: %llu calls ran without their return probe (nested deeper than %d "
			"probed calls, or inside a signal handler interrupting one)\n",
			(unsigned long long)h->ret_skipped, RT_RET_DEPTH);
	if (h->ret_evicted)
		fprintf(stderr,
			"WARNING: %llu calls returned without their return probe (more than %d "
			"probed calls suspended on other stacks by one thread)\n",
			(unsigned long long)h->ret_evicted, RT_RET_PARK);
	if (h->ret_lost)
		fprintf(stderr, "WARNING: %llu returns found no saved return address\n",
			(unsigned long long)h->ret_lost);
	if (verbose)
		fprintf(stderr,
			"ubt: return probes: %llu frames abandoned (longjmp, exceptions), %llu "
			"parked (other stacks), %llu frames shown to an unwinder, %llu return "
			"slots handed back to an unwinder\n",
			(unsigned long long)h->ret_dropped, (unsigned long long)h->ret_parked,
			(unsigned long long)h->ret_unwound, (unsigned long long)h->ret_restored);
}
