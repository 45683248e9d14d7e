/*
 * rt_profile.c - profile:hz:N in the target: the handler of the timers'
 * signal.
 *
 * ubt creates one CLOCK_PROCESS_CPUTIME_ID timer per profile attach point
 * in the target (remote timer_create, attach/features/profile.c), each sending the
 * real-time signal h->prof_sig, which the program neither catches nor
 * blocks, with si_value = RT_PROF_COOKIE + index.  Since Linux 6.4 the
 * kernel delivers such a signal to the thread that used the CPU time, so
 * the handler runs in the sampled thread, on top of the code it
 * interrupted.  It rebuilds the interrupted registers as a struct
 * rt_regs_mid (abi.h, the mid-function site's block: pc, rsp and rbp
 * included, so ustack starts at the interrupted pc) and calls the probe
 * function the way a mid-function trampoline does (rt_profile_call).
 *
 * A prof_sig signal that is not one of our timers' (someone sent it with
 * kill) would have ended the program with the default action: the handler
 * deletes our timers, puts the default action back and sends the same
 * signal again, so the program ends as it would have without ubt.
 *
 * Pipeline position: linked with the probe code and injected into the
 * target; installed by attach/features/profile.c with a remote rt_sigaction.
 */
#include "../rt.h"

#define RT_SI_TIMER (-2)

/* offsets in ucontext_t's uc_mcontext.gregs (x86-64), in words from gregs[0] */
enum {
	G_R8, G_R9, G_R10, G_R11, G_R12, G_R13, G_R14, G_R15, G_RDI, G_RSI, G_RBP, G_RBX,
	G_RDX, G_RAX, G_RCX, G_RSP, G_RIP, G_EFL,
};
#define RT_UC_GREGS 40 /* offsetof(ucontext_t, uc_mcontext.gregs) */

/*
 * rt_profile_call(handler, regs): calls a probe function in the
 * handler convention (abi.h: preserve_most, the word above its return
 * address points to a struct rt_regs_mid), with %rsp aligned to 16.
 */
__asm__(".text\n"
	".globl rt_profile_call\n"
	".hidden rt_profile_call\n"
	".type rt_profile_call,@function\n"
	"rt_profile_call:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tand $-16, %rsp\n"
	"\tpush %rsi\n"
	"\tpush %rsi\n"
	"\tcall *%rdi\n"
	"\tleave\n"
	"\tret\n"
	".size rt_profile_call, .-rt_profile_call\n");

extern struct rt_priv ubt_priv RT_API;
void rt_profile_call(uint64_t handler, struct rt_regs_mid *regs) RT_API;
void rt_profile_sig(int sig, void *info, void *ucv) RT_API;

/* Not our timer's: stop sampling and let the signal do what it would have. */
static void pass_on(int sig, void *info)
{
	struct rt_shm_header *h = rt_hdr();
	long pid = rt_syscall0(39 /* getpid */);
	__atomic_fetch_add(&h->prof_foreign, 1, __ATOMIC_RELAXED);
	/* timer ids are per process: a forked child (its private page wiped,
	 * pid 0 there) has none of ours, and may have its own with equal ids */
	if (ubt_priv.pid == (uint32_t)pid)
		for (uint32_t i = 0; i < h->nprof && i < RT_PROF_MAX; i++)
			rt_syscall4(226 /* timer_delete */, h->prof[i].timer, 0, 0, 0);
	struct rt_sigaction_k dfl = {0};
	rt_syscall4(13 /* rt_sigaction */, sig, (long)&dfl, 0, 8);
	/* the same siginfo, to this thread: pending now, acted on at return */
	rt_syscall4(297 /* rt_tgsigqueueinfo */, pid, rt_gettid(), sig, (long)info);
}

void rt_profile_sig(int sig, void *info, void *ucv)
{
	struct rt_shm_header *h = rt_hdr();
	int32_t code = *(int32_t *)((char *)info + 8);
	uint32_t value = *(uint32_t *)((char *)info + 24); /* si_value in _timer */
	uint32_t i = value - RT_PROF_COOKIE;
	if (code != RT_SI_TIMER || i >= h->nprof || i >= RT_PROF_MAX) {
		pass_on(sig, info);
		return;
	}
	__atomic_fetch_add(&h->prof_samples, 1, __ATOMIC_RELAXED);
	const uint64_t *g = (const uint64_t *)((char *)ucv + RT_UC_GREGS);
	struct rt_regs_mid r;
	r.r11 = g[G_R11];
	r.r10 = g[G_R10];
	r.r9 = g[G_R9];
	r.r8 = g[G_R8];
	r.rax = g[G_RAX];
	r.rcx = g[G_RCX];
	r.rdx = g[G_RDX];
	r.rsi = g[G_RSI];
	r.rdi = g[G_RDI];
	r.pc = g[G_RIP];
	r.rbx = g[G_RBX];
	r.rbp = g[G_RBP];
	r.r12 = g[G_R12];
	r.r13 = g[G_R13];
	r.r14 = g[G_R14];
	r.r15 = g[G_R15];
	r.rsp = g[G_RSP];
	r.flags = g[G_EFL];
	rt_profile_call(h->prof[i].handler, &r);
}
