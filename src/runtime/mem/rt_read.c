/*
 * rt_read.c - fault-tolerant reads of the target's memory for probe code
 * (`*p`, `p->f`, `a[i]`, str()), running in the target (DESIGN.md decision 7).
 *
 * Pipeline position: linked with the probe code and injected into the
 * target; probe code calls rt_read() and rt_read_str().  The same object
 * serves BEGIN/END inside ubt, where they always take the system-call path.
 *
 * Exception-table reads.  The few instructions that may fault on a bad
 * address are in the assembly below; each has an entry in rt_extable
 * (offsets from the table, so the image needs no relocation for it) naming
 * a fixup that returns -EFAULT.  ubt installs rt_sigsegv as the target's
 * SIGSEGV and SIGBUS handler (remote rt_sigaction, only when the script
 * reads memory); it moves a thread that faulted at a table entry to the
 * fixup.  Every other fault goes to the action the application had:
 * its handler, called as the kernel would have, or the default action,
 * restored so the fault happens again and ends the program as it would
 * have without ubt.  A page that is mapped but not yet touched faults in
 * normally inside the kernel and never reaches the handler.
 *
 * When a direct read would not be safe, the read goes through
 * process_vm_readv (about 1 us) instead:
 *   - the handler is not installed in this process (BEGIN/END in ubt, or
 *     attach could not install it): ubt_priv.rd_gen == 0;
 *   - the application replaced the handler after ubt attached: a fault
 *     would reach the application's handler;
 *   - the thread has SIGSEGV or SIGBUS blocked: the kernel would kill the
 *     process instead of running any handler.
 * Each thread caches the outcome of checking the last two (two
 * rt_sigaction queries and one rt_sigprocmask, ~0.5 us) in its slot,
 * tagged with the generation ubt_priv.rd_gen; ubt's own probes on libc's
 * __libc_sigaction, sigprocmask and pthread_sigmask raise the generation,
 * and so does rt_sigsegv around an application handler (which runs with
 * the signal blocked), so the next read in every thread checks again.
 * The common case costs one compare.  See docs/ARCHITECTURE.md,
 * "Reading target memory".
 *
 * Addresses below vm.mmap_min_addr (NULL and its neighbourhood, the common
 * bad pointer) and non-canonical ones fail at once without touching memory.
 */
#include "../rt.h"

#define RT_EFAULT 14
#define RT_SIGBUS 7
#define RT_SIGSEGV 11
#define RT_SA_SIGINFO 4
#define RT_UC_RIP 168       /* offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]) */
#define RT_UC_SIGMASK 296   /* offsetof(ucontext_t, uc_sigmask) */
#define RT_SA_NODEFER 0x40000000
#define RT_USER_TOP 0x7ffffffff000ull /* end of user space with 4-level paging */

static inline struct rt_priv *rt_priv(void)
{
	return &ubt_priv;
}

/*
 * The routines that may fault.  Leaf functions that push nothing, so a
 * fixup only sets the return value and returns.
 *
 *   int64_t rt_rd_copy(void *dst, const void *src, uint64_t n)   0 / -EFAULT
 *   int64_t rt_rd_N(void *dst, const void *src)   N = 1 2 4 8:   0 / -EFAULT
 *   int64_t rt_rd_str(char *dst, const char *src, uint64_t n)    0 / -EFAULT
 *
 * rt_rd_str copies up to the NUL or n - 1 bytes (n >= 1) and always
 * terminates dst: bytes one at a time up to 8-byte alignment, then whole
 * aligned words while none holds a zero byte ((v - 0x01..) & ~v & 0x80..
 * is non-zero exactly when one does), then bytes again.  An aligned word
 * never straddles a page, so a string that ends just before an unmapped
 * page reads fine.
 *
 * The exception table is the section .rt_extable, bracketed by
 * rt_extable (rt_ex_first.c, linked first) and rt_extable_end
 * (rt_ex_last.c, linked last), so any runtime file can add entries
 * (rt_stack.c's loads of the target's stack do, RT_EXTABLE in rt.h).  An
 * entry is two 32-bit offsets, each from its own position: the faulting
 * instruction and its fixup (no relocation in the image for it).
 */
