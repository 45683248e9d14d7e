/*
 * test_reloc.c - the x86-64 arch layer, bytes in and bytes out.
 *
 * Each case gives a function's bytes (with their disassembly), plans a
 * probe at its entry, and compares the plan, the trampoline and the patch
 * byte for byte with what was worked out by hand.  Addresses are fixed so
 * that every rel32 below can be checked with a calculator:
 *
 *   F   = 0x401000        the probed function
 *   T   = 0x410000        a trampoline near F
 *   H   = 0x420000        a handler near T
 *   FAR = 0x7f0000000000  beyond rel32 reach of all of them
 *
 * Every trampoline starts with the same register save and ends its head
 * with the same restore (tramp.c):
 *
 *   57 56 52 51 50 41 50 41 51 41 52 41 53   push rdi rsi rdx rcx rax r8 r9 r10 r11
 *   41 5b 41 5a 41 59 41 58 58 59 5a 5e 5f   pop  r11 r10 r9 r8 rax rcx rdx rsi rdi
 *
 * so with 0 handlers the relocated code starts at T+26 (0x1a), with one
 * handler at T+35 (0x23).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "attach/arch/arch.h"
#include "../check.h"

#define F 0x401000ull
#define T 0x410000ull
#define H 0x420000ull
#define FAR 0x7f0000000000ull

#define SAVE 0x57, 0x56, 0x52, 0x51, 0x50, 0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53
#define RESTORE 0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, 0x58, 0x59, 0x5a, 0x5e, 0x5f
#define CC4 0xcc, 0xcc, 0xcc, 0xcc

static uint8_t tbuf[1024];
static size_t tlen;

/* Plans at F with func_len = sizeof(code); the plan must be a JMP. */
static int plan_jmp(const uint8_t *code, size_t len, struct arch_site_plan *plan)
{
	int rc = arch_plan_site(code, len, F, F, plan);

	CHECK_EQ(rc, 0, "arch_plan_site");
	CHECK(plan->kind == ARCH_PATCH_JMP, "want a JMP plan, got INT3: %s", plan->why);
	return rc;
}

/*
 * The byte tables below were written for trampolines that call C handlers
 * (plan->c_abi: the nine-register save, SAVE/RESTORE); test_work_handlers()
 * checks the layout for probe code (abi.h's handler convention).
 */
static bool c_abi = true;

static const struct arch_site_plan *abi(const struct arch_site_plan *plan)
{
	static struct arch_site_plan p;

	p = *plan;
	p.c_abi = c_abi;
	return &p;
}

static int emit(const struct arch_site_plan *plan, uint64_t tramp, const uint64_t *h, int n)
{
	int rc;

	plan = abi(plan);

	memset(tbuf, 0, sizeof(tbuf));
	tlen = 0;
	rc = arch_emit_trampoline(plan, tramp, h, n, tbuf, sizeof(tbuf), &tlen);
	if (rc == 0)
		CHECK(tlen <= arch_trampoline_max(n), "len %zu > max %zu", tlen,
		      arch_trampoline_max(n));
	return rc;
}

static void map_into(const struct arch_site_plan *plan, uint64_t tramp, int n, uint64_t pc,
		     int want_rc, uint64_t want_pc)
{
	uint64_t got = 0;
	int rc = arch_pc_into_trampoline(abi(plan), tramp, n, pc, &got);

	CHECK(rc == want_rc && (rc || got == want_pc),
	      "into(0x%llx): rc %d pc 0x%llx, want %d 0x%llx", (unsigned long long)pc, rc,
	      (unsigned long long)got, want_rc, (unsigned long long)want_pc);
}

static void map_from_sp(const struct arch_site_plan *plan, uint64_t tramp, int n, uint64_t pc,
			int want_rc, uint64_t want_pc, uint64_t want_sp_add)
{
	uint64_t got = 0, sp_add = 0;
	int rc = arch_pc_from_trampoline(abi(plan), tramp, n, pc, &got, &sp_add);

	CHECK(rc == want_rc && (rc || (got == want_pc && sp_add == want_sp_add)),
	      "from(0x%llx): rc %d pc 0x%llx sp+%llu, want %d 0x%llx sp+%llu",
	      (unsigned long long)pc, rc, (unsigned long long)got, (unsigned long long)sp_add,
	      want_rc, (unsigned long long)want_pc, (unsigned long long)want_sp_add);
}

static void map_from(const struct arch_site_plan *plan, uint64_t tramp, int n, uint64_t pc,
		     int want_rc, uint64_t want_pc)
{
	map_from_sp(plan, tramp, n, pc, want_rc, want_pc, 0);
}

/* The byte tables below keep one instruction (or a few) per line. */
/* clang-format off */

/*
 * int work(int x) { return x * 3 + g; }  with g at 0x404000:
 *   F+0: 8d 04 7f              lea  (%rdi,%rdi,2),%eax
 *   F+3: 03 05 f7 2f 00 00     add  0x2ff7(%rip),%eax     # 0x404000
 *   F+9: c3                    ret
 * The 5 bytes split the add: both instructions move (9 bytes).
 */
static const uint8_t work_code[] = {0x8d, 0x04, 0x7f, 0x03, 0x05, 0xf7, 0x2f, 0x00, 0x00, 0xc3};

