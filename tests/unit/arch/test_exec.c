/*
 * test_exec.c - the x86-64 arch layer, executed.
 *
 * Patches real functions of this process (targets.c, built -O2) with the
 * plan, trampoline and patch bytes of src/attach/arch, calls them, and
 * checks that results and handler counts are exact, that handlers see the
 * arguments where struct rt_regs says, and that restoring plan->orig gives
 * back the original bytes.  A second set runs trampolines placed beyond
 * rel32 reach (called directly, since no jmp can reach them) so that the
 * absolute forms of jmp, jcc, call and the handler call really execute.
 *
 * Single-threaded: bytes are written in place after mprotect(RWX).
 * Function sizes come from the dynamic symbol table (export_dynamic).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/arch/arch.h"
#include "../check.h"
#include "targets.h"

#define SLOT 1024 /* >= arch_trampoline_max(2) */
#define NSLOTS 16
/*
 * Slots start this far into the mapping: clang's -fsanitize=function reads
 * 8 bytes before the target of an indirect call, and exec_far() calls
 * trampolines directly.
 */
#define SLOT0 64
#define MIB (1ull << 20)

static uint8_t *near_mem, *far_mem;
static int near_used, far_used;

struct probe {
	const char *name;
	uint8_t *func;
	struct arch_site_plan plan;
	uint8_t *tramp;
	uint8_t before[ARCH_MAX_DISPLACED]; /* the function's bytes before patching */
	bool patched;
};

static size_t func_size(void *f)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || info.dli_saddr != f)
		return 0;
	return sym->st_size;
}

static uint8_t *map_at(uint64_t hint, size_t len)
{
	void *p = mmap((void *)hint, len, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (hint && (uint64_t)p != hint) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/* RWX memory within arch_near_window() of f, found by probing 1 MiB steps. */
static uint8_t *alloc_near(void *f, size_t len)
{
	uint64_t a = (uint64_t)f & ~(MIB - 1), lo, hi, step;
	uint8_t *p;

	arch_near_window((uint64_t)f, &lo, &hi);
	for (step = 16 * MIB; step < 1024 * MIB; step += MIB) {
		if (a + step + len <= hi && (p = map_at(a + step, len)))
			return p;
		if (a - step >= lo && a > step && (p = map_at(a - step, len)))
			return p;
	}
	return NULL;
}

/* RWX memory more than 4 GiB from f. */
static uint8_t *alloc_far(void *f, size_t len)
{
	uint64_t a = (uint64_t)f;
	uint8_t *p = map_at(0, len);

	if (p && ((uint64_t)p - a > (4ull << 30) && a - (uint64_t)p > (4ull << 30)))
		return p;
	if (p)
		munmap(p, len);
	return map_at((a & ~(MIB - 1)) + (64ull << 30), len);
}

static int set_text_prot(uint8_t *addr, size_t len, int prot)
{
	uintptr_t pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)addr & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)addr + len + pg - 1) & ~(pg - 1);

	return mprotect((void *)lo, hi - lo, prot);
}

static const uint64_t pm_h[] = {(uint64_t)h_pm_count};

/*
 * Plans f, emits its trampoline into the next slot of near or far memory,
 * and (patch) writes the jmp: bytes 1.. first, the e9 last.
 */
