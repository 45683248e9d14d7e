/*
 * readsafe.c - the attach side of fault-tolerant reads (runtime/mem/rt_read.c);
 * session.c calls these when the probe code reads target memory.
 *
 * att_read_plan() adds, when the probe code reads target memory or the
 * script has return probes (whose shadow stacks check return slots on
 * stacks that may have been freed, runtime/thread/rt_ret.c), ubt's own entry
 * probes on libc's __libc_sigaction
 * (which sigaction, signal and bsd_signal all end in), sigprocmask and
 * pthread_sigmask: their handlers raise ubt_priv.rd_gen so that every
 * thread checks again, before its next direct read, that the runtime's
 * SIGSEGV/SIGBUS handler is still installed and the signals unblocked.
 * att_read_install() installs rt_sigsegv for SIGSEGV and SIGBUS with a
 * remote rt_sigaction, keeping the application's actions for chaining, and
 * turns direct reads on.  att_read_remove() puts the application's actions
 * back (if ours are still there) once no thread can be inside our code.
 *
 * Without those probes (a libc without the symbols, a function that cannot
 * take a jump) direct reads stay off and every read takes the
 * process_vm_readv path: slower, never unsafe.
 *
 * The same probes keep SIGTRAP for ubt while int3 sites exist, whether or
 * not the script reads memory (runtime/thread/rt_trap.c): the application's own
 * SIGTRAP action is kept for chaining instead of installed, and SIGTRAP
 * is left out of a mask that would block it.
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "attach/inject/session_internal.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static const struct {
	const char *sym, *handler;
} watched[] = {
	{"__libc_sigaction", "rt_on_sigaction"},
	{"sigprocmask", "rt_on_sigmask"},
	{"pthread_sigmask", "rt_on_sigmask"},
};

int att_read_plan(struct att_session *s, const struct cg_object *obj, struct proc_map *maps,
		  int nmaps)
{
	/* return probes read return slots on stacks that may be gone (rt_ret.c) */
	bool reads = att_ret_wanted(s) || (obj && obj->reads_target), traps = false;
	s->read_watched = s->sig_watched = false;
	for (int i = 0; i < s->nsites && !traps; i++)
		traps = s->sites[i].plan.kind == ARCH_PATCH_INT3;
	if (!reads && !traps)
		return 0;
	const struct proc_map *libc = proc_find_libc(maps, nmaps);
	struct ef_file f;
	uint64_t bias;
	int ret = -ENOENT, added = 0;
	if (libc && !(ret = att_open_mapped(s, libc, maps, nmaps, &f, &bias))) {
		for (size_t i = 0; !ret && i < ARRAY_SIZE(watched); i++) {
			int r = att_add_internal_func(s, &f, bias, watched[i].sym, watched[i].handler);
			if (!r)
				added++;
			else if (r != -EEXIST)
				ret = r;
		}
		ef_close(&f);
	}
	if (ret) {
		/* take back what was added: reads then always use the system call */
		s->nsites -= added;
		if (reads)
			fprintf(stderr, "WARNING: cannot watch the target's signal actions (%s): "
					"reads of its memory use process_vm_readv (about 1 us each)\n",
				strerror(-ret));
		if (traps)
			fprintf(stderr, "WARNING: cannot watch the target's signal actions (%s): a "
					"thread that blocks SIGTRAP, or a SIGTRAP handler of the "
					"program's, meets a probe's breakpoint unprepared\n",
				strerror(-ret));
		return 0;
	}
	s->read_watched = reads;
	s->sig_watched = true;
	return 0;
}

/*
 * Installs rt_sigsegv for sig; *old receives the application's action.
 * SA_ONSTACK only if the application's action had it (a handler for its
 * own stack overflows needs the sigaltstack): a read that faults in a
 * probe running on its probe stack inside a signal handler that runs on
 * the sigaltstack would otherwise be delivered at the sigaltstack's top,
 * over that handler's frames (the kernel knows the sigaltstack is in use
 * only by the stack pointer; runtime/thread/rt_pstack.c).  Every signal is
 * blocked while it runs: a signal handler of the application's that ran
 * inside it could run a probe whose read faults while SIGSEGV is blocked,
 * which the kernel answers by killing the process (rt_pass_on gives an
 * application handler the mask the kernel would have).
 */
static int install_one(struct att_session *s, int sig, struct rt_sigaction_k *old,
		       bool *installed)
{
	struct rt_sigaction_k act = {
		.handler = s->rt_sigsegv,
		.flags = SA_SIGINFO | SA_RESTART | 0x04000000 /* SA_RESTORER */,
		.restorer = link_lookup(&s->image, "rt_sigreturn"),
		.mask = ~0ull,
	};
	return att_sig_install(s, sig, &act, true, old, installed);
}

static uint64_t mmap_min_addr(void)
{
	FILE *f = fopen("/proc/sys/vm/mmap_min_addr", "r");
	unsigned long long v = 0;
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int att_read_install(struct att_session *s, struct rt_shm_header *h)
{
	h->rd_min_addr = mmap_min_addr();
	if (!s->read_watched)
		return 0;
	s->rt_sigsegv = link_lookup(&s->image, "rt_sigsegv");
	int ret = install_one(s, SIGSEGV, &s->old_segv, &s->segv_installed);
	h->old_segv = s->old_segv;
	if (!ret) {
		ret = install_one(s, SIGBUS, &s->old_bus, &s->bus_installed);
		h->old_bus = s->old_bus;
	}
	if (!ret) {
		uint32_t gen = 1;
		ret = tracee_write(&s->t, s->remote_priv + offsetof(struct rt_priv, rd_gen), &gen,
				   sizeof(gen));
	}
	if (ret) {
		diag_sys(NULL, "pid %d: rt_sigaction(SIGSEGV/SIGBUS) in the target: %s", s->t.pid,
			 strerror(-ret));
		att_read_remove(s);
	}
	return ret;
}

void att_read_remove(struct att_session *s)
{
	att_sig_restore(s, SIGSEGV, s->rt_sigsegv, &s->old_segv, &s->segv_installed);
	att_sig_restore(s, SIGBUS, s->rt_sigsegv, &s->old_bus, &s->bus_installed);
}