__asm__(".text\n"
	".p2align 4\n"
	"rt_rd_copy:\n"
	"\tmov %rdx, %rcx\n"
	".Lrd_copy_f: rep movsb\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	".p2align 4\n"
	"rt_rd_1:\n"
	".Lrd_1_f: movzbl (%rsi), %eax\n"
	"\tmov %al, (%rdi)\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	"rt_rd_2:\n"
	".Lrd_2_f: movzwl (%rsi), %eax\n"
	"\tmov %ax, (%rdi)\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	"rt_rd_4:\n"
	".Lrd_4_f: movl (%rsi), %eax\n"
	"\tmov %eax, (%rdi)\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	"rt_rd_8:\n"
	".Lrd_8_f: movq (%rsi), %rax\n"
	"\tmov %rax, (%rdi)\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	".p2align 4\n"
	"rt_rd_str:\n"
	"\tlea -1(%rdx), %rcx\n" /* bytes that may precede the NUL */
	"\ttest %rcx, %rcx\n"
	"\tjz .Lrd_s_term\n"
	".Lrd_s_head:\n"
	"\ttest $7, %sil\n"
	"\tjz .Lrd_s_words\n"
	".Lrd_s_f1: movzbl (%rsi), %eax\n"
	"\tmov %al, (%rdi)\n"
	"\ttest %al, %al\n"
	"\tjz .Lrd_s_ok\n"
	"\tinc %rsi\n"
	"\tinc %rdi\n"
	"\tdec %rcx\n"
	"\tjnz .Lrd_s_head\n"
	"\tjmp .Lrd_s_term\n"
	".Lrd_s_words:\n"
	"\tmovabs $0x0101010101010101, %r8\n"
	"\tmovabs $0x8080808080808080, %r9\n"
	".Lrd_s_wloop:\n"
	"\tcmp $8, %rcx\n"
	"\tjb .Lrd_s_tail\n"
	".Lrd_s_f2: mov (%rsi), %rax\n"
	"\tmov %rax, %r10\n"
	"\tsub %r8, %r10\n"
	"\tmov %rax, %r11\n"
	"\tnot %r11\n"
	"\tand %r11, %r10\n"
	"\ttest %r9, %r10\n"
	"\tjnz .Lrd_s_tail\n"
	"\tmov %rax, (%rdi)\n"
	"\tadd $8, %rsi\n"
	"\tadd $8, %rdi\n"
	"\tsub $8, %rcx\n"
	"\tjmp .Lrd_s_wloop\n"
	".Lrd_s_tail:\n"
	"\ttest %rcx, %rcx\n"
	"\tjz .Lrd_s_term\n"
	".Lrd_s_f3: movzbl (%rsi), %eax\n"
	"\tmov %al, (%rdi)\n"
	"\ttest %al, %al\n"
	"\tjz .Lrd_s_ok\n"
	"\tinc %rsi\n"
	"\tinc %rdi\n"
	"\tdec %rcx\n"
	"\tjmp .Lrd_s_tail\n"
	".Lrd_s_term:\n"
	"\tmovb $0, (%rdi)\n"
	".Lrd_s_ok:\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	".Lrd_fixup:\n"
	"\tmov $-14, %rax\n"
	"\tret\n"
	".pushsection .rt_extable,\"a\"\n"
	".p2align 2\n"
	"\t.long .Lrd_copy_f - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_1_f - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_2_f - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_4_f - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_8_f - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_s_f1 - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_s_f2 - .\n\t.long .Lrd_fixup - .\n"
	"\t.long .Lrd_s_f3 - .\n\t.long .Lrd_fixup - .\n"
	".popsection\n");