static int probe_install(struct probe *p, const char *name, void *f, const uint64_t *handlers,
			 int n, bool far, bool patch)
{
	uint8_t bytes[ARCH_MAX_DISPLACED];
	size_t flen = func_size(f), tlen = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->func = f;
	CHECK(flen > 0, "%s: no symbol size (is the test linked with export_dynamic?)", name);
	if (!flen)
		return -ENOENT;
	rc = arch_plan_site(p->func, flen, (uint64_t)f, (uint64_t)f, &p->plan);
	CHECK(rc == 0 && p->plan.kind == ARCH_PATCH_JMP, "%s: plan rc %d kind %d why '%s'", name,
	      rc, p->plan.kind, p->plan.why);
	if (rc || p->plan.kind != ARCH_PATCH_JMP)
		return -EINVAL;
	p->plan.c_abi = handlers != pm_h; /* C handlers, but for h_pm_count */
	memcpy(p->before, p->func, p->plan.orig_len);
	CHECK(memcmp(p->before, p->plan.orig, p->plan.orig_len) == 0, "%s: plan.orig", name);

	if (far) {
		CHECK(far_used < NSLOTS, "far slots");
		p->tramp = far_mem + SLOT0 + SLOT * far_used++;
	} else {
		CHECK(near_used < NSLOTS, "near slots");
		p->tramp = near_mem + SLOT0 + SLOT * near_used++;
	}
	CHECK(arch_trampoline_max(n) <= SLOT, "trampoline_max %zu", arch_trampoline_max(n));
	rc = arch_emit_trampoline(&p->plan, (uint64_t)p->tramp, handlers, n, p->tramp, SLOT, &tlen);
	if (rc)
		return rc;
	if (!patch)
		return 0;

	rc = arch_patch_bytes(&p->plan, (uint64_t)p->tramp, bytes);
	CHECK_EQ(rc, 0, "arch_patch_bytes");
	if (rc)
		return rc;
	CHECK_EQ(set_text_prot(p->func, p->plan.orig_len, PROT_READ | PROT_WRITE | PROT_EXEC), 0,
		  "mprotect RWX");
	memcpy(p->func + 1, bytes + 1, p->plan.orig_len - 1);
	__atomic_store_n(p->func, bytes[0], __ATOMIC_RELEASE);
	p->patched = true;
	return 0;
}

static void probe_remove(struct probe *p)
{
	if (!p->patched)
		return;
	/* Another probe on the same page may have made it read-only again. */
	CHECK_EQ(set_text_prot(p->func, p->plan.orig_len, PROT_READ | PROT_WRITE | PROT_EXEC), 0,
		  "mprotect RWX");
	p->func[0] = p->plan.orig[0];
	memcpy(p->func + 1, p->plan.orig + 1, p->plan.orig_len - 1);
	CHECK(memcmp(p->func, p->before, p->plan.orig_len) == 0, "%s: bytes after restore",
	      p->name);
	CHECK_EQ(set_text_prot(p->func, p->plan.orig_len, PROT_READ | PROT_EXEC), 0,
		  "mprotect RX");
	p->patched = false;
}

static void reset_handlers(void)
{
	h_hits = h_arg0 = h_arg0_sum = h_stack7 = h_stack8 = h_ret = h_misaligned = 0;
	h_order = 0;
}

static const uint64_t count_h[] = {(uint64_t)h_count};

/* lea; add g_bias(%rip): 1000 calls, every one counted with its argument. */
static void exec_work(void)
{
	int (*volatile fn)(int) = t_work;
	struct probe p;
	long sum = 0, want = 0;
	int i;

	if (probe_install(&p, "t_work", t_work, count_h, 1, false, true))
		return;
	/* gcc -O2: lea; add g_bias(%rip) (9 bytes); other compilers may differ */
	CHECK(p.plan.orig_len >= 5, "t_work displaces %d bytes", p.plan.orig_len);
	reset_handlers();
	for (i = 0; i < 1000; i++) {
		sum += fn(i);
		want += i * 3 + g_bias;
	}
	CHECK_EQ(sum, want, "sum of t_work results");
	CHECK_EQ(h_hits, 1000, "t_work hits");
	CHECK_EQ(h_arg0, 999, "last arg0");
	CHECK_EQ(h_arg0_sum, 499500, "sum of arg0");
	CHECK_EQ(h_misaligned, 0, "handler calls with %%rsp not 16-aligned");
	g_bias = 100;
	CHECK_EQ(fn(2), 106, "t_work reads g_bias through the relocated add");
	g_bias = 7;
	probe_remove(&p);
	CHECK_EQ(fn(5), 22, "t_work after restore");
	CHECK_EQ(h_hits, 1001, "no hits after restore");
}

/* Recursion through the patched entry; addl $1,g(%rip) (imm after disp) moved. */
static void exec_fib(void)
{
	int (*volatile fn)(int) = t_fib;
	struct probe p;

	if (probe_install(&p, "t_fib", t_fib, count_h, 1, false, true))
		return;
	reset_handlers();
	g_fib_calls = 0;
	CHECK_EQ(fn(20), 6765, "t_fib(20)");
	CHECK(g_fib_calls > 20, "t_fib ran %ld times", (long)g_fib_calls);
	CHECK_EQ(h_hits, g_fib_calls, "t_fib hits == its own count of calls");
	CHECK_EQ(h_misaligned, 0, "misaligned handler calls");
	probe_remove(&p);
}