static void test_work(void)
{
	struct arch_site_plan plan;
	uint64_t h = H, far_h = FAR;
	uint8_t patch[ARCH_MAX_DISPLACED];
	/*
	 * T+0x00  save
	 * T+0x0d  48 89 e7             mov  %rsp,%rdi
	 * T+0x10  90                   nop
	 * T+0x11  e8 ea ff 00 00       call 0x420000              (0x420000 - 0x410016)
	 * T+0x16  restore
	 * T+0x23  8d 04 7f             lea  (%rdi,%rdi,2),%eax
	 * T+0x26  03 05 d4 3f ff ff    add  -0xc02c(%rip),%eax    # 0x404000 again
	 * T+0x2c  e9 d8 0f ff ff       jmp  0x401009              (F+9)
	 * T+0x31  cc x 7               padding up to the (empty) literal pool
	 */
	static const uint8_t want[] = {
		SAVE, 0x48, 0x89, 0xe7, 0x90, 0xe8, 0xea, 0xff, 0x00, 0x00, RESTORE,
		0x8d, 0x04, 0x7f, 0x03, 0x05, 0xd4, 0x3f, 0xff, 0xff, 0xe9, 0xd8, 0x0f, 0xff, 0xff,
		CC4, 0xcc, 0xcc, 0xcc,
	};
	/* Same with the handler out of reach: ff 15 22 00 00 00  call *0x38(%rip-relative pool) */
	static const uint8_t want_far_h[] = {
		SAVE, 0x48, 0x89, 0xe7, 0xff, 0x15, 0x22, 0x00, 0x00, 0x00, RESTORE,
		0x8d, 0x04, 0x7f, 0x03, 0x05, 0xd4, 0x3f, 0xff, 0xff, 0xe9, 0xd8, 0x0f, 0xff, 0xff,
		CC4, 0xcc, 0xcc, 0xcc,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, /* literal: FAR */
	};
	/* e9 fb ef 00 00  jmp 0x410000 (T - (F+5)), then int3 over the rest of the add */
	static const uint8_t want_patch[] = {0xe9, 0xfb, 0xef, 0x00, 0x00, 0xcc, 0xcc, 0xcc, 0xcc};

	if (plan_jmp(work_code, sizeof(work_code), &plan))
		return;
	CHECK_EQ(plan.orig_len, 9, "orig_len");
	CHECK_EQ(plan.ninsns, 2, "ninsns");
	CHECK(plan.insn_off[0] == 0 && plan.insn_off[1] == 3, "insn_off %d %d", plan.insn_off[0],
	      plan.insn_off[1]);
	CHECK(memcmp(plan.orig, work_code, 9) == 0, "orig bytes");

	CHECK_EQ(emit(&plan, T, &h, 1), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "work trampoline");
	CHECK_EQ(emit(&plan, T, &far_h, 1), 0, "emit, far handler");
	CHECK_BYTES(tbuf, tlen, want_far_h, sizeof(want_far_h), "work trampoline, far handler");

	CHECK_EQ(arch_patch_bytes(&plan, T, patch), 0, "patch");
	CHECK_BYTES(patch, (size_t)plan.orig_len, want_patch, sizeof(want_patch), "work patch");

	/* pc mapping both ways; the head (pushes, calls) is not part of the copy */
	map_into(&plan, T, 1, F + 3, 0, T + 0x26);
	map_into(&plan, T, 1, F, 0, T + 0x23);
	map_into(&plan, T, 1, F + 1, -ENOENT, 0); /* inside the lea */
	map_into(&plan, T, 1, F + 9, -ENOENT, 0); /* past the displaced bytes */
	map_from(&plan, T, 1, T + 0x23, 0, F);
	map_from(&plan, T, 1, T + 0x26, 0, F + 3);
	map_from(&plan, T, 1, T + 0x2c, 0, F + 9); /* at the jmp back */
	map_from(&plan, T, 1, T + 0x24, -ENOENT, 0);
	map_from(&plan, T, 1, T + 0x11, -ENOENT, 0); /* at the handler call */
	map_from(&plan, T, 1, T + 0x31, -ENOENT, 0);

	/* The add cannot reach 0x404000 from FAR: the whole site is out of range there. */
	CHECK_EQ(emit(&plan, FAR, &h, 1), -ERANGE, "emit at FAR");
	CHECK_EQ(arch_patch_bytes(&plan, FAR, patch), -ERANGE, "patch to FAR");

	/* A buffer one byte short. */
	CHECK_EQ(arch_emit_trampoline(abi(&plan), T, &h, 1, tbuf, sizeof(want) - 1, &tlen), -ENOSPC,
		  "emit into a short buffer");

	/* Unknown size: only the displaced instructions are decoded, still a JMP. */
	{
		uint8_t buf[ARCH_MAX_DISPLACED] = {0};

		memcpy(buf, work_code, sizeof(work_code));
		CHECK_EQ(arch_plan_site(buf, 0, F, F, &plan), 0, "plan, func_len 0");
		CHECK(plan.kind == ARCH_PATCH_JMP && plan.orig_len == 9, "func_len 0: kind %d len %d",
		      plan.kind, plan.orig_len);
	}
}

/* The same site with probe code as the handler: push %r11, calls, pop %r11. */
static void test_work_handlers(void)
{
	struct arch_site_plan plan;
	uint64_t h = H, far_h = FAR;
	/*
	 * T+0x00  41 53                push %r11
	 * T+0x02  90                   nop
	 * T+0x03  e8 f8 ff 00 00       call 0x420000              (0x420000 - 0x410008)
	 * T+0x08  41 5b                pop  %r11
	 * T+0x0a  8d 04 7f             lea  (%rdi,%rdi,2),%eax
	 * T+0x0d  03 05 ed 3f ff ff    add  -0xc013(%rip),%eax    # 0x404000
	 * T+0x13  e9 f1 0f ff ff       jmp  0x401009              (F+9)
	 */
	static const uint8_t want[] = {
		0x41, 0x53, 0x90, 0xe8, 0xf8, 0xff, 0x00, 0x00, 0x41, 0x5b,
		0x8d, 0x04, 0x7f, 0x03, 0x05, 0xed, 0x3f, 0xff, 0xff, 0xe9, 0xf1, 0x0f, 0xff, 0xff,
	};
	/* ff 15 10 00 00 00  call *0x18(%rip-relative pool) */
	static const uint8_t want_far_h[] = {
		0x41, 0x53, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00, 0x41, 0x5b,
		0x8d, 0x04, 0x7f, 0x03, 0x05, 0xed, 0x3f, 0xff, 0xff, 0xe9, 0xf1, 0x0f, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, /* literal: FAR */
	};

	if (plan_jmp(work_code, sizeof(work_code), &plan))
		return;
	c_abi = false;
	CHECK_EQ(emit(&plan, T, &h, 1), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "work trampoline for probe code");
	CHECK_EQ(emit(&plan, T, &far_h, 1), 0, "emit, far handler");
	CHECK_BYTES(tbuf, tlen, want_far_h, sizeof(want_far_h), "work trampoline for probe code, far handler");
	map_into(&plan, T, 1, F + 3, 0, T + 0x0d);
	map_into(&plan, T, 1, F, 0, T + 0x0a);
	map_from(&plan, T, 1, T + 0x0a, 0, F);
	map_from(&plan, T, 1, T + 0x0d, 0, F + 3);
	map_from(&plan, T, 1, T + 0x13, 0, F + 9);
	map_from(&plan, T, 1, T + 0x03, -ENOENT, 0); /* at the handler call */
	c_abi = true;
}