int64_t rt_rd_copy(void *dst, const void *src, uint64_t n) RT_API;
int64_t rt_rd_1(void *dst, const void *src) RT_API;
int64_t rt_rd_2(void *dst, const void *src) RT_API;
int64_t rt_rd_4(void *dst, const void *src) RT_API;
int64_t rt_rd_8(void *dst, const void *src) RT_API;
int64_t rt_rd_str(char *dst, const char *src, uint64_t n) RT_API;
extern const int32_t rt_extable[] RT_API;
extern const int32_t rt_extable_end[] RT_API;

void rt_sigsegv(int sig, void *info, void *ucv) RT_API;

/*
 * ubt's own entry probes (attach/features/readsafe.c): the application may be
 * changing its SIGSEGV/SIGBUS action (__libc_sigaction(sig, act, oact)) or
 * a thread's signal mask (sigprocmask/pthread_sigmask(how, set, old)).
 * Raising the generation makes every thread check again before its next
 * direct read.  0 stays reserved for "no handler in this process".
 */
static void rt_read_bump(void)
{
	struct rt_priv *p = rt_priv();
	if (!p->rd_gen)
		return;
	uint32_t g = __atomic_add_fetch(&p->rd_gen, 1, __ATOMIC_RELAXED);
	if (!g)
		__atomic_store_n(&p->rd_gen, 1, __ATOMIC_RELAXED);
}

/* ---- the signal handler ----------------------------------------------- */

static int rt_fixup(uint64_t *rip)
{
	for (const int32_t *e = rt_extable; e < rt_extable_end; e += 2)
		if (*rip == (uint64_t)&e[0] + (int64_t)e[0]) {
			*rip = (uint64_t)&e[1] + (int64_t)e[1];
			return 1;
		}
	return 0;
}

/*
 * A fault that is not ours: run the application's action for it.  rt_sigsegv
 * runs with every signal blocked (attach/features/readsafe.c); the application's
 * handler runs with the mask the kernel would have given it: the one at the
 * fault, its sa_mask and, without SA_NODEFER, the signal itself; and with
 * direct reads suspended in every thread meanwhile (a probe inside it
 * would find SIGSEGV blocked).
 */
static void rt_pass_on(int sig, void *info, void *ucv)
{
	struct rt_shm_header *h = rt_hdr();
	const struct rt_sigaction_k *old = sig == RT_SIGBUS ? &h->old_bus : &h->old_segv;
	__atomic_fetch_add(&h->app_faults, 1, __ATOMIC_RELAXED);
	if (old->handler > 1) {
		uint64_t mask = *(const uint64_t *)((const char *)ucv + RT_UC_SIGMASK) | old->mask,
			 saved;
		if (!(old->flags & RT_SA_NODEFER))
			mask |= 1ull << (sig - 1);
		rt_read_bump();
		rt_syscall4(14 /* rt_sigprocmask */, 2 /* SIG_SETMASK */, (long)&mask, (long)&saved, 8);
		if (old->flags & RT_SA_SIGINFO)
			((void (*)(int, void *, void *))old->handler)(sig, info, ucv);
		else
			((void (*)(int))old->handler)(sig);
		rt_syscall4(14 /* rt_sigprocmask */, 2 /* SIG_SETMASK */, (long)&saved, 0, 8);
		rt_read_bump();
		return;
	}
	/* default (or ignored, which the kernel overrides for a fault): put it
	 * back; a real fault happens again on return, a sent signal is re-sent */
	rt_syscall4(13 /* rt_sigaction */, sig, (long)old, 0, 8);
	int code = *(int *)((char *)info + 8); /* si_code */
	if (code <= 0)
		rt_syscall4(234 /* tgkill */, rt_priv()->pid, rt_gettid(), sig, 0);
}

void rt_sigsegv(int sig, void *info, void *ucv)
{
	uint64_t *rip = (uint64_t *)((char *)ucv + RT_UC_RIP);
	if (rt_fixup(rip))
		return;
	rt_pass_on(sig, info, ucv);
}

/* ---- choosing how to read --------------------------------------------- */

