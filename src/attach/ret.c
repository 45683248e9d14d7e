/*
 * ret.c - the attach side of return probes (session.c calls these).
 *
 * att_ret_plan() adds, when the script has return probes, ubt's own
 * entry probe on glibc's _dl_find_object() (the unwinder's per-frame
 * lookup; its handler rt_ret_unwind gives hijacked return slots back to
 * the unwinder, see docs/ARCHITECTURE.md "Return probes").
 * att_ret_install() maps the private shadow stacks in the target.
 * att_ret_detach() puts the caller's return address back into every slot
 * that still holds a trampoline's stub, so after detach no return address
 * points into ubt's code.
 */
#include "attach.h"
#include "attach/elfsym.h"
#include "attach/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

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

/* glibc exports _dl_find_object from libc.so.6 (a jump into ld.so): proc_find_libc() */
int att_ret_plan(struct att_session *s, struct proc_map *maps, int nmaps)
{
	if (!att_ret_wanted(s))
		return 0;
	const struct proc_map *libc = proc_find_libc(maps, nmaps);
	struct elf_file f;
	struct elf_symbol sym = {0};
	uint64_t bias;
	int ret = -ENOENT;
	if (libc && !(ret = att_open_mapped(s, libc, maps, nmaps, &f, &bias))) {
		ret = elf_find_func(&f, "_dl_find_object", &sym);
		elf_file_close(&f);
	}
	free(sym.name);
	if (ret) {
		fprintf(stderr, "WARNING: the target's libc has no _dl_find_object: C++ exceptions, "
				"backtrace() and thread cancellation through functions with return "
				"probes will not work\n");
		return 0;
	}
	if (s->nsites == ATT_MAX_SITES)
		return 0;
	ret = att_add_internal_site(s, bias + sym.value, sym.size, "rt_ret_unwind", true);
	if (ret)
		fprintf(stderr, "WARNING: cannot probe _dl_find_object in libc (%s): C++ exceptions "
				"through functions with return probes will not work\n",
			strerror(-ret));
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
	return 0;
}

static uint32_t hash_tp(uint64_t tp, uint32_t mask)
{
	return (uint32_t)((tp * RT_TP_HASH_MUL) >> RT_TP_HASH_SHIFT) & mask;
}

/* Restores the hijacked return slots of one stopped thread. */
static void restore_thread(struct att_session *s, const struct tracee_thread *th)
{
	uint32_t mask = s->layout->nthreads - 1, i = hash_tp(th->regs.fs_base, mask);
	for (uint32_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t at = s->remote_rets + (uint64_t)i * sizeof(struct rt_ret_stack);
		struct rt_ret_stack st;
		if (tracee_read(&s->t, at, &st, offsetof(struct rt_ret_stack, e)))
			return;
		if (st.tp == 0)
			return;
		if (st.tp != th->regs.fs_base)
			continue;
		uint32_t top = st.top < RT_RET_DEPTH ? st.top : RT_RET_DEPTH;
		if (top && tracee_read(&s->t, at + offsetof(struct rt_ret_stack, e), st.e,
				       top * sizeof(st.e[0])))
			return;
		for (uint32_t k = 0; k < top; k++) {
			const struct rt_ret_entry *e = &st.e[k];
			uint64_t slot;
			if ((e->sp & 1) || e->sp < th->regs.rsp)
				continue;
			if (!tracee_read(&s->t, e->sp, &slot, 8) && slot == e->stub)
				tracee_write(&s->t, e->sp, &e->ret, 8);
		}
		return;
	}
}

void att_ret_detach(struct att_session *s)
{
	if (!s->remote_rets)
		return;
	for (int i = 0; i < s->t.nthreads; i++)
		restore_thread(s, &s->t.threads[i]);
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
	if (h->ret_lost)
		fprintf(stderr, "WARNING: %llu returns found no saved return address\n",
			(unsigned long long)h->ret_lost);
	if (verbose)
		fprintf(stderr,
			"ubt: return probes: %llu frames abandoned (longjmp, exceptions), %llu "
			"return slots handed back to an unwinder\n",
			(unsigned long long)h->ret_dropped, (unsigned long long)h->ret_restored);
}
