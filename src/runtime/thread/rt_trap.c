/*
 * rt_trap.c - the int3 fallback's SIGTRAP handler, running in the target.
 *
 * ubt installs rt_sigtrap with a remote rt_sigaction() only when some site
 * could not take a jmp (see abi.h).  The handler looks the trapping
 * address up in the header's table and resumes the thread at that site's
 * trampoline, exactly as the jmp would have: same registers, same stack.
 * A trap that is not ours (a debugger-less int3 in the program, raise())
 * goes to the action the application had, or, for the default action,
 * restores it and raises the signal again so the program ends as it would
 * have without ubt.
 */
#include "../rt.h"

#define RT_SIGTRAP 5
#define RT_SA_SIGINFO 4
#define RT_UC_RIP 168 /* offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]) */

/* sigreturn trampoline for SA_RESTORER, as libc provides its own */
__asm__(".text\n"
	".globl rt_sigreturn\n"
	".hidden rt_sigreturn\n"
	".type rt_sigreturn,@function\n"
	"rt_sigreturn:\n"
	"\tmov $15, %eax\n"
	"\tsyscall\n"
	"\thlt\n"
	".size rt_sigreturn, .-rt_sigreturn\n");

void rt_sigtrap(int sig, void *info, void *ucv) RT_API;

void rt_sigtrap(int sig, void *info, void *ucv)
{
	struct rt_shm_header *h = rt_hdr();
	uint64_t *rip = (uint64_t *)((char *)ucv + RT_UC_RIP);
	/* pass 1: the int3 just executed; pass 2: ubt put the thread back on
	 * the int3 (attach/tracee.c back_to_trap) and its SIGTRAP came after all */
	for (int pass = 0; pass < 2; pass++) {
		uint64_t at = *rip - 1 + pass;
		for (uint32_t i = 0; i < h->ntraps && i < RT_TRAP_MAX; i++) {
			if (h->traps[i].site == at) {
				__atomic_fetch_add(&h->trap_hits, 1, __ATOMIC_RELAXED);
				*rip = h->traps[i].tramp;
				return;
			}
		}
	}
	const struct rt_sigaction_k *old = &h->old_trap;
	if (old->handler > 1) {
		if (old->flags & RT_SA_SIGINFO)
			((void (*)(int, void *, void *))old->handler)(sig, info, ucv);
		else
			((void (*)(int))old->handler)(sig);
		return;
	}
	/* default or ignored: put that back and let the signal act again */
	rt_syscall4(13 /* rt_sigaction */, RT_SIGTRAP, (long)old, 0, 8);
	/* (this process's own pid: a fork child runs this handler too) */
	rt_syscall4(234 /* tgkill */, rt_getpid(), rt_gettid(), RT_SIGTRAP, 0);
}

/* ---- the application's SIGTRAP action and signal masks ----------------- */

/*
 * While int3 sites exist, SIGTRAP must reach rt_sigtrap in every thread:
 * the kernel forces an int3's SIGTRAP on a thread that blocks it by
 * resetting the action to the default (the process dies), and an action
 * the application installs would receive ubt's traps.  ubt's own entry
 * probes on libc's __libc_sigaction, sigprocmask and pthread_sigmask
 * (attach/features/readsafe.c) send both through here, before the function runs:
 *
 * - sigaction(SIGTRAP, act, oact): act becomes the action rt_sigtrap
 *   chains to (old_trap) and oact receives the one kept there, as the
 *   kernel would have; the call itself then runs with both NULL, a query
 *   without effect.  glibc adds SA_RESTORER and its own restorer, which
 *   ubt found at attach and keeps in old_trap.restorer.
 * - a mask that blocks SIGTRAP is applied here without it, and the call
 *   runs with (how, NULL, NULL), again without effect.
 *
 * Pointers are the application's: they are read and written with
 * process_vm_readv/writev, and a call whose pointers fail is left to fail
 * (or succeed) on its own, unchanged.
 */
struct rt_user_sigaction { /* glibc's struct sigaction on x86-64 */
	uint64_t handler;
	uint64_t mask[16];
	int32_t flags;
	int32_t pad;
	uint64_t restorer;
};

struct rt_iov {
	uint64_t base, len;
};

#define RT_SA_RESTORER 0x04000000
#define RT_TRAP_BIT (1ull << (RT_SIGTRAP - 1))

/* Copies n bytes within this process, fault-tolerant: 0 or -1. */
static int rt_self_copy(uint64_t dst, uint64_t src, uint64_t n, int to_app)
{
	struct rt_iov l = {to_app ? src : dst, n}, r = {to_app ? dst : src, n};
	long pid = rt_syscall0(39 /* getpid: a forked child's own */);
	long got = rt_syscall6(to_app ? 311 /* process_vm_writev */ : 310 /* readv */, pid,
			       (long)&l, 1, (long)&r, 1, 0);
	return got == (long)n ? 0 : -1;
}

void rt_read_on_sigaction(struct rt_regs *regs) RT_API;
void rt_read_on_sigmask(struct rt_regs *regs) RT_API;

void rt_on_sigaction(struct rt_regs *regs) RT_API;
void rt_on_sigaction(struct rt_regs *regs)
{
	struct rt_shm_header *h = rt_hdr();
	rt_read_on_sigaction(regs);
	if (regs->rdi != RT_SIGTRAP || !h->ntraps)
		return;
	struct rt_sigaction_k *kept = &h->old_trap;
	if (regs->rdx) {
		struct rt_user_sigaction o = {
			.handler = kept->handler,
			.mask = {kept->mask},
			.flags = (int32_t)kept->flags,
			.restorer = kept->flags & RT_SA_RESTORER ? kept->restorer : 0,
		};
		if (rt_self_copy(regs->rdx, (uint64_t)&o, sizeof(o), 1))
			return;
	}
	if (regs->rsi) {
		struct rt_user_sigaction a;
		if (rt_self_copy((uint64_t)&a, regs->rsi, sizeof(a), 0))
			return;
		if (a.handler > 1 && !kept->restorer)
			return; /* no restorer known: the application's call goes through */
		/* rt_sigtrap reads the handler first: it goes in last */
		kept->flags = (uint32_t)a.flags | RT_SA_RESTORER;
		kept->mask = a.mask[0];
		__atomic_store_n(&kept->handler, a.handler, __ATOMIC_RELEASE);
	}
	regs->rsi = 0;
	regs->rdx = 0;
}

void rt_on_sigmask(struct rt_regs *regs) RT_API;
void rt_on_sigmask(struct rt_regs *regs)
{
	uint64_t set;
	rt_read_on_sigmask(regs);
	if (!rt_hdr()->ntraps || !regs->rsi || regs->rdi == 1 /* SIG_UNBLOCK */ ||
	    rt_self_copy((uint64_t)&set, regs->rsi, sizeof(set), 0) || !(set & RT_TRAP_BIT))
		return;
	/* as glibc does, never block its SIGCANCEL (32) and SIGSETXID (33) */
	set &= ~(RT_TRAP_BIT | 1ull << 31 | 1ull << 32);
	if (rt_syscall4(14 /* rt_sigprocmask */, (long)regs->rdi, (long)&set, (long)regs->rdx, 8))
		return;
	regs->rsi = 0;
	regs->rdx = 0;
}