/* Arguments 7 and 8 are on the stack, just above the return address. */
static void exec_sum8(void)
{
	long (*volatile fn)(long, long, long, long, long, long, long, long) = t_sum8;
	struct probe p;

	if (probe_install(&p, "t_sum8", t_sum8, count_h, 1, false, true))
		return;
	reset_handlers();
	CHECK_EQ(fn(1, 2, 3, 4, 5, 6, 7, 8), 204, "t_sum8(1..8)");
	CHECK_EQ(fn(10, 20, 30, 40, 50, 60, 70, 80), 2040, "t_sum8(10..80)");
	CHECK_EQ(h_hits, 2, "t_sum8 hits");
	CHECK_EQ(h_arg0, 10, "t_sum8 arg0");
	CHECK_EQ(h_stack7, 70, "t_sum8 arg 7 at regs->ret + 8");
	CHECK_EQ(h_stack8, 80, "t_sum8 arg 8 at regs->ret + 16");
	probe_remove(&p);
}

static void exec_rip_first(void)
{
	int (*volatile fn)(void) = t_rip_first;
	struct probe p;

	if (probe_install(&p, "t_rip_first", t_rip_first, count_h, 1, false, true))
		return;
	reset_handlers();
	g_val = 5;
	CHECK_EQ(fn(), 5, "t_rip_first");
	g_val = 12345;
	CHECK_EQ(fn(), 12345, "t_rip_first after g_val changed");
	CHECK_EQ(h_hits, 2, "t_rip_first hits");
	probe_remove(&p);
}

/* A relocated tail call lands in t_work, itself probed. */
static void exec_wrap(void)
{
	int (*volatile fn)(int) = t_wrap;
	struct probe pw, pk;

	if (probe_install(&pw, "t_wrap", t_wrap, count_h, 1, false, true))
		return;
	reset_handlers();
	CHECK_EQ(fn(4), 22, "t_wrap(4)");
	CHECK_EQ(h_hits, 1, "t_wrap hits");
	CHECK_EQ(h_arg0, 4, "t_wrap arg0");
	if (probe_install(&pk, "t_work", t_work, count_h, 1, false, true) == 0) {
		CHECK_EQ(fn(4), 22, "t_wrap(4) with t_work probed too");
		CHECK_EQ(h_hits, 3, "t_wrap + t_work hits");
		CHECK_EQ(h_arg0, 5, "t_work's arg0 last");
		probe_remove(&pk);
	}
	probe_remove(&pw);
}

static void exec_jle_first(void)
{
	int (*volatile fn)(int) = t_jle_first;
	struct probe p;

	if (probe_install(&p, "t_jle_first", t_jle_first, count_h, 1, false, true))
		return;
	CHECK_EQ(p.plan.orig_len, 7, "t_jle_first displaces test + jle + lea");
	reset_handlers();
	CHECK_EQ(fn(5), 4, "t_jle_first(5)");
	CHECK_EQ(fn(-3), 0, "t_jle_first(-3): jle taken");
	CHECK_EQ(fn(0), 0, "t_jle_first(0): jle taken");
	CHECK_EQ(fn(1), 0, "t_jle_first(1)");
	CHECK_EQ(h_hits, 4, "t_jle_first hits");
	probe_remove(&p);
}

static void exec_call_first(void)
{
	int (*volatile fn)(void) = t_call_first;
	struct probe p;

	if (probe_install(&p, "t_call_first", t_call_first, count_h, 1, false, true))
		return;
	reset_handlers();
	g_seen_ret = NULL;
	CHECK_EQ(fn(), 42, "t_call_first");
	CHECK(g_seen_ret == (uint8_t *)t_call_first + 5, "callee saw return address %p, want %p",
	      g_seen_ret, (void *)((uint8_t *)t_call_first + 5));
	CHECK_EQ(h_hits, 1, "t_call_first hits");
	probe_remove(&p);
}

/*
 * A handler in the probe-code convention (h_pm_count, abi.h) sees the
 * arguments in their registers and the stack above struct rt_entry_frame,
 * at an aligned call, and its clobbered %r11 is restored: fib at -O2 keeps
 * values in caller-saved registers across its own calls (-fipa-ra).
 */