/* Is our handler in place for both signals, and are both unblocked? */
static int rt_direct_ok(void)
{
	struct rt_sigaction_k cur;
	uint64_t mask = 0;
	if (rt_syscall4(14 /* rt_sigprocmask */, 0, 0, (long)&mask, 8) ||
	    (mask & (1ull << (RT_SIGSEGV - 1) | 1ull << (RT_SIGBUS - 1))))
		return 0;
	static const int sigs[] = {RT_SIGSEGV, RT_SIGBUS};
	for (int i = 0; i < 2; i++)
		if (rt_syscall4(13 /* rt_sigaction */, sigs[i], 0, (long)&cur, 8) ||
		    cur.handler != (uint64_t)rt_sigsegv)
			return 0;
	return 1;
}

int rt_read_direct(struct rt_thread *t)
{
	uint32_t gen = rt_priv()->rd_gen;
	if (!gen || !t)
		return 0;
	uint64_t want = (uint64_t)gen << 1 | 1;
	if (t->rd_state == want)
		return 1;
	if (t->rd_state == want - 1)
		return 0;
	int ok = rt_direct_ok();
	t->rd_state = (uint64_t)gen << 1 | ok;
	return ok;
}

struct rt_iovec {
	const void *base;
	uint64_t len;
};

static int64_t rt_vm_read(void *dst, uint64_t src, uint64_t n)
{
	struct rt_iovec l = {dst, n}, r = {(void *)src, n};
	long got = rt_syscall6(310 /* process_vm_readv */, rt_priv()->pid, (long)&l, 1, (long)&r, 1, 0);
	return got == (long)n ? 0 : -RT_EFAULT;
}

static void rt_zero(void *dst, uint64_t n)
{
	char *d = dst;
	for (uint64_t i = 0; i < n; i++)
		d[i] = 0;
}

/* NUL-terminated string through process_vm_readv, a page at a time so a
 * string that ends before an unmapped page still reads. */
static int64_t rt_vm_read_str(char *dst, uint64_t src, uint64_t n)
{
	uint64_t done = 0;
	while (done + 1 < n) {
		uint64_t chunk = 4096 - ((src + done) & 4095);
		if (chunk > n - 1 - done)
			chunk = n - 1 - done;
		if (rt_vm_read(dst + done, src + done, chunk))
			return -RT_EFAULT;
		for (uint64_t i = 0; i < chunk; i++)
			if (!dst[done + i]) {
				/* the bytes after the NUL are not the string's */
				rt_zero(dst + done + i, n - done - i);
				return 0;
			}
		done += chunk;
	}
	dst[done] = 0;
	return 0;
}

int64_t rt_read_some(void *dst, uint64_t src, uint64_t n)
{
	struct rt_iovec l = {dst, n}, r = {(void *)src, n};
	long got = rt_syscall6(310 /* process_vm_readv */, rt_priv()->pid, (long)&l, 1, (long)&r, 1, 0);
	return got > 0 ? got : -RT_EFAULT;
}

int64_t rt_read_raw(int direct, void *dst, uint64_t src, uint64_t n)
{
	if (!n)
		return 0;
	return direct ? rt_rd_copy(dst, (const void *)src, n) : rt_vm_read(dst, src, n);
}

static int rt_plausible(uint64_t src, uint64_t n)
{
	return src >= rt_hdr()->rd_min_addr && src < RT_USER_TOP && n <= RT_USER_TOP - src;
}

static int64_t rt_failed(void *dst, uint64_t n)
{
	rt_zero(dst, n);
	__atomic_fetch_add(&rt_hdr()->read_faults, 1, __ATOMIC_RELAXED);
	return -RT_EFAULT;
}

/*
 * Copies n bytes of target memory at src into dst: 0, or -EFAULT with dst
 * zeroed (as bpf_probe_read does) and the failure counted.  t is the
 * calling thread's slot (rt_thread_enter), or NULL: then only the system
 * call path is used.
 */