/*
 * The same trampoline with site ids (abi.h, "Site ids"): each call is
 * followed by nopl id(%rax), so the relocated copy starts 7 bytes later.
 *   T+0x00  41 53                    push %r11
 *   T+0x02  90 e8 f8 ff 00 00        nop; call 0x420000
 *   T+0x08  0f 1f 80 2a 00 00 00     nopl 0x2a(%rax)     site id 42
 *   T+0x0f  41 5b                    pop  %r11
 *   T+0x11  8d 04 7f                 lea  (%rdi,%rdi,2),%eax
 *   T+0x14  03 05 e6 3f ff ff        add  -0xc01a(%rip),%eax    # 0x404000
 *   T+0x1a  e9 ea 0f ff ff           jmp  0x401009              (F+9)
 *   T+0x1f  cc
 */
static void test_site_ids(void)
{
	struct arch_site_plan plan;
	uint64_t h = H;
	static const uint8_t want[] = {
		0x41, 0x53, 0x90, 0xe8, 0xf8, 0xff, 0x00, 0x00, 0x0f, 0x1f, 0x80, 0x2a, 0x00, 0x00, 0x00,
		0x41, 0x5b,
		0x8d, 0x04, 0x7f, 0x03, 0x05, 0xe6, 0x3f, 0xff, 0xff, 0xe9, 0xea, 0x0f, 0xff, 0xff,
		0xcc, /* to the (empty) pool's 8-byte alignment */
	};

	if (plan_jmp(work_code, sizeof(work_code), &plan))
		return;
	plan.call_ids = true;
	plan.call_id[0] = 42;
	c_abi = false;
	CHECK_EQ(emit(&plan, T, &h, 1), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "work trampoline with a site id");
	map_into(&plan, T, 1, F + 3, 0, T + 0x14);
	map_from(&plan, T, 1, T + 0x11, 0, F);
	map_from(&plan, T, 1, T + 0x1a, 0, F + 9);
	c_abi = true;
}

/*
 * Branches out of a function (arch_branches_out), and a jump plan that a
 * neighbour's branch turns into a breakpoint (arch_plan_to_int3):
 *   F+0:  48 8d 04 3f         lea  (%rdi,%rdi),%rax
 *   F+4:  74 02               je   F+8          (inside: not counted)
 *   F+6:  eb 0a               jmp  F+0x12       (just past the end: counted)
 *   F+8:  e8 f3 ff ff ff      call F+0          (own entry: not counted)
 *   F+13: e9 eb ef 00 00      jmp  0x40fffd     (counted)
 */
static void test_branches_out(void)
{
	static const uint8_t code[] = {
		0x48, 0x8d, 0x04, 0x3f,
		0x74, 0x02,
		0xeb, 0x0a,
		0xe8, 0xf3, 0xff, 0xff, 0xff,
		0xe9, 0xeb, 0xef, 0x00, 0x00,
	};
	uint64_t out[4];
	struct arch_site_plan plan;

	CHECK_EQ(arch_branches_out(code, sizeof(code), F, out, 4), 2, "two branches leave");
	CHECK_EQ(out[0], F + 0x12, "the short jmp past the end");
	CHECK_EQ(out[1], 0x40fffd, "the far jmp");
	CHECK_EQ(arch_branches_out(code, sizeof(code), F, out, 1), 2, "counted past max");
	if (plan_jmp(work_code, sizeof(work_code), &plan))
		return;
	arch_plan_to_int3(&plan, "entered at func+0x%x", 3);
	CHECK(plan.kind == ARCH_PATCH_INT3, "int3 plan");
	CHECK_EQ(plan.orig_len, 3, "the first instruction only");
	CHECK_EQ(plan.ninsns, 1, "one displaced instruction");
	CHECK(!strcmp(plan.why, "entered at func+0x3"), "why: %s", plan.why);
}

/*
 * A prologue built with -fcf-protection and frame pointers:
 *   F+0: f3 0f 1e fa  endbr64
 *   F+4: 55           push %rbp
 *   F+5: 48 89 e5     mov  %rsp,%rbp
 *   F+8: 5d           pop  %rbp
 *   F+9: c3           ret
 */
static void test_endbr(void)
{
	static const uint8_t code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3};
	/*
	 * T+0x1a  f3 0f 1e fa 55    endbr64; push %rbp
	 * T+0x1f  e9 e1 0f ff ff    jmp 0x401005
	 */
	static const uint8_t want[] = {
		SAVE, RESTORE, 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0xe9, 0xe1, 0x0f, 0xff, 0xff, CC4,
	};
	struct arch_site_plan plan;

	if (plan_jmp(code, sizeof(code), &plan))
		return;
	CHECK_EQ(plan.orig_len, 5, "orig_len");
	CHECK_EQ(plan.ninsns, 2, "ninsns");
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "endbr trampoline");
	map_into(&plan, T, 0, F + 4, 0, T + 0x1e);
	map_from(&plan, T, 0, T + 0x1e, 0, F + 4);
}

/*
 * gcc -O2 fib() without sibling-call optimisation starts:
 *   F+0: 83 ff 01     cmp  $0x1,%edi
 *   F+3: 7e 04        jle  0x401009
 *   F+5: 8d 47 ff     lea  -0x1(%rdi),%eax
 *   F+8: c3           ret
 *   F+9: 89 f8        mov  %edi,%eax
 *   F+b: c3           ret
 */