static void exec_handler_conv(void)
{
	long (*volatile sum8)(long, long, long, long, long, long, long, long) = t_sum8;
	int (*volatile fib)(int) = t_fib;
	struct probe p;

	if (probe_install(&p, "t_sum8", t_sum8, pm_h, 1, false, true) == 0) {
		reset_handlers();
		CHECK_EQ(sum8(10, 20, 30, 40, 50, 60, 70, 80), 2040, "pm: t_sum8(10..80)");
		CHECK_EQ(h_hits, 1, "pm: t_sum8 hits");
		CHECK_EQ(h_arg0, 10, "pm: t_sum8 arg0");
		CHECK_EQ(h_stack7, 70, "pm: arg 7 at frame.ret + 8");
		CHECK_EQ(h_stack8, 80, "pm: arg 8 at frame.ret + 16");
		CHECK_EQ(h_misaligned, 0, "pm: misaligned handler calls");
		probe_remove(&p);
	}
	if (probe_install(&p, "t_fib", t_fib, pm_h, 1, false, true) == 0) {
		reset_handlers();
		g_fib_calls = 0;
		CHECK_EQ(fib(20), 6765, "pm: t_fib(20)");
		CHECK_EQ(h_hits, g_fib_calls, "pm: t_fib hits");
		probe_remove(&p);
	}
}

/* Two handlers run in order, and a handler's change to regs reaches the function. */
static void exec_chain(void)
{
	static const uint64_t chain[] = {(uint64_t)h_first, (uint64_t)h_add100};
	int (*volatile fn)(int) = t_work;
	struct probe p;

	if (probe_install(&p, "t_work", t_work, chain, 2, false, true))
		return;
	reset_handlers();
	CHECK_EQ(fn(1), 101 * 3 + 7, "t_work(1) with arg0 raised by 100");
	CHECK_EQ(h_order, 12, "handler order");
	probe_remove(&p);
}

/*
 * Trampolines beyond rel32 reach, entered directly as if the jmp had gone
 * there: the relocated jle, call, tail jmp, the jmp back and the handler
 * call all take their absolute forms.
 */
static void exec_far(void)
{
	struct probe p;
	int rc;

	if (probe_install(&p, "t_jle_first", t_jle_first, count_h, 1, true, false) == 0) {
		int (*tf)(int) = (int (*)(int))(void *)p.tramp;

		reset_handlers();
		CHECK_EQ(tf(5), 4, "far t_jle_first(5)");
		CHECK_EQ(tf(-3), 0, "far t_jle_first(-3)");
		CHECK_EQ(h_hits, 2, "far t_jle_first hits");
		CHECK_EQ(h_arg0, (uint64_t)(uint32_t)-3, "far arg0");
	}
	if (probe_install(&p, "t_call_first", t_call_first, count_h, 1, true, false) == 0) {
		int (*tf)(void) = (int (*)(void))(void *)p.tramp;

		g_seen_ret = NULL;
		CHECK_EQ(tf(), 42, "far t_call_first");
		CHECK(g_seen_ret == (uint8_t *)t_call_first + 5, "far callee saw %p", g_seen_ret);
	}
	if (probe_install(&p, "t_wrap", t_wrap, count_h, 1, true, false) == 0) {
		int (*tf)(int) = (int (*)(int))(void *)p.tramp;

		CHECK_EQ(tf(4), 22, "far t_wrap(4)");
	}
	/* mov g_val(%rip),%eax cannot reach g_val from there. */
	rc = probe_install(&p, "t_rip_first", t_rip_first, count_h, 1, true, false);
	CHECK_EQ(rc, -ERANGE, "far t_rip_first");
}

/*
 * A system call's site on the `syscall` itself (mid.c, mid_after): one
 * handler before the relocated `syscall` sees the number in %rax, one
 * after it the result; a thread left right after the original `syscall`
 * maps to the start of the calls after it, so that a restart (pc - 2)
 * finds the relocated `syscall`.
 */