int64_t rt_read(struct rt_thread *t, void *dst, uint64_t src, uint64_t n) RT_API;
int64_t rt_read(struct rt_thread *t, void *dst, uint64_t src, uint64_t n)
{
	int64_t ret;
	if (!n)
		return 0;
	if (!rt_plausible(src, n))
		return rt_failed(dst, n);
	if (!rt_read_direct(t))
		ret = rt_vm_read(dst, src, n);
	else if (n == 8)
		ret = rt_rd_8(dst, (const void *)src);
	else if (n == 4)
		ret = rt_rd_4(dst, (const void *)src);
	else if (n == 2)
		ret = rt_rd_2(dst, (const void *)src);
	else if (n == 1)
		ret = rt_rd_1(dst, (const void *)src);
	else
		ret = rt_rd_copy(dst, (const void *)src, n);
	return ret ? rt_failed(dst, n) : 0;
}

/*
 * str(): the NUL-terminated string at src into dst[0..n-1], at most n - 1
 * bytes, always terminated; "" and -EFAULT (counted) when it cannot be
 * read up to its end or n - 1 bytes, as bpf_probe_read_user_str.
 */
int64_t rt_read_str(struct rt_thread *t, char *dst, uint64_t src, uint64_t n) RT_API;
int64_t rt_read_str(struct rt_thread *t, char *dst, uint64_t src, uint64_t n)
{
	int64_t ret;
	if (!n)
		return 0;
	if (!rt_plausible(src, 1))
		return rt_failed(dst, n);
	if (rt_read_direct(t))
		ret = rt_rd_str(dst, (const char *)src, n);
	else
		ret = rt_vm_read_str(dst, src, n);
	return ret ? rt_failed(dst, n) : 0;
}

/*
 * The runtime's own reads and writes of one word, for return probes
 * (rt_ret.c): whether a parked frame's return slot, on a stack that may
 * since have been unmapped, still holds its trampoline's stub.  Same
 * choice of method as rt_read, with the cache in *state (32 bits: the
 * generation's low bits), and a failure is not the script's read fault.
 * Writes (rare: a parked frame given its return address back) always go
 * through process_vm_writev.  Both name the calling process by getpid():
 * a forked child returning through a trampoline reads its own memory.
 */
static int64_t rt_vm_word(long nr, uint64_t *local, uint64_t remote)
{
	struct rt_iovec l = {local, 8}, r = {(void *)remote, 8};
	long pid = rt_syscall0(39 /* getpid */);
	return rt_syscall6(nr, pid, (long)&l, 1, (long)&r, 1, 0) == 8 ? 0 : -RT_EFAULT;
}

int64_t rt_read_u64(uint32_t *state, uint64_t *dst, uint64_t src) RT_API;
int64_t rt_read_u64(uint32_t *state, uint64_t *dst, uint64_t src)
{
	uint32_t gen = rt_priv()->rd_gen;
	if (!rt_plausible(src, 8) || (src & 7))
		return -RT_EFAULT;
	if (gen && *state != (gen << 1 | 1) && *state != gen << 1)
		*state = gen << 1 | (uint32_t)rt_direct_ok();
	if (gen && *state == (gen << 1 | 1))
		return rt_rd_8(dst, (const void *)src);
	return rt_vm_word(310 /* process_vm_readv */, dst, src);
}

int64_t rt_write_u64(uint64_t dst, uint64_t v) RT_API;
int64_t rt_write_u64(uint64_t dst, uint64_t v)
{
	if (!rt_plausible(dst, 8) || (dst & 7))
		return -RT_EFAULT;
	return rt_vm_word(311 /* process_vm_writev */, &v, dst);
}

void rt_read_on_sigaction(struct rt_regs *regs) RT_API;
void rt_read_on_sigaction(struct rt_regs *regs)
{
	if ((regs->rdi == RT_SIGSEGV || regs->rdi == RT_SIGBUS) && regs->rsi)
		rt_read_bump();
}

void rt_read_on_sigmask(struct rt_regs *regs) RT_API;
void rt_read_on_sigmask(struct rt_regs *regs)
{
	if (regs->rsi)
		rt_read_bump();
}