static void test_jle(void)
{
	static const uint8_t code[] = {0x83, 0xff, 0x01, 0x7e, 0x04, 0x8d, 0x47,
				       0xff, 0xc3, 0x89, 0xf8, 0xc3};
	/*
	 * T+0x1a  83 ff 01             cmp $0x1,%edi
	 * T+0x1d  0f 8e e6 0f ff ff    jle 0x401009        (rel8 widened to rel32)
	 * T+0x23  e9 dd 0f ff ff       jmp 0x401005
	 */
	static const uint8_t want[] = {
		SAVE, RESTORE, 0x83, 0xff, 0x01, 0x0f, 0x8e, 0xe6, 0x0f, 0xff, 0xff,
		0xe9, 0xdd, 0x0f, 0xff, 0xff,
	};
	/*
	 * At FAR nothing reaches F with a rel32:
	 * +0x1a  83 ff 01             cmp $0x1,%edi
	 * +0x1d  7f 06                jg  +0x25        (the inverse condition)
	 * +0x1f  ff 25 0b 00 00 00    jmp *0x30(pool)  # 0x401009
	 * +0x25  ff 25 0d 00 00 00    jmp *0x38(pool)  # 0x401005
	 * +0x2b  cc x 5, then the pool: 0x401009, 0x401005
	 */
	static const uint8_t want_far[] = {
		SAVE, RESTORE, 0x83, 0xff, 0x01, 0x7f, 0x06, 0xff, 0x25, 0x0b, 0x00, 0x00, 0x00,
		0xff, 0x25, 0x0d, 0x00, 0x00, 0x00, CC4, 0xcc,
		0x09, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x05, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct arch_site_plan plan;

	if (plan_jmp(code, sizeof(code), &plan))
		return;
	CHECK_EQ(plan.orig_len, 5, "orig_len");
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "jle trampoline");
	map_into(&plan, T, 0, F + 3, 0, T + 0x1d);
	map_from(&plan, T, 0, T + 0x1d, 0, F + 3);
	map_from(&plan, T, 0, T + 0x23, 0, F + 5);

	CHECK_EQ(emit(&plan, FAR, NULL, 0), 0, "emit at FAR");
	CHECK_BYTES(tbuf, tlen, want_far, sizeof(want_far), "jle trampoline at FAR");
	map_into(&plan, FAR, 0, F + 3, 0, FAR + 0x1d);
	map_from(&plan, FAR, 0, FAR + 0x1d, 0, F + 3); /* condition not evaluated yet */
	map_from(&plan, FAR, 0, FAR + 0x1f, 0, F + 9); /* taken: as good as at the target */
	map_from(&plan, FAR, 0, FAR + 0x25, 0, F + 5); /* not taken: at the jmp back */
}

/*
 * A call first (e.g. a function starting with a profiling hook):
 *   F+0: e8 fb 00 00 00   call 0x401100
 *   F+5: 83 c0 01         add  $0x1,%eax
 *   F+8: c3               ret
 */
static void test_call(void)
{
	static const uint8_t code[] = {0xe8, 0xfb, 0x00, 0x00, 0x00, 0x83, 0xc0, 0x01, 0xc3};
	/*
	 * T+0x1a  ff 35 10 00 00 00    push 0x30(pool)     # 0x401005, the ORIGINAL return
	 * T+0x20  e9 db 10 ff ff       jmp  0x401100       (the callee)
	 * T+0x25  e9 db 0f ff ff       jmp  0x401005       (not reached: the callee returns to F+5)
	 * T+0x2a  cc x 6, pool: 0x401005
	 */
	static const uint8_t want[] = {
		SAVE, RESTORE, 0xff, 0x35, 0x10, 0x00, 0x00, 0x00, 0xe9, 0xdb, 0x10, 0xff, 0xff,
		0xe9, 0xdb, 0x0f, 0xff, 0xff, CC4, 0xcc, 0xcc,
		0x05, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct arch_site_plan plan;

	if (plan_jmp(code, sizeof(code), &plan))
		return;
	CHECK_EQ(plan.orig_len, 5, "orig_len");
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "call trampoline");
	map_into(&plan, T, 0, F, 0, T + 0x1a);
	map_from(&plan, T, 0, T + 0x1a, 0, F);
	map_from(&plan, T, 0, T + 0x20, 0, F + 0x100); /* return address pushed: in the callee */
	map_from(&plan, T, 0, T + 0x25, 0, F + 5);
}

/*
 * An indirect call last among the displaced instructions: the copy pushes
 * the original return address and jumps through the same operand (ff /2
 * becomes ff /4, prefixes and REX kept).  With no handlers the copy
 * starts at T+0x1a, as in test_call().  code is [pre][call]; want_jmp is
 * the jmp expected after the 6-byte push.
 */
static void check_icall(const char *name, const uint8_t *code, size_t len, size_t call_off,
			const uint8_t *want_jmp, size_t jmp_len)
{
	uint8_t buf[64];
	struct arch_site_plan plan;
	uint64_t copy = 0, ret = 0;
	int32_t d;

	memset(buf, 0x90, sizeof(buf));
	memcpy(buf, code, len);
	buf[32] = 0xc3;
	if (plan_jmp(buf, 33, &plan))
		return;
	CHECK_EQ(plan.orig_len, (int)len, "%s: orig_len", name);
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "%s: emit", name);
	CHECK_EQ(arch_pc_into_trampoline(abi(&plan), T, 0, F + call_off, &copy), 0, "%s: into",
		 name);
	size_t o = copy - T;
	CHECK(tbuf[o] == 0xff && tbuf[o + 1] == 0x35, "%s: push lit(%%rip) at T+0x%zx", name, o);
	memcpy(&d, tbuf + o + 2, 4);
	if (o + 6 + (size_t)d + 8 <= tlen)
		memcpy(&ret, tbuf + o + 6 + d, 8);
	CHECK_EQ(ret, F + len, "%s: the pushed literal is the original return address", name);
	CHECK_BYTES(tbuf + o + 6, jmp_len, want_jmp, jmp_len, "%s: the jmp", name);
	CHECK(tbuf[o + 6 + jmp_len] == 0xe9, "%s: then the jmp back", name);
	map_from_sp(&plan, T, 0, copy, 0, F + call_off, 0);
	map_from_sp(&plan, T, 0, copy + 6, 0, F + call_off, 8); /* pushed, not jumped */
	map_from_sp(&plan, T, 0, copy + 6 + jmp_len, 0, F + len, 0);
}

static void test_icall(void)
{
	/* F+0: 48 89 f8  mov %rdi,%rax;  F+3: 41 ff d4  call *%r12 */
	static const uint8_t reg[] = {0x48, 0x89, 0xf8, 0x41, 0xff, 0xd4};
	static const uint8_t reg_jmp[] = {0x41, 0xff, 0xe4}; /* jmp *%r12 */
	/* F+3: ff 50 08  call *0x8(%rax) */
	static const uint8_t mem[] = {0x48, 0x89, 0xf8, 0xff, 0x50, 0x08};
	static const uint8_t mem_jmp[] = {0xff, 0x60, 0x08};
	/* F+3: 3e 43 ff 54 c5 10  notrack call *0x10(%r13,%r8,8) */
	static const uint8_t sib[] = {0x48, 0x89, 0xf8, 0x3e, 0x43, 0xff, 0x54, 0xc5, 0x10};
	static const uint8_t sib_jmp[] = {0x3e, 0x43, 0xff, 0x64, 0xc5, 0x10};
	/*
	 * F+0: ff 15 fa 0f 00 00  call *0x1000(%rip)  # F+0x1000
	 * copied at T+0x1a, the jmp at T+0x20 ends at T+0x26:
	 * ff 25 [F+0x1000 - (T+0x26)] = ff 25 da 1f ff ff
	 */
	static const uint8_t rip[] = {0xff, 0x15, 0xfa, 0x0f, 0x00, 0x00};
	static const uint8_t rip_jmp[] = {0xff, 0x25, 0xda, 0x1f, 0xff, 0xff};

	CHECK_EQ(F + 0x1000 - (T + 0x26), (uint64_t)(int64_t)(int32_t)0xffff1fda, "rip disp");
	check_icall("call *%r12", reg, sizeof(reg), 3, reg_jmp, sizeof(reg_jmp));
	check_icall("call *8(%rax)", mem, sizeof(mem), 3, mem_jmp, sizeof(mem_jmp));
	check_icall("notrack call *16(%r13,%r8,8)", sib, sizeof(sib), 3, sib_jmp, sizeof(sib_jmp));
	check_icall("call *x(%rip)", rip, sizeof(rip), 0, rip_jmp, sizeof(rip_jmp));
}