static void exec_sys_after(void)
{
	long (*volatile fn)(long, long) = t_syscall;
	uint8_t *f = (uint8_t *)t_syscall, bytes[ARCH_MAX_DISPLACED], before[ARCH_MAX_DISPLACED];
	uint64_t site = (uint64_t)f + 6, pc = 0, back = 0, sp_add = 1;
	const uint64_t hs[] = {(uint64_t)h_sys_in, (uint64_t)h_sys_out};
	struct arch_site_plan plan;
	size_t len = 0, flen = func_size(f);

	CHECK_EQ(arch_plan_mid_site(f, flen, 0, (uint64_t)f, site, NULL, 0, NULL, &plan), 0, "plan");
	CHECK(plan.kind == ARCH_PATCH_JMP && plan.orig_len == 8, "t_syscall plan %d len %d: %s",
	      plan.kind, plan.orig_len, plan.why);
	if (plan.kind != ARCH_PATCH_JMP)
		return;
	plan.mid_after = 1;
	plan.mid_read = 1u << 4; /* rax */
	uint8_t *tramp = near_mem + SLOT0 + SLOT * near_used++;
	CHECK(arch_trampoline_mid_max(2) <= SLOT, "mid max %zu", arch_trampoline_mid_max(2));
	CHECK_EQ(arch_emit_trampoline(&plan, (uint64_t)tramp, hs, 2, tramp, SLOT, &len), 0, "emit");
	CHECK_EQ(arch_pc_into_trampoline(&plan, (uint64_t)tramp, 2, site, &pc), 0, "pc of site");
	CHECK(tramp[pc - (uint64_t)tramp] == 0x0f && tramp[pc - (uint64_t)tramp + 1] == 0x05,
	      "the copy starts with the syscall");
	uint64_t copy = pc;
	CHECK_EQ(arch_pc_into_trampoline(&plan, (uint64_t)tramp, 2, site + 2, &pc), 0, "site+2");
	CHECK_EQ(pc, copy + 2, "a thread after the syscall goes before the exit handler");
	CHECK_EQ(arch_pc_from_trampoline(&plan, (uint64_t)tramp, 2, copy + 2, &back, &sp_add), 0,
		 "back");
	CHECK(back == site + 2 && sp_add == 0, "and back");
	CHECK_EQ(arch_patch_bytes(&plan, (uint64_t)tramp, bytes), 0, "patch bytes");
	memcpy(before, (void *)site, plan.orig_len);
	CHECK_EQ(set_text_prot((uint8_t *)site, plan.orig_len, PROT_READ | PROT_WRITE | PROT_EXEC),
		 0, "mprotect RWX");
	memcpy((uint8_t *)site, bytes, plan.orig_len);
	h_sys_enters = h_sys_exits = 0;
	long ppid = fn(SYS_getppid, 0);
	CHECK_EQ(ppid, getppid(), "getppid through the trampoline");
	CHECK_EQ(h_sys_nr, SYS_getppid, "the number before the call");
	CHECK_EQ(h_sys_ret, (uint64_t)ppid, "the result after it");
	CHECK_EQ(fn(SYS_close, -1), -1, "close(-1): the error path after the relocated cmp");
	CHECK_EQ(h_sys_nr, SYS_close, "close's number");
	CHECK_EQ((int64_t)h_sys_ret, -EBADF, "close's result");
	CHECK(h_sys_enters == 2 && h_sys_exits == 2, "handlers ran %llu, %llu",
	      (unsigned long long)h_sys_enters, (unsigned long long)h_sys_exits);
	memcpy((uint8_t *)site, before, plan.orig_len);
	CHECK_EQ(set_text_prot((uint8_t *)site, plan.orig_len, PROT_READ | PROT_EXEC), 0, "RX");
	CHECK_EQ(fn(SYS_getppid, 0), getppid(), "after restore");
	CHECK_EQ(h_sys_enters, 2, "no hits after restore");
}

/*
 * An indirect call as the last displaced instruction of a mid-function
 * site (mid.c; spdk's msg_exec: a nop right before `call *%reg`): the copy
 * pushes the original return address and jumps through the same operand,
 * so the callee returns into the function, not into the trampoline.
 */
