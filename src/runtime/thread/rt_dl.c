/*
 * rt_dl.c - the runtime's side of probes on libraries loaded after attach.
 *
 * Pipeline position: in the target.  ubt (attach/features/dlopen.c) puts an entry
 * probe of its own on the dynamic loader's _dl_debug_state, the function
 * the loader calls (r_debug.r_brk, what debuggers break on) before and
 * after it maps or unmaps objects.  This handler counts the calls in the
 * shared header; ubt's trace loop sees the count move, stops the threads
 * and arms the new library's probes.
 *
 * After a change is complete (r_state RT_CONSISTENT) the loading thread
 * waits, at most RT_DL_WAIT_MS, until ubt says it has looked (dl_ack), so
 * `dlopen(lib); lib_func();` already hits the probe on lib_func, as with
 * kernel uprobes.  A futex wait on the shared header: one system call per
 * dlopen, never on a probe's hot path, and bounded, so a dead or slow ubt
 * costs a dlopen at most that long (the watchdog then removes the probe).
 *
 * rt_tls_ready, at the end, is ubt's other probe on start-up: on the
 * function of a static program that calls main, it turns the probes on
 * once the program has a thread pointer (attach/inject/session.c,
 * plan_main_wait).
 */
#include "../rt.h"

#define RT_DL_WAIT_MS 200
#define RT_SYS_FUTEX 202
#define RT_FUTEX_WAIT 0

struct rt_dl_ts {
	long sec, nsec;
};

static long futex_wait(volatile uint32_t *w, uint32_t val, const struct rt_dl_ts *ts)
{
	long ret;
	register long r10 __asm__("r10") = (long)ts;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(RT_SYS_FUTEX), "D"(w), "S"(RT_FUTEX_WAIT), "d"(val), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

void rt_dl_notify(struct rt_regs *regs) RT_API;
void rt_dl_notify(struct rt_regs *regs)
{
	(void)regs;
	struct rt_shm_header *h = rt_hdr();
	uint32_t mine = (uint32_t)__atomic_add_fetch(&h->dl_events, 1, __ATOMIC_ACQ_REL);
	const volatile int32_t *state = (const volatile int32_t *)h->dl_rstate;
	if (!state || *state != 0 /* RT_CONSISTENT */)
		return;
	/* 10 ms slices: an ack that lands between the load and the wait is
	 * seen at the next slice at worst */
	const struct rt_dl_ts slice = {0, 10 * 1000 * 1000};
	for (int i = 0; i < RT_DL_WAIT_MS / 10; i++) {
		uint32_t ack = __atomic_load_n(&h->dl_ack, __ATOMIC_ACQUIRE);
		if ((int32_t)(ack - mine) >= 0)
			return;
		futex_wait(&h->dl_ack, ack, &slice);
	}
}

/*
 * ubt's own probe on the function of a static program that calls main
 * (glibc's __libc_start_call_main, else main): the thread pointer is set
 * by then, so the probes may run (struct rt_priv, enable_at_main).  Only
 * the runtime's C, no %fs: it runs with the probes still off.
 */
void rt_tls_ready(struct rt_regs *regs) RT_API;
void rt_tls_ready(struct rt_regs *regs)
{
	(void)regs;
	if (__atomic_exchange_n(&ubt_priv.enable_at_main, 0, __ATOMIC_ACQ_REL))
		__atomic_store_n(&ubt_priv.enabled, 1, __ATOMIC_RELEASE);
}