/* Indirect calls the copy cannot make exactly: int3, and why. */
static void test_icall_refused(void)
{
	static const struct {
		const char *name;
		uint8_t code[8];
		const char *why;
	} cases[] = {
	    {"call *(%rsp)", {0x48, 0x89, 0xf8, 0xff, 0x14, 0x24}, "call at func+0x3 cannot be relocated: its operand reads %rsp"},
	    {"call *8(%rsp)", {0x48, 0x89, 0xf8, 0xff, 0x54, 0x24, 0x08}, "call at func+0x3 cannot be relocated: its operand reads %rsp"},
	    {"call *(%esp)", {0x48, 0x89, 0xf8, 0x67, 0xff, 0x14, 0x24}, "call at func+0x3 cannot be relocated: its operand reads %rsp"},
	    {"call *%rsp", {0x48, 0x89, 0xf8, 0xff, 0xd4}, "call at func+0x3 cannot be relocated: its operand reads %rsp"},
	    {"lcall *(%rax)", {0x48, 0x89, 0xf8, 0xff, 0x18}, "call at func+0x3 cannot be relocated: a far call"},
	    {"callw *%ax", {0x48, 0x89, 0xf8, 0x66, 0xff, 0xd0}, "call at func+0x3 cannot be relocated: an indirect call with an operand-size prefix"},
	    {"call *%rax; mov", {0xff, 0xd0, 0x48, 0x89, 0xf8}, "the call at func+0x0 returns to func+0x2, inside the patched bytes"},
	};
	struct arch_site_plan plan;
	uint8_t buf[40];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 0x90, sizeof(buf));
		memcpy(buf, cases[i].code, sizeof(cases[i].code));
		buf[39] = 0xc3;
		CHECK_EQ(arch_plan_site(buf, sizeof(buf), F, F, &plan), 0, "plan %s", cases[i].name);
		CHECK(plan.kind == ARCH_PATCH_INT3 &&
			  strncmp(plan.why, cases[i].why, strlen(cases[i].why)) == 0,
		      "%s: kind %d why: %s", cases[i].name, plan.kind, plan.why);
	}
}

/*
 * A tail call (gcc -O2 `int wrap(int x){return work(x+1);}`):
 *   F+0: 83 c7 01          add $0x1,%edi
 *   F+3: e9 40 ff ff ff    jmp 0x400f48
 */
static void test_tail_jmp(void)
{
	static const uint8_t code[] = {0x83, 0xc7, 0x01, 0xe9, 0x40, 0xff, 0xff, 0xff};
	/*
	 * T+0x1a  83 c7 01          add $0x1,%edi
	 * T+0x1d  e9 26 0f ff ff    jmp 0x400f48
	 * T+0x22  e9 e1 0f ff ff    jmp 0x401008
	 */
	static const uint8_t want[] = {
		SAVE, RESTORE, 0x83, 0xc7, 0x01, 0xe9, 0x26, 0x0f, 0xff, 0xff,
		0xe9, 0xe1, 0x0f, 0xff, 0xff, 0xcc,
	};
	/*
	 * +0x1d  ff 25 0d 00 00 00   jmp *0x30(pool)  # 0x400f48
	 * +0x23  ff 25 0f 00 00 00   jmp *0x38(pool)  # 0x401008
	 */
	static const uint8_t want_far[] = {
		SAVE, RESTORE, 0x83, 0xc7, 0x01, 0xff, 0x25, 0x0d, 0x00, 0x00, 0x00,
		0xff, 0x25, 0x0f, 0x00, 0x00, 0x00, CC4, 0xcc, 0xcc, 0xcc,
		0x48, 0x0f, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x08, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct arch_site_plan plan;

	if (plan_jmp(code, sizeof(code), &plan))
		return;
	CHECK_EQ(plan.orig_len, 8, "orig_len");
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "tail-call trampoline");
	CHECK_EQ(emit(&plan, FAR, NULL, 0), 0, "emit at FAR");
	CHECK_BYTES(tbuf, tlen, want_far, sizeof(want_far), "tail-call trampoline at FAR");
}

/*
 * A loop whose back edge lands on byte 3, inside the 5 patched bytes:
 *   F+0: 8d 04 3f   lea (%rdi,%rdi,1),%eax
 *   F+3: ff c8      dec %eax             <- jg lands here
 *   F+5: 85 c0      test %eax,%eax
 *   F+7: 7f fa      jg  0x401003
 *   F+9: c3         ret
 * The same function with the back edge at F+5 (the end of the patch) or
 * at F (the site itself) is fine.
 */
static void test_branch_inside(void)
{
	uint8_t code[] = {0x8d, 0x04, 0x3f, 0xff, 0xc8, 0x85, 0xc0, 0x7f, 0xfa, 0xc3};
	static const uint8_t want_patch[] = {0xcc, 0x04, 0x3f};
	/* The int3 plan's out-of-line copy: the lea, then jmp 0x401003. */
	static const uint8_t want[] = {
		SAVE, RESTORE, 0x8d, 0x04, 0x3f, 0xe9, 0xe1, 0x0f, 0xff, 0xff, CC4, 0xcc, 0xcc,
	};
	struct arch_site_plan plan;
	uint8_t patch[ARCH_MAX_DISPLACED];

	CHECK_EQ(arch_plan_site(code, sizeof(code), F, F, &plan), 0, "plan");
	CHECK(plan.kind == ARCH_PATCH_INT3, "want INT3");
	CHECK(strcmp(plan.why, "branch at func+0x7 targets func+0x3, inside the 5 patched bytes") == 0,
	      "why: %s", plan.why);
	CHECK_EQ(plan.orig_len, 3, "int3 orig_len (the first instruction)");
	CHECK_EQ(plan.ninsns, 1, "int3 ninsns");
	CHECK_EQ(arch_patch_bytes(&plan, T, patch), 0, "int3 patch");
	CHECK_BYTES(patch, (size_t)plan.orig_len, want_patch, sizeof(want_patch), "int3 patch");
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit the out-of-line copy");
	CHECK_BYTES(tbuf, tlen, want, sizeof(want), "int3 out-of-line copy");
	map_into(&plan, T, 0, F, 0, T + 0x1a);

	code[8] = 0xfc; /* jg 0x401005 */
	plan_jmp(code, sizeof(code), &plan);
	code[8] = 0xf7; /* jg 0x401000 */
	plan_jmp(code, sizeof(code), &plan);
}