static void exec_icall_one(const char *name, uint8_t *f, uint64_t site, int (*call)(void *))
{
	uint8_t bytes[ARCH_MAX_DISPLACED], before[ARCH_MAX_DISPLACED];
	const uint64_t hs[] = {(uint64_t)h_sys_in};
	struct arch_site_plan plan;
	size_t len = 0, flen = func_size(f);
	uint64_t copy = 0, back = 0, sp_add = 0;

	CHECK_EQ(arch_plan_mid_site(f, flen, 0, (uint64_t)f, site, NULL, 0, NULL, &plan), 0,
		 "%s: plan", name);
	CHECK(plan.kind == ARCH_PATCH_JMP, "%s: plan %d: %s", name, plan.kind, plan.why);
	if (plan.kind != ARCH_PATCH_JMP)
		return;
	uint64_t call_at = site + plan.insn_off[plan.ninsns - 1], ret_at = site + plan.orig_len;
	plan.mid_read = 1u << 4; /* rax, which h_sys_in records */
	uint8_t *tramp = near_mem + SLOT0 + SLOT * near_used++;
	CHECK_EQ(arch_emit_trampoline(&plan, (uint64_t)tramp, hs, 1, tramp, SLOT, &len), 0,
		 "%s: emit", name);
	CHECK_EQ(arch_pc_into_trampoline(&plan, (uint64_t)tramp, 1, call_at, &copy), 0,
		 "%s: the call in the copy", name);
	CHECK_EQ(arch_pc_from_trampoline(&plan, (uint64_t)tramp, 1, copy + 6, &back, &sp_add), 0,
		 "%s: after the push", name);
	CHECK(back == call_at && sp_add == 8, "%s: after the push: the call, %%rsp + %llu", name,
	      (unsigned long long)sp_add);
	CHECK_EQ(arch_patch_bytes(&plan, (uint64_t)tramp, bytes), 0, "%s: patch bytes", name);
	memcpy(before, (void *)site, plan.orig_len);
	CHECK_EQ(set_text_prot((uint8_t *)site, plan.orig_len, PROT_READ | PROT_WRITE | PROT_EXEC),
		 0, "mprotect RWX");
	memcpy((uint8_t *)site, bytes, plan.orig_len);
	h_sys_enters = 0;
	for (int i = 0; i < 3; i++) {
		g_seen_ret = NULL;
		CHECK_EQ(call(f), 42, "%s: through the trampoline", name);
		CHECK(g_seen_ret == (void *)ret_at, "%s: the callee saw %p, want %p", name,
		      g_seen_ret, (void *)ret_at);
	}
	CHECK_EQ(h_sys_enters, 3, "%s: hits", name);
	memcpy((uint8_t *)site, before, plan.orig_len);
	CHECK_EQ(set_text_prot((uint8_t *)site, plan.orig_len, PROT_READ | PROT_EXEC), 0, "RX");
	CHECK_EQ(call(f), 42, "%s: after restore", name);
	CHECK_EQ(h_sys_enters, 3, "%s: no hits after restore", name);
}

static int call_icall_reg(void *f)
{
	int (*volatile fn)(int (*)(void)) = (int (*)(int (*)(void)))f;

	return fn(t_ret41);
}

static int call_icall_rip(void *f)
{
	int (*volatile fn)(void) = (int (*)(void))f;

	return fn();
}

/* Writes len bytes at addr in a ptrace-stopped child, a word at a time. */
static int poke(pid_t pid, uint64_t addr, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w;
		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + i), NULL);
		if (errno)
			return -errno;
		memcpy(&w, buf + i, len - i < sizeof(long) ? len - i : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(addr + i), (void *)w))
			return -errno;
	}
	return 0;
}

/*
 * A thread stopped between the push and the jmp of a relocated `call
 * *%r12` when the patch is taken back: a forked child single-steps to that
 * boundary, the parent moves its pc out as detach does (patch.c: the pc
 * the map gives, %rsp + sp_add), restores the site, fills the trampoline
 * with int3 (as if unmapped) and lets it run on.  Its call must return
 * into t_icall_reg with the stack it had, and every later call too: with
 * the 8 bytes left on the stack, `pop %r12; ret` would return to garbage.
 */
