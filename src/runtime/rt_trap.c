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
#include "rt.h"

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
	rt_syscall4(234 /* tgkill */, rt_hdr()->pid, rt_gettid(), RT_SIGTRAP, 0);
}