/* Instructions that cannot move: the plan falls back to int3 and says which. */
static void test_refused(void)
{
	/*
	 *   F+0: e3 05   jrcxz 0x401007
	 *   F+2: 31 c0   xor %eax,%eax
	 *   F+4: ff c0   inc %eax
	 *   F+6: c3      ret
	 *   F+7: c3      ret
	 */
	static const uint8_t jrcxz[] = {0xe3, 0x05, 0x31, 0xc0, 0xff, 0xc0, 0xc3, 0xc3};
	/*
	 *   F+0: 31 c0   xor %eax,%eax
	 *   F+2: ff c0   inc %eax
	 *   F+4: e2 fc   loop 0x401002
	 *   F+6: c3      ret
	 */
	static const uint8_t loop[] = {0x31, 0xc0, 0xff, 0xc0, 0xe2, 0xfc, 0xc3};
	/*   F+0: c7 f8 fa 00 00 00   xbegin 0x401100 */
	static const uint8_t xbegin[] = {0xc7, 0xf8, 0xfa, 0x00, 0x00, 0x00, 0xc3};
	/*   F+0: 8d 04 7f  lea; F+3: cc  int3 (someone's breakpoint); F+4: 90 nop; F+5: c3 */
	static const uint8_t int3[] = {0x8d, 0x04, 0x7f, 0xcc, 0x90, 0xc3};
	/*   F+0: 66 e9 10 00   jmpw (operand-size prefix) */
	static const uint8_t jmpw[] = {0x66, 0xe9, 0x10, 0x00, 0x90, 0x90, 0xc3};
	/*   F+0: 67 8b 05 00 10 00 00   addr32 mov 0x1000(%eip),%eax */
	static const uint8_t eip[] = {0x67, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0xc3};
	struct arch_site_plan plan;

	CHECK_EQ(arch_plan_site(jrcxz, sizeof(jrcxz), F, F, &plan), 0, "plan jrcxz");
	CHECK(plan.kind == ARCH_PATCH_INT3 && plan.orig_len == 2, "jrcxz: kind %d len %d", plan.kind,
	      plan.orig_len);
	CHECK(strcmp(plan.why, "jrcxz at func+0x0 cannot be relocated: it has only a rel8 form, "
			       "which cannot reach back from a trampoline") == 0,
	      "why: %s", plan.why);
	CHECK_EQ(emit(&plan, T, NULL, 0), -ENOTSUP, "emit jrcxz");

	CHECK_EQ(arch_plan_site(loop, sizeof(loop), F, F, &plan), 0, "plan loop");
	CHECK(plan.kind == ARCH_PATCH_INT3 && plan.orig_len == 2, "loop: kind %d len %d", plan.kind,
	      plan.orig_len);
	CHECK(strncmp(plan.why, "loop at func+0x4 cannot be relocated", 36) == 0, "why: %s", plan.why);
	CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit loop's out-of-line xor");

	CHECK_EQ(arch_plan_site(xbegin, sizeof(xbegin), F, F, &plan), 0, "plan xbegin");
	CHECK(plan.kind == ARCH_PATCH_INT3 && strncmp(plan.why, "xbegin at func+0x0", 18) == 0,
	      "why: %s", plan.why);

	CHECK_EQ(arch_plan_site(int3, sizeof(int3), F, F, &plan), 0, "plan int3");
	CHECK(plan.kind == ARCH_PATCH_INT3 && strncmp(plan.why, "int3 at func+0x3", 16) == 0,
	      "why: %s", plan.why);

	CHECK_EQ(arch_plan_site(jmpw, sizeof(jmpw), F, F, &plan), 0, "plan jmpw");
	CHECK(plan.kind == ARCH_PATCH_INT3, "jmpw: %s", plan.why);

	CHECK_EQ(arch_plan_site(eip, sizeof(eip), F, F, &plan), 0, "plan eip");
	CHECK(plan.kind == ARCH_PATCH_INT3, "eip-relative: %s", plan.why);
}