static void exec_icall_stopped(void)
{
	uint8_t *f = (uint8_t *)t_icall_reg, bytes[ARCH_MAX_DISPLACED], before[ARCH_MAX_DISPLACED];
	uint8_t fill[SLOT];
	uint64_t site = (uint64_t)f + 5, copy = 0, back = 0, sp_add = 0;
	const uint64_t hs[] = {(uint64_t)h_sys_in};
	struct arch_site_plan plan;
	struct user_regs_struct regs;
	size_t len = 0;
	int status = 0, steps = 0;

	CHECK_EQ(arch_plan_mid_site(f, func_size(f), 0, (uint64_t)f, site, NULL, 0, NULL, &plan), 0,
		 "stopped: plan");
	if (plan.kind != ARCH_PATCH_JMP)
		return;
	uint64_t call_at = site + plan.insn_off[plan.ninsns - 1];
	uint8_t *tramp = near_mem + SLOT0 + SLOT * near_used++;
	CHECK_EQ(arch_emit_trampoline(&plan, (uint64_t)tramp, hs, 1, tramp, SLOT, &len), 0,
		 "stopped: emit");
	CHECK_EQ(arch_pc_into_trampoline(&plan, (uint64_t)tramp, 1, call_at, &copy), 0,
		 "stopped: the call in the copy");
	CHECK_EQ(arch_patch_bytes(&plan, (uint64_t)tramp, bytes), 0, "stopped: patch bytes");
	memcpy(before, (void *)site, plan.orig_len);
	CHECK_EQ(set_text_prot((uint8_t *)site, plan.orig_len, PROT_READ | PROT_WRITE | PROT_EXEC),
		 0, "mprotect RWX");
	memcpy((uint8_t *)site, bytes, plan.orig_len);

	pid_t pid = fork();
	if (pid == 0) {
		bool ok = true;
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (int i = 0; i < 100; i++)
			ok = ok && call_icall_reg(f) == 42;
		_exit(ok ? 0 : 1);
	}
	/* the parent's own code is unpatched again at once */
	memcpy((uint8_t *)site, before, plan.orig_len);
	CHECK_EQ(set_text_prot((uint8_t *)site, plan.orig_len, PROT_READ | PROT_EXEC), 0, "RX");
	CHECK(pid > 0, "fork");
	if (pid <= 0)
		return;
	CHECK(waitpid(pid, &status, 0) == pid && WIFSTOPPED(status), "stopped: the child stops");
	for (;;) {
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) || regs.rip == copy + 6 ||
		    ++steps > 1000000)
			break;
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) || waitpid(pid, &status, 0) != pid ||
		    !WIFSTOPPED(status))
			break;
	}
	CHECK(regs.rip == copy + 6, "stopped: reached the jmp after the push (%d steps)", steps);
	if (regs.rip == copy + 6) {
		uint64_t sp = regs.rsp;
		CHECK_EQ(
		    arch_pc_from_trampoline(&plan, (uint64_t)tramp, 1, regs.rip, &back, &sp_add), 0,
		    "stopped: out of the copy");
		regs.rip = back;
		regs.rsp += sp_add;
		CHECK(back == call_at && regs.rsp == sp + 8, "stopped: at the call, %%rsp + 8");
		CHECK_EQ(ptrace(PTRACE_SETREGS, pid, NULL, &regs), 0, "SETREGS");
		CHECK_EQ(poke(pid, site, before, plan.orig_len), 0, "restore the site");
		memset(fill, 0xcc, sizeof(fill));
		CHECK_EQ(poke(pid, (uint64_t)tramp, fill, sizeof(fill)), 0, "trampoline gone");
	}
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (regs.rip != back)
		kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "stopped: the child ran on (status 0x%x)", status);
}

static void exec_icall(void)
{
	uint8_t *reg = (uint8_t *)t_icall_reg, *rip = (uint8_t *)t_icall_rip;

	CHECK(reg[7] == 0x41 && reg[8] == 0xff && reg[9] == 0xd4, "t_icall_reg: call *%%r12");
	exec_icall_one("call *%r12", reg, (uint64_t)reg + 5, call_icall_reg);
	CHECK(rip[5] == 0xff && rip[6] == 0x15, "t_icall_rip: call *x(%%rip)");
	exec_icall_one("call *x(%rip)", rip, (uint64_t)rip + 4, call_icall_rip);
	exec_icall_stopped();
}

int main(void)
{
	near_mem = alloc_near((void *)t_work, SLOT0 + SLOT * NSLOTS);
	far_mem = alloc_far((void *)t_work, SLOT0 + SLOT * NSLOTS);
	CHECK(near_mem != NULL, "no memory near %p", (void *)t_work);
	CHECK(far_mem != NULL, "no memory far from %p", (void *)t_work);
	if (!near_mem || !far_mem)
		return check_summary("arch-exec");

	exec_work();
	exec_fib();
	exec_sum8();
	exec_rip_first();
	exec_wrap();
	exec_jle_first();
	exec_call_first();
	exec_chain();
	exec_handler_conv();
	exec_far();
	exec_sys_after();
	exec_icall();
	return check_summary("arch-exec");
}