/* RIP-relative operands in every encoding keep their data address. */
static void test_riprel_encodings(void)
{
	/*   F+0: c5 fd 6f 05 d4 0f 00 00   vmovdqa 0xfd4(%rip),%ymm0   # 0x401fdc (VEX) */
	static const uint8_t vex[] = {0xc5, 0xfd, 0x6f, 0x05, 0xd4, 0x0f, 0x00, 0x00, 0xc3};
	/*   T+0x1a: c5 fd 6f 05 ba 1f ff ff   vmovdqa -0xe046(%rip),%ymm0   # 0x401fdc */
	static const uint8_t vex_want[] = {
		SAVE, RESTORE, 0xc5, 0xfd, 0x6f, 0x05, 0xba, 0x1f, 0xff, 0xff,
		0xe9, 0xe1, 0x0f, 0xff, 0xff, 0xcc,
	};
	/*   F+0: 62 f1 7c 48 28 05 d2 0f 00 00   vmovaps 0xfd2(%rip),%zmm0   # 0x401fdc (EVEX) */
	static const uint8_t evex[] = {0x62, 0xf1, 0x7c, 0x48, 0x28, 0x05, 0xd2, 0x0f, 0x00, 0x00, 0xc3};
	static const uint8_t evex_want[] = {
		SAVE, RESTORE, 0x62, 0xf1, 0x7c, 0x48, 0x28, 0x05, 0xb8, 0x1f, 0xff, 0xff,
		0xe9, 0xe1, 0x0f, 0xff, 0xff, CC4, 0xcc, 0xcc, 0xcc,
	};
	/*   F+0: 83 3d d9 0f 00 00 05   cmpl $0x5,0xfd9(%rip)   # 0x401fe0 (immediate after disp) */
	static const uint8_t cmpl[] = {0x83, 0x3d, 0xd9, 0x0f, 0x00, 0x00, 0x05, 0xc3};
	static const uint8_t cmpl_want[] = {
		SAVE, RESTORE, 0x83, 0x3d, 0xbf, 0x1f, 0xff, 0xff, 0x05,
		0xe9, 0xe1, 0x0f, 0xff, 0xff, 0xcc, 0xcc,
	};
	/*   F+0: c4 e3 6d 4a 1d d2 0f 00 00 40   vblendvps %ymm4,0xfd2(%rip),%ymm2,%ymm3 (is4) */
	static const uint8_t blend[] = {0xc4, 0xe3, 0x6d, 0x4a, 0x1d, 0xd2, 0x0f, 0x00, 0x00, 0x40, 0xc3};
	static const uint8_t blend_want[] = {
		SAVE, RESTORE, 0xc4, 0xe3, 0x6d, 0x4a, 0x1d, 0xb8, 0x1f, 0xff, 0xff, 0x40,
		0xe9, 0xe1, 0x0f, 0xff, 0xff, CC4, 0xcc, 0xcc, 0xcc,
	};
	struct arch_site_plan plan;

	if (plan_jmp(vex, sizeof(vex), &plan) == 0) {
		CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit vex");
		CHECK_BYTES(tbuf, tlen, vex_want, sizeof(vex_want), "vex trampoline");
		CHECK_EQ(emit(&plan, FAR, NULL, 0), -ERANGE, "vex at FAR");
	}
	if (plan_jmp(evex, sizeof(evex), &plan) == 0) {
		CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit evex");
		CHECK_BYTES(tbuf, tlen, evex_want, sizeof(evex_want), "evex trampoline");
		CHECK_EQ(emit(&plan, FAR, NULL, 0), -ERANGE, "evex at FAR");
	}
	if (plan_jmp(cmpl, sizeof(cmpl), &plan) == 0) {
		CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit cmpl");
		CHECK_BYTES(tbuf, tlen, cmpl_want, sizeof(cmpl_want), "cmpl trampoline");
	}
	if (plan_jmp(blend, sizeof(blend), &plan) == 0) {
		CHECK_EQ(emit(&plan, T, NULL, 0), 0, "emit vblendvps");
		CHECK_BYTES(tbuf, tlen, blend_want, sizeof(blend_want), "vblendvps trampoline");
	}
}

/* Sites that cannot be planned, or only with int3. */
static void test_plan_edges(void)
{
	static const uint8_t ret[] = {0xc3};
	static const uint8_t short3[] = {0x31, 0xc0, 0xc3};
	/* 06 is not an instruction in 64-bit mode (push %es) */
	static const uint8_t bad_first[] = {0x06, 0x90, 0x90, 0x90, 0x90, 0x90};
	/* work, then an undecodable byte in the middle of the function */
	static const uint8_t bad_later[] = {0x8d, 0x04, 0x7f, 0x03, 0x05, 0xf7, 0x2f, 0x00, 0x00,
					    0xc3, 0x06, 0x90, 0x90, 0xc3};
	struct arch_site_plan plan;

	CHECK_EQ(arch_plan_site(work_code, sizeof(work_code), F, F + 3, &plan), -ENOTSUP,
		  "mid-function site");
	CHECK_EQ(arch_plan_site(bad_first, sizeof(bad_first), F, F, &plan), -EINVAL,
		  "undecodable first instruction");

	CHECK_EQ(arch_plan_site(ret, sizeof(ret), F, F, &plan), 0, "plan 1-byte function");
	CHECK(plan.kind == ARCH_PATCH_INT3 && plan.orig_len == 1 &&
		      strcmp(plan.why, "the function is 1 bytes long, too short for the 5-byte jmp") == 0,
	      "1-byte function: kind %d len %d why %s", plan.kind, plan.orig_len, plan.why);
	CHECK_EQ(arch_plan_site(short3, sizeof(short3), F, F, &plan), 0, "plan 3-byte function");
	CHECK(plan.kind == ARCH_PATCH_INT3 && plan.orig_len == 2, "3-byte function: %s", plan.why);

	/*
	 * lea (%rdi,%rdi,2),%eax; ret  then alignment fill  nopl 0x0(%rax); int3...
	 * 8d 04 7f c3 | 0f 1f 40 00 cc cc
	 * The fill after the ret is never executed: the jmp may cover it.
	 */
	static const uint8_t tiny[] = {0x8d, 0x04, 0x7f, 0xc3, 0x0f, 0x1f, 0x40, 0x00, 0xcc, 0xcc};
	CHECK_EQ(arch_plan_site_padded(tiny, 4, 6, F, F, &plan), 0, "plan 4-byte function + fill");
	CHECK(plan.kind == ARCH_PATCH_JMP && plan.orig_len == 5 && plan.ninsns == 2,
	      "4-byte function over fill: kind %d len %d n %d (%s)", plan.kind, plan.orig_len,
	      plan.ninsns, plan.why);
	uint8_t tbuf[256];
	size_t tlen;
	uint64_t h = F + 0x1000;
	CHECK_EQ(arch_emit_trampoline(&plan, F + 0x100, &h, 1, tbuf, sizeof(tbuf), &tlen), 0,
		  "trampoline over fill");
	CHECK_EQ(arch_plan_site_padded(tiny, 4, 0, F, F, &plan), 0, "no fill allowed");
	CHECK(plan.kind == ARCH_PATCH_INT3, "without fill the 4-byte function needs int3");
	/* lea; ret followed by code, not fill: refused */
	static const uint8_t tiny_code[] = {0x8d, 0x04, 0x7f, 0xc3, 0x55, 0x48, 0x89, 0xe5};
	CHECK_EQ(arch_plan_site_padded(tiny_code, 4, 4, F, F, &plan), 0, "plan before code");
	CHECK(plan.kind == ARCH_PATCH_INT3, "bytes after the ret are code: int3");
	/* a 4-byte function whose last instruction falls through cannot use fill */
	static const uint8_t falls[] = {0x8d, 0x04, 0x7f, 0x90, 0x90, 0x90, 0x90, 0x90};
	CHECK_EQ(arch_plan_site_padded(falls, 4, 4, F, F, &plan), 0, "plan fall-through");
	CHECK(plan.kind == ARCH_PATCH_INT3, "last instruction falls through: int3");

	CHECK_EQ(arch_plan_site(bad_later, sizeof(bad_later), F, F, &plan), 0, "plan bad_later");
	CHECK(plan.kind == ARCH_PATCH_INT3 && strncmp(plan.why, "cannot decode func+0xa", 22) == 0,
	      "why: %s", plan.why);
}

static void test_window(void)
{
	uint64_t lo, hi;

	arch_near_window(0x555555554000ull, &lo, &hi);
	CHECK(lo < 0x555555554000ull && hi > 0x555555554000ull, "window around a PIE");
	CHECK(0x555555554000ull - lo < (1ull << 31) && hi - 0x555555554000ull < (1ull << 31),
	      "window within rel32 reach: [0x%llx, 0x%llx)", (unsigned long long)lo,
	      (unsigned long long)hi);
	arch_near_window(0x401000, &lo, &hi);
	CHECK(lo >= 0x10000 && hi > 0x401000, "window near 0 clamps: lo 0x%llx",
	      (unsigned long long)lo);
	arch_near_window(0x7ffff7fc0000ull, &lo, &hi);
	CHECK(hi <= (1ull << 47), "window near the top clamps: hi 0x%llx", (unsigned long long)hi);
}

/*
 * arch_copies_return (retaddr.c): which functions a return probe refuses,
 * because they keep their own return address to return through it again.
 * Each case's assembly is in its comment; F+k is where it lives.
 */
static void test_copies_return(void)
{
	/* __sigsetjmp: the caller's sp after the return, and the return
	 * address, into the jmp_buf:
	 *   mov %rbx,(%rdi); mov %rbp,%rax; mov %rax,0x8(%rdi)
	 *   lea 0x8(%rsp),%rdx; mov %rdx,0x30(%rdi)
	 *   mov (%rsp),%rax; mov %rax,0x38(%rdi); ret */
	static const uint8_t sigsetjmp[] = {0x48, 0x89, 0x1f, 0x48, 0x89, 0xe8, 0x48, 0x89, 0x47,
					    0x08, 0x48, 0x8d, 0x54, 0x24, 0x08, 0x48, 0x89, 0x57,
					    0x30, 0x48, 0x8b, 0x04, 0x24, 0x48, 0x89, 0x47, 0x38, 0xc3};
	/* vfork: pop %rdi; mov $0x3a,%eax; syscall; push %rdi; ret */
	static const uint8_t vfork[] = {0x5f, 0xb8, 0x3a, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x57, 0xc3};
	/* setjmp: mov $1,%esi; jmp F+0x100 (a tail jump: scan the target next) */
	static const uint8_t setjmp[] = {0xbe, 0x01, 0x00, 0x00, 0x00, 0xe9, 0xf6, 0x00, 0x00, 0x00};
	/* dlsym: only reads its return address (the caller's object):
	 *   push %rbp; push %rbx; sub $0x38,%rsp; mov 0x48(%rsp),%rdx
	 *   call F; add $0x38,%rsp; pop %rbx; pop %rbp; ret */
	static const uint8_t dlsym[] = {0x55, 0x53, 0x48, 0x83, 0xec, 0x38, 0x48, 0x8b, 0x54, 0x24,
					0x48, 0xe8, 0xf0, 0xff, 0xff, 0xff, 0x48, 0x83, 0xc4, 0x38,
					0x5b, 0x5d, 0xc3};
	/* printf's va_start: only the address above the slot (the stack arguments):
	 *   sub $0xd8,%rsp; lea 0xe0(%rsp),%rax; mov %rax,0x10(%rsp)
	 *   add $0xd8,%rsp; ret */
	static const uint8_t varargs[] = {0x48, 0x81, 0xec, 0xd8, 0x00, 0x00, 0x00, 0x48, 0x8d,
					  0x84, 0x24, 0xe0, 0x00, 0x00, 0x00, 0x48, 0x89, 0x44,
					  0x24, 0x10, 0x48, 0x81, 0xc4, 0xd8, 0x00, 0x00, 0x00, 0xc3};
	/* boost's jump_fcontext: switches %rsp and reads the other side's slot:
	 *   lea -0x38(%rsp),%rsp; mov %r12,0x10(%rsp); mov %rsp,%rax
	 *   mov %rdi,%rsp; mov 0x38(%rsp),%r8; lea 0x40(%rsp),%rsp; jmp *%r8 */
	static const uint8_t fcontext[] = {0x48, 0x8d, 0x64, 0x24, 0xc8, 0x4c, 0x89, 0x64, 0x24,
					   0x10, 0x48, 0x89, 0xe0, 0x48, 0x89, 0xfc, 0x4c, 0x8b,
					   0x44, 0x24, 0x38, 0x48, 0x8d, 0x64, 0x24, 0x40, 0x41,
					   0xff, 0xe0};
	/* a frame first: push %rbp; sub $0x10,%rsp; lea 0x20(%rsp),%rdx
	 *   mov 0x18(%rsp),%rax; ret */
	static const uint8_t deep[] = {0x55, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8d, 0x54,
				       0x24, 0x20, 0x48, 0x8b, 0x44, 0x24, 0x18, 0xc3};
	static const struct {
		const char *name;
		const uint8_t *code;
		size_t len;
		int want;
		uint64_t next;
	} cases[] = {
		{"sigsetjmp", sigsetjmp, sizeof(sigsetjmp), 1, 0},
		{"vfork", vfork, sizeof(vfork), 1, 0},
		{"setjmp", setjmp, sizeof(setjmp), 0, F + 0x100},
		{"dlsym", dlsym, sizeof(dlsym), 0, 0},
		{"varargs", varargs, sizeof(varargs), 0, 0},
		{"jump_fcontext", fcontext, sizeof(fcontext), 0, 0},
		{"deep", deep, sizeof(deep), 1, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t next = 1;
		int got = arch_copies_return(cases[i].code, cases[i].len, F, &next);
		CHECK(got == cases[i].want && next == cases[i].next, "%s: got %d next 0x%llx",
		      cases[i].name, got, (unsigned long long)next);
	}
}

/* clang-format on */

int main(void)
{
	test_work();
	test_work_handlers();
	test_site_ids();
	test_branches_out();
	test_endbr();
	test_jle();
	test_call();
	test_icall();
	test_icall_refused();
	test_tail_jmp();
	test_branch_inside();
	test_refused();
	test_riprel_encodings();
	test_plan_edges();
	test_window();
	test_copies_return();
	return check_summary("arch");
}
