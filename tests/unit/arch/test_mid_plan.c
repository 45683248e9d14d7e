/*
 * test_mid_plan.c - planning mid-function sites (arch_plan_mid_site) where
 * the whole-function branch check meets a switch's jump table (jtab.c).
 *
 * Each case is a function's bytes (assembled by GNU as; the disassembly is
 * beside them), a fake memory holding its jump table, and the plan wanted
 * at a site inside it: a jump where every target of the table is proven
 * and none lands inside the patched bytes, else a breakpoint whose reason
 * names what was not proven.  F is the function's address; the table's
 * entries are written into `mem` at the address the code names.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../check.h"
#include "attach/arch/arch.h"
#include "runtime/abi.h"

#define F 0x400000ull

/* One fake memory: [base, base + len) readable. */
struct fake {
	uint64_t base;
	uint8_t bytes[4096];
	size_t len;
	int reads;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *m = ctx;
	m->reads++;
	if (addr < m->base || addr + len > m->base + m->len)
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return 0;
}

/* Relative entries (int32 from the table) for targets F + offs[i]. */
static void rel_table(struct fake *m, uint64_t table, const uint32_t *offs, int n)
{
	m->base = table;
	m->len = 4 * (size_t)n;
	for (int i = 0; i < n; i++) {
		int32_t e = (int32_t)(F + offs[i] - table);
		memcpy(m->bytes + 4 * i, &e, 4);
	}
}

static void abs_table(struct fake *m, uint64_t table, uint64_t func, const uint32_t *offs, int n)
{
	m->base = table;
	m->len = 8 * (size_t)n;
	for (int i = 0; i < n; i++) {
		uint64_t e = func + offs[i];
		memcpy(m->bytes + 8 * i, &e, 8);
	}
}

/* clang-format off */
/*
 *  0: 83 ff 03             cmp    $0x3,%edi
 *  3: 77 1f                ja     24
 *  5: 89 ff                mov    %edi,%edi
 *  7: 48 8d 15 00 10 00 00 lea    0x1000(%rip),%rdx      table at F+0x100e
 *  e: 48 63 04 ba          movslq (%rdx,%rdi,4),%rax
 * 12: 48 01 d0             add    %rdx,%rax
 * 15: ff e0                jmp    *%rax
 * 17: 90                   nop                            the probe site
 * 18: b8 01 00 00 00       mov    $0x1,%eax
 * 1d: c3                   ret
 * 1e: b8 02 00 00 00       mov    $0x2,%eax
 * 23: c3                   ret
 * 24: 31 c0                xor    %eax,%eax
 * 26: c3                   ret
 */
static const uint8_t pic[] = {
	0x83, 0xff, 0x03, 0x77, 0x1f, 0x89, 0xff, 0x48, 0x8d, 0x15, 0x00, 0x10, 0x00, 0x00,
	0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0x90, 0xb8, 0x01, 0x00, 0x00,
	0x00, 0xc3, 0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3,
};
#define PIC_TABLE (F + 0x100e)
#define PIC_SITE (F + 0x17)

/*
 * non-PIC:
 *  0: 83 ff 03             cmp    $0x3,%edi
 *  3: 77 10                ja     15
 *  5: 89 ff                mov    %edi,%edi
 *  7: ff 24 fd 00 10 40 00 jmp    *0x401000(,%rdi,8)
 *  e: 90                   nop                            the probe site
 *  f: b8 01 00 00 00       mov    $0x1,%eax
 * 14: c3                   ret
 * 15: 31 c0                xor    %eax,%eax
 * 17: c3                   ret
 */
static const uint8_t nopic[] = {
	0x83, 0xff, 0x03, 0x77, 0x10, 0x89, 0xff, 0xff, 0x24, 0xfd, 0x00, 0x10, 0x40, 0x00,
	0x90, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3,
};

/*
 * A computed goto (CPython's dispatch): the byte bounds the index.
 *  0: 40 0f b6 c7          movzbl %dil,%eax
 *  4: 48 8b 04 c5 00 20 40 00  mov 0x402000(,%rax,8),%rax
 *  c: 48 89 dd             mov    %rbx,%rbp
 *  f: ff e0                jmp    *%rax
 * 11: 90                   nop                            the probe site
 * 12: b8 01 00 00 00       mov    $0x1,%eax
 * 17: c3                   ret
 */
static const uint8_t cgoto[] = {
	0x40, 0x0f, 0xb6, 0xc7, 0x48, 0x8b, 0x04, 0xc5, 0x00, 0x20, 0x40, 0x00,
	0x48, 0x89, 0xdd, 0xff, 0xe0, 0x90, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3,
};
/* clang-format on */

static struct arch_site_plan plan;

static int plan_at(const uint8_t *code, size_t len, uint64_t site, struct fake *m)
{
	struct arch_mem mem = {fake_read, m};
	memset(&plan, 0, sizeof(plan));
	return arch_plan_mid_site(code, len, 0, F, site, NULL, 0, m ? &mem : NULL, &plan);
}

#define WANT_JMP(name)                                                                             \
	CHECK(plan.kind == ARCH_PATCH_JMP, "%s: want a jump, got a breakpoint: %s", name, plan.why)
#define WANT_INT3(name, reason)                                                                    \
	do {                                                                                       \
		CHECK(plan.kind == ARCH_PATCH_INT3, "%s: want a breakpoint", name);                \
		CHECK(strstr(plan.why, reason) != NULL, "%s: why: %s", name, plan.why);            \
	} while (0)

static void test_pic(void)
{
	struct fake m = {0};
	uint8_t code[sizeof(pic)];

	/* cases at the site itself (fine: the probe fires again), and after the patch */
	rel_table(&m, PIC_TABLE, (const uint32_t[]){0x17, 0x1e, 0x24, 0x1e}, 4);
	CHECK_EQ(plan_at(pic, sizeof(pic), PIC_SITE, &m), 0, "pic");
	WANT_JMP("pic");
	CHECK_EQ(plan.orig_len, 6, "pic: nop + mov displaced");

	/* only 4 entries are read (cmp $3; ja): a fifth one inside the patch is not the table's */
	rel_table(&m, PIC_TABLE, (const uint32_t[]){0x17, 0x1e, 0x24, 0x1e, 0x18}, 5);
	CHECK_EQ(plan_at(pic, sizeof(pic), PIC_SITE, &m), 0, "pic, 5th entry");
	WANT_JMP("pic, entry past the bound");

	/* a case starting inside the patched bytes */
	rel_table(&m, PIC_TABLE, (const uint32_t[]){0x17, 0x18, 0x24, 0x1e}, 4);
	CHECK_EQ(plan_at(pic, sizeof(pic), PIC_SITE, &m), 0, "pic, case inside");
	WANT_INT3("pic, case inside", "entry 1 of the jump table at 0x40100e (jmp at func+0x15) "
				      "targets func+0x18, inside the 6 patched bytes");

	/* an entry that is no instruction boundary: the table was misread */
	rel_table(&m, PIC_TABLE, (const uint32_t[]){0x17, 0x1e, 0x19, 0x1e}, 4);
	CHECK_EQ(plan_at(pic, sizeof(pic), PIC_SITE, &m), 0, "pic, entry mid-insn");
	WANT_INT3("pic, entry mid-insn", "entry 2 of its jump table at 0x40100e points inside an");

	/* unreadable table, or no memory at all: refused as before */
	m.len = 8;
	CHECK_EQ(plan_at(pic, sizeof(pic), PIC_SITE, &m), 0, "pic, short memory");
	WANT_INT3("pic, short memory", "cannot be read");
	CHECK_EQ(plan_at(pic, sizeof(pic), PIC_SITE, NULL), 0, "pic, no memory");
	WANT_INT3("pic, no memory", "the function has an indirect jump at func+0x15");

	/* jae bounds one less: cmp $4; jae reads 4 entries */
	rel_table(&m, PIC_TABLE, (const uint32_t[]){0x17, 0x1e, 0x24, 0x1e, 0x18}, 5);
	memcpy(code, pic, sizeof(pic));
	code[2] = 0x04;
	code[3] = 0x73;
	CHECK_EQ(plan_at(code, sizeof(code), PIC_SITE, &m), 0, "pic jae");
	WANT_JMP("pic jae");
	code[2] = 0x05; /* cmp $5; jae: 5 entries, the fifth inside */
	CHECK_EQ(plan_at(code, sizeof(code), PIC_SITE, &m), 0, "pic jae 5");
	WANT_INT3("pic jae 5", "entry 4 of the jump table");

	/* no guard: cmp + ja become nops */
	memcpy(code, pic, sizeof(pic));
	memset(code, 0x90, 5);
	CHECK_EQ(plan_at(code, sizeof(code), PIC_SITE, &m), 0, "pic, no guard");
	WANT_INT3("pic, no guard", "the size of its jump table at 0x40100e is not proven");

	/* a guard on another register */
	memcpy(code, pic, sizeof(pic));
	code[1] = 0xfe; /* cmp $3,%esi */
	CHECK_EQ(plan_at(code, sizeof(code), PIC_SITE, &m), 0, "pic, guard on esi");
	WANT_INT3("pic, guard on esi", "is not proven");

	/* the index changed after the guard (add %eax,%edi instead of mov %edi,%edi) */
	memcpy(code, pic, sizeof(pic));
	code[5] = 0x01;
	code[6] = 0xc7;
	CHECK_EQ(plan_at(code, sizeof(code), PIC_SITE, &m), 0, "pic, index changed");
	WANT_INT3("pic, index changed", "is not proven");

	/* a branch past the guard: the ret at 0x26 becomes... the xor at 0x24 a jmp to the lea */
	rel_table(&m, PIC_TABLE, (const uint32_t[]){0x17, 0x1e, 0x1e, 0x1e}, 4);
	memcpy(code, pic, sizeof(pic));
	code[0x24] = 0xeb;
	code[0x25] = (uint8_t)(0x07 - 0x26); /* jmp 0x7 */
	CHECK_EQ(plan_at(code, sizeof(code), PIC_SITE, &m), 0, "pic, jump past the guard");
	WANT_INT3("pic, jump past the guard", "is not proven");
}

static void test_nopic(void)
{
	struct fake m = {0};

	abs_table(&m, 0x401000, F, (const uint32_t[]){0xe, 0x15, 0x15, 0xe}, 4);
	CHECK_EQ(plan_at(nopic, sizeof(nopic), F + 0xe, &m), 0, "nopic");
	WANT_JMP("nopic");
	abs_table(&m, 0x401000, F, (const uint32_t[]){0xe, 0x15, 0xf, 0xe}, 4);
	CHECK_EQ(plan_at(nopic, sizeof(nopic), F + 0xe, &m), 0, "nopic, inside");
	WANT_INT3("nopic, inside", "entry 2 of the jump table at 0x401000");
	/* targets outside the function (a .cold part) are no concern of the patch */
	abs_table(&m, 0x401000, F, (const uint32_t[]){0xe, 0x100f, 0x100f, 0x15}, 4);
	CHECK_EQ(plan_at(nopic, sizeof(nopic), F + 0xe, &m), 0, "nopic, outside");
	WANT_JMP("nopic, outside");
	/*
	 * None inside: a table read before the loader relocated it (a static
	 * PIE at its entry point holds link-time addresses, here the function
	 * linked at 0x1000 but loaded at F, entry 2 its patched bytes).
	 */
	abs_table(&m, 0x401000, 0x1000, (const uint32_t[]){0xe, 0x15, 0xf, 0xe}, 4);
	CHECK_EQ(plan_at(nopic, sizeof(nopic), F + 0xe, &m), 0, "nopic, unrelocated");
	WANT_INT3("nopic, unrelocated", "unrelocated: no entry in the function");
	memset(m.bytes, 0, 32); /* RELA: the entries 0 until relocated */
	CHECK_EQ(plan_at(nopic, sizeof(nopic), F + 0xe, &m), 0, "nopic, zero entries");
	WANT_INT3("nopic, zero entries", "unrelocated: no entry in the function");
}

static void test_computed_goto(void)
{
	struct fake m = {0};
	uint32_t offs[256];

	for (int i = 0; i < 256; i++)
		offs[i] = i % 2 ? 0x11 : 0x17;
	abs_table(&m, 0x402000, F, offs, 256);
	CHECK_EQ(plan_at(cgoto, sizeof(cgoto), F + 0x11, &m), 0, "goto");
	WANT_JMP("goto, 256 entries");
	offs[255] = 0x12;
	abs_table(&m, 0x402000, F, offs, 256);
	CHECK_EQ(plan_at(cgoto, sizeof(cgoto), F + 0x11, &m), 0, "goto, last inside");
	WANT_INT3("goto, last inside", "entry 255 of the jump table at 0x402000");
	/* a word index: 65536 entries are more than ubt proves */
	uint8_t code[sizeof(cgoto)];
	memcpy(code, cgoto, sizeof(cgoto));
	code[2] = 0xb7; /* movzwl %di,%eax */
	CHECK_EQ(plan_at(code, sizeof(code), F + 0x11, &m), 0, "goto, word index");
	WANT_INT3("goto, word index", "has 65536 entries");
}

/*
 * Probes in a row (sys/sdt.h's nops):
 *  0: 90                   nop                            row:a
 *  1: 90                   nop                            row:b
 *  2: 90                   nop                            row:c
 *  3: 48 8b 05 00 10 00 00 mov    0x1000(%rip),%rax
 *  a: c3                   ret
 */
static const uint8_t row[] = {0x90, 0x90, 0x90, 0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0xc3};

static void test_row(void)
{
	const uint64_t avoid[] = {F, F + 1, F + 2}, T = 0x410000,
		       h[3] = {0x420000, 0x420100, 0x420200};
	uint8_t buf[1024], code[sizeof(row)];
	size_t len, base;

	CHECK_EQ(arch_plan_mid_site(row, sizeof(row), 0, F, F, avoid, 3, NULL, &plan), 0, "row");
	WANT_JMP("row");
	CHECK_EQ(plan.mid_cover, 0x6, "row: b and c covered");
	CHECK_EQ(plan.orig_len, 10, "row: three nops and the mov");

	/* the pc slot is read: set to F + 2 before c's handler, and nothing more */
	plan.mid_read = 1u << (offsetof(struct rt_regs_mid, pc) / 8);
	plan.mid_hoff[0] = 0;
	plan.mid_hoff[1] = 0;
	plan.mid_hoff[2] = 2;
	CHECK_EQ(arch_emit_trampoline(&plan, T, h, 3, buf, sizeof(buf), &len), 0, "row tramp");
	static const uint8_t set[] = {0x48, 0x8b, 0x04, 0x24, 0x4c, 0x8d, 0x1d};
	int found = 0;
	for (size_t i = 0; i + sizeof(set) + 8 <= len; i++) {
		if (memcmp(buf + i, set, sizeof(set)))
			continue;
		int32_t rel;
		memcpy(&rel, buf + i + 7, 4);
		CHECK_EQ(T + i + 11 + (uint64_t)(int64_t)rel, F + 2, "row: lea names c's location");
		CHECK(!memcmp(buf + i + 11, "\x4c\x89\x58", 3) &&
			  buf[i + 14] == offsetof(struct rt_regs_mid, pc),
		      "row: mov %%r11,pc(%%rax)");
		found++;
	}
	CHECK_EQ(found, 1, "row: one pc update");
	/* the relocated copy starts where the pc mapping says */
	uint64_t pc = 0;
	CHECK_EQ(arch_pc_into_trampoline(&plan, T, 3, F + 3, &pc), 0, "row: map the mov");
	base = pc - T;
	CHECK(!memcmp(buf + base, "\x48\x8b\x05", 3), "row: the mov relocated at the mapped pc");
	plan.mid_hoff[2] = 0;
	CHECK_EQ(arch_pc_into_trampoline(&plan, T, 3, F + 3, &pc), 0, "row: map, no update");
	CHECK_EQ(pc - T, base - 15, "row: the update is 15 bytes");

	/* something else than a nop before the other location: refused */
	memcpy(code, row, sizeof(row));
	code[1] = 0x50; /* push %rax */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(code), 0, F, F, avoid, 3, NULL, &plan), 0,
		 "row push");
	WANT_INT3("row push", "another probed site at func+0x2 follows closely, after code");
	CHECK_EQ(plan.mid_cover, 0, "row push: covers nothing");
}

/*
 * Code after a `ret` or a `jmp` (reached only by a jump): the patch may
 * cover it where it is alignment fill.
 *   0: 90                nop                the probe site
 *   1: 5d                pop  %rbp
 *   2: c3                ret                (the function ends here: 3 bytes)
 *   3: 0f 1f 40 00       nopl 0x0(%rax)     fill before the next function
 */
static const uint8_t tail[] = {0x90, 0x5d, 0xc3, 0x0f, 0x1f, 0x40, 0x00};

/*
 *   0: 31 c0             xor  %eax,%eax
 *   2: 90                nop                the probe site
 *   3: eb fb             jmp  0
 *   5: 66 90             xchg %ax,%ax       fill inside the function
 *   7: 0f 1f 00          nopl (%rax)
 *   a: c3                ret
 */
static const uint8_t jfill[] = {0x31, 0xc0, 0x90, 0xeb, 0xfb, 0x66, 0x90, 0x0f, 0x1f, 0x00, 0xc3};

static void test_after_jump(void)
{
	uint8_t code[16];

	CHECK_EQ(arch_plan_mid_site(tail, 3, 4, F, F, NULL, 0, NULL, &plan), 0, "tail");
	WANT_JMP("tail, fill after the function");
	CHECK_EQ(plan.orig_len, 7, "tail: nop pop ret nopl");
	CHECK_EQ(plan.ninsns, 4, "tail: 4 instructions");
	CHECK_EQ(arch_plan_mid_site(tail, 3, 0, F, F, NULL, 0, NULL, &plan), 0, "tail, no pad");
	WANT_INT3("tail, no pad", "too close to the end of the function");
	CHECK_EQ(arch_plan_mid_site(tail, 3, 2, F, F, NULL, 0, NULL, &plan), 0, "tail, short pad");
	WANT_INT3("tail, short pad", "reached only by a jump");
	memcpy(code, tail, sizeof(tail));
	code[3] = 0x55; /* push %rbp: code, not fill */
	CHECK_EQ(arch_plan_mid_site(code, 3, 4, F, F, NULL, 0, NULL, &plan), 0, "tail, code");
	WANT_INT3("tail, code after ret", "func+0x3 after it is reached only by a jump");

	CHECK_EQ(arch_plan_mid_site(jfill, sizeof(jfill), 0, F, F + 2, NULL, 0, NULL, &plan), 0,
		 "jfill");
	WANT_JMP("jfill, fill inside the function");
	CHECK_EQ(plan.orig_len, 5, "jfill: nop jmp xchg");
	/* the fill is a branch target after all: refused */
	memcpy(code, jfill, sizeof(jfill));
	code[0] = 0xeb;
	code[1] = 0x03; /* jmp 5 */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(jfill), 0, F, F + 2, NULL, 0, NULL, &plan), 0,
		 "jfill target");
	WANT_INT3("jfill, fill targeted", "branch at func+0x0 targets func+0x5");
	/* code, not fill, after the jmp */
	memcpy(code, jfill, sizeof(jfill));
	code[5] = 0x31;
	code[6] = 0xc0; /* xor %eax,%eax */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(jfill), 0, F, F + 2, NULL, 0, NULL, &plan), 0,
		 "jfill code");
	/* not from the location (the xor after the jmp would be covered), but
	 * from the xor before it: xor, nop, jmp back to that xor (the jump's
	 * own start, which a branch may target) */
	WANT_JMP("jfill, code: from the instruction before");
	CHECK_EQ(plan.site, F, "jfill code: jump at the xor before");
	CHECK_EQ(plan.mid_at, 2, "jfill code: handlers after the xor");
	CHECK_EQ(plan.orig_len, 5, "jfill code: xor nop jmp");
	/* with a branch to the location itself too, nothing before helps */
	code[3] = 0xeb;
	code[4] = 0xfd; /* jmp 2 */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(jfill), 0, F, F + 2, NULL, 0, NULL, &plan), 0,
		 "jfill code, loop to the nop");
	WANT_INT3("jfill, code, loop to the nop", "func+0x5 after it is reached only by a jump");
}

/*
 * A rel8 branch into the bytes a jump at the location would cover (spdk_like's
 * dynsched_balance at -O2: the loop after the probe jumps back to its rdtsc):
 *  0: 48 09 d0             or     %rdx,%rax
 *  3: 90                   nop                            the probe site
 *  4: 31 c9                xor    %ecx,%ecx
 *  6: 0f 31                rdtsc                          loop start
 *  8: 83 c1 01             add    $0x1,%ecx
 * 11: 83 f9 03             cmp    $0x3,%ecx
 * 14: 75 f6                jne    6
 * 16: c3                   ret
 * At 3 the jump covers 6 (a rel8 cannot be redirected); from the `or`
 * before, it covers 0-5 only.
 */
static const uint8_t rel8_loop[] = {0x48, 0x09, 0xd0, 0x90, 0x31, 0xc9, 0x0f, 0x31, 0x83,
				    0xc1, 0x01, 0x83, 0xf9, 0x03, 0x75, 0xf6, 0xc3};

static void test_rel8_into(void)
{
	CHECK_EQ(
	    arch_plan_mid_site(rel8_loop, sizeof(rel8_loop), 0, F, F + 3, NULL, 0, NULL, &plan), 0,
	    "rel8 loop");
	WANT_JMP("rel8 loop: from the instruction before");
	CHECK_EQ(plan.site, F, "rel8 loop: jump at the or");
	CHECK_EQ(plan.mid_at, 3, "rel8 loop: handlers after the or");
	CHECK_EQ(plan.orig_len, 6, "rel8 loop: or nop xor");
	/* the or itself a branch target too: nothing helps */
	uint8_t code[sizeof(rel8_loop) + 2];
	memcpy(code, rel8_loop, sizeof(rel8_loop));
	code[15] = 0xf0; /* jne 0 */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(rel8_loop), 0, F, F + 3, NULL, 0, NULL, &plan), 0,
		 "rel8 loop to the or");
	WANT_JMP("rel8 loop to the or: the jump's own start is a fine target");
	/* and a branch to the location itself as well: a breakpoint */
	code[15] = 0xf6; /* jne 6 again */
	code[16] = 0xeb;
	code[17] = 0xf1; /* 16: jmp 3 */
	code[18] = 0xc3; /* 18: ret */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(code), 0, F, F + 3, NULL, 0, NULL, &plan), 0,
		 "rel8 loop and a jmp to the nop");
	WANT_INT3("rel8 loop and a jmp to the nop", "branch at func+0xe targets func+0x6");
}

/*
 * Calls among the displaced instructions:
 *  0: 90                   nop                            the probe site
 *  1: ff d0                call   *%rax                   returns to 3
 *  3: 89 c1                mov    %eax,%ecx
 *  5: c3                   ret
 * A thread inside the callee when the jump is patched (ubt -p) would
 * return to 3, inside it: refused.  A call as the last one returns right
 * after the patch: the copy pushes the original return address, then
 * jumps to the callee, directly (90 e8 00000000 c3) or through the same
 * operand (90 90 90 90 ff d0 c3: jmp *%rax; spdk's msg_exec).  One
 * through %rsp cannot be moved (the push changes its operand).
 */
static void test_call_inside(void)
{
	static const uint8_t mid[] = {0x90, 0xff, 0xd0, 0x89, 0xc1, 0xc3};
	static const uint8_t last[] = {0x90, 0x90, 0x90, 0x90, 0xff, 0xd0, 0xc3};
	static const uint8_t direct[] = {0x90, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3};
	static const uint8_t via_rsp[] = {0x90, 0x90, 0x90, 0xff, 0x54, 0x24, 0x08, 0xc3};

	CHECK_EQ(plan_at(mid, sizeof(mid), F, NULL), 0, "call inside");
	WANT_INT3("call inside",
		  "the call at func+0x1 returns to func+0x3, inside the patched bytes");
	CHECK_EQ(plan_at(last, sizeof(last), F, NULL), 0, "indirect call last");
	WANT_JMP("indirect call last");
	CHECK_EQ(plan.orig_len, 6, "indirect call last: the nops and the call");
	CHECK_EQ(plan_at(via_rsp, sizeof(via_rsp), F, NULL), 0, "call through %%rsp");
	WANT_INT3("call through %rsp", "its operand reads %rsp");
	CHECK_EQ(plan_at(direct, sizeof(direct), F, NULL), 0, "direct call last");
	WANT_JMP("direct call last");
}

/*
 * A branch into the byte after the nop (tests/progs/usdt_redir.c's loop):
 *  0: 31 c0                xor %eax,%eax
 *  2: e9 0d 00 00 00       jmp 0x14
 *  7: a8 01                test $0x1,%al
 *  9: 0f 85 01 00 00 00    jnz 0x10       a rel32: redirected
 *  f: 90                   nop            the probe site
 * 10: 48 8d 40 01          lea 0x1(%rax),%rax
 * 14: 48 39 f8             cmp %rdi,%rax
 * 17: 7c de                jl 0x7
 * 19: c3                   ret
 * With `jnz 0x10` as a rel8 (75 05 and 4 nops before it, the same
 * length), the branch cannot reach a trampoline: a breakpoint.  The copy
 * of the target in the trampoline is where the new rel32 points.
 */
static void test_redirect(void)
{
	static const uint8_t rel32[] = {0x31, 0xc0, 0xe9, 0x0d, 0x00, 0x00, 0x00, 0xa8, 0x01,
					0x0f, 0x85, 0x01, 0x00, 0x00, 0x00, 0x90, 0x48, 0x8d,
					0x40, 0x01, 0x48, 0x39, 0xf8, 0x7c, 0xde, 0xc3};
	uint8_t rel8[sizeof(rel32)];
	uint8_t out[4];
	uint64_t copy;
	int32_t rel;

	CHECK_EQ(plan_at(rel32, sizeof(rel32), F + 0xf, NULL), 0, "redirect");
	WANT_JMP("redirect");
	CHECK_EQ(plan.nredirs, 1, "redirect: one branch moved");
	CHECK_EQ(plan.redir[0].insn, F + 9, "redirect: the jnz");
	CHECK_EQ(plan.redir[0].at, F + 11, "redirect: its rel32");
	CHECK_EQ(plan.redir[0].target, F + 0x10, "redirect: the lea");
	CHECK(!memcmp(plan.redir[0].orig, "\x01\x00\x00\x00", 4), "redirect: original rel32");
	CHECK_EQ(arch_pc_into_copy(&plan, F + 0x1000, F + 0x10, &copy), 0, "redirect: lea's copy");
	CHECK_EQ(arch_redirect_bytes(&plan, F + 0x1000, 0, out), 0, "redirect: bytes");
	memcpy(&rel, out, 4);
	CHECK_EQ(F + 15 + rel, copy, "redirect: the jnz lands on the lea's copy");

	memcpy(rel8, rel32, sizeof(rel8));
	memcpy(rel8 + 9, "\x90\x90\x90\x90\x75\x01", 6);
	CHECK_EQ(plan_at(rel8, sizeof(rel8), F + 0xf, NULL), 0, "rel8 into the bytes");
	WANT_INT3("rel8 into the bytes", "branch at func+0xd targets func+0x10");
	CHECK_EQ(plan.nredirs, 0, "rel8 into the bytes: nothing moved");
}

/*
 * Hops (struct arch_hop).  The rel32 case of test_redirect with a rel8 jnz
 * and 5 bytes of fill after its ret:
 *  9: 90 90 90 90          nops
 * 13: 75 01                jnz 16          <- a rel8 into the patched bytes
 * 15: 90                   nop             the location
 * 16: 48 8d 40 01          lea 1(%rax),%rax
 * ...
 * 25: c3                   ret
 * 26: 0f 1f 44 00 00       nopl 0(%rax,%rax,1)    fill nothing reaches
 * The jnz's rel8 now leads to a hop on the fill, which jumps to the lea's
 * copy; with the fill in the pad after the function, the same.  Where the
 * fill is reached (a nop before it instead of the ret), no hop: the
 * breakpoint.
 *
 * A `nop; jmp` location before code reached only by a branch (libstdc++'s
 * __cxa_rethrow, postgres' lwlock__condacquire):
 *  0: 48 89 f8             mov %rdi,%rax
 *  3: a8 01                test $1,%al
 *  5: 74 03                je 10
 *  7: 90                   nop             the location
 *  8: eb 04                jmp 14
 * 10: 48 83 c0 07          add $7,%rax     reached only by the je
 * 14: c3                   ret
 * 15: 0f 1f 44 00 00       the pad after the function
 * A 5-byte jump would cover the add; a 2-byte `jmp rel8` to a hop in the
 * pad (which jumps to the trampoline) covers the nop and the jmp only.
 */
static void test_hops(void)
{
	static const uint8_t base[] = {0x31, 0xc0, 0xe9, 0x0d, 0x00, 0x00, 0x00, 0xa8,
				       0x01, 0x90, 0x90, 0x90, 0x90, 0x75, 0x01, 0x90,
				       0x48, 0x8d, 0x40, 0x01, 0x48, 0x39, 0xf8, 0x7c,
				       0xde, 0xc3, 0x0f, 0x1f, 0x44, 0x00, 0x00};
	static const uint8_t shrt[] = {0x48, 0x89, 0xf8, 0xa8, 0x01, 0x74, 0x03, 0x90, 0xeb, 0x04,
				       0x48, 0x83, 0xc0, 0x07, 0xc3, 0x0f, 0x1f, 0x44, 0x00, 0x00};
	uint8_t code[sizeof(base)], out[5];
	uint64_t copy;
	int32_t rel;

	CHECK_EQ(arch_plan_mid_site(base, sizeof(base), 0, F, F + 15, NULL, 0, NULL, &plan), 0,
		 "hop in the function");
	WANT_JMP("hop in the function");
	CHECK(!plan.short_jmp, "hop in the function: a 5-byte jump at the location");
	CHECK_EQ(plan.nredirs, 1, "hop in the function: the jnz moved");
	CHECK_EQ(plan.redir[0].len, 1, "hop in the function: a rel8");
	CHECK_EQ(plan.redir[0].at, F + 14, "hop in the function: the jnz's rel8");
	CHECK_EQ(plan.nhops, 1, "hop in the function: one hop");
	CHECK_EQ(plan.redir[0].hop, 0, "hop in the function: the jnz's");
	CHECK_EQ(plan.hop[0].at, F + 26, "hop in the function: on the fill");
	CHECK_EQ(plan.hop[0].resume, F + 16, "hop in the function: stands for the lea");
	CHECK(!memcmp(plan.hop[0].orig, base + 26, 5), "hop in the function: the fill kept");
	CHECK_EQ(arch_redirect_bytes(&plan, F + 0x1000, 0, out), 0, "hop: the jnz's bytes");
	CHECK_EQ(out[0], 26 - 15, "hop: the jnz's rel8 leads to the hop");
	CHECK_EQ(arch_pc_into_copy(&plan, F + 0x1000, F + 16, &copy), 0, "hop: lea's copy");
	CHECK_EQ(arch_hop_bytes(&plan, F + 0x2000, F + 0x1000, 0, out), 0, "hop: its bytes");
	memcpy(&rel, out + 1, 4);
	CHECK(out[0] == 0xe9 && F + 31 + rel == copy, "hop: a jmp to the lea's copy");

	CHECK_EQ(arch_plan_mid_site(base, 26, 5, F, F + 15, NULL, 0, NULL, &plan), 0,
		 "hop in the pad");
	WANT_JMP("hop in the pad");
	CHECK(plan.nhops == 1 && plan.hop[0].at == F + 26, "hop in the pad: on it");
	uint64_t loc = F + 27;
	CHECK_EQ(arch_plan_mid_site(base, sizeof(base), 0, F, F + 15, &loc, 1, NULL, &plan), 0,
		 "hop over a location");
	WANT_INT3("hop over a location", "no alignment fill within its reach");

	/* the fill taken by a site planned before (its hop): none left */
	struct arch_range busy = {F + 26, F + 31};
	struct arch_mem taken = {NULL, NULL, &busy, 1};
	CHECK_EQ(arch_plan_mid_site(base, sizeof(base), 0, F, F + 15, NULL, 0, &taken, &plan), 0,
		 "hop taken");
	WANT_INT3("hop taken", "no alignment fill within its reach");

	memcpy(code, base, sizeof(code));
	code[25] = 0x90; /* falls through into the fill */
	CHECK_EQ(arch_plan_mid_site(code, sizeof(code), 0, F, F + 15, NULL, 0, NULL, &plan), 0,
		 "fill reached");
	WANT_INT3("fill reached", "branch at func+0xd targets func+0x10, inside the 5 patched "
				  "bytes, with a rel8 and no alignment fill");

	CHECK_EQ(arch_plan_mid_site(shrt, 15, 5, F, F + 7, NULL, 0, NULL, &plan), 0, "short");
	WANT_JMP("short");
	CHECK(plan.short_jmp, "short: a 2-byte jump");
	CHECK_EQ(plan.orig_len, 3, "short: nop and jmp displaced");
	CHECK(plan.nhops == 1 && plan.hop[0].at == F + 15 && plan.hop[0].resume == F + 7,
	      "short: its hop in the pad");
	uint8_t patch[3];
	CHECK_EQ(arch_patch_bytes(&plan, F + 0x2000, patch), 0, "short: patch");
	CHECK(!memcmp(patch, "\xeb\x06\xcc", 3), "short: jmp rel8 to the hop, int3 fill");
	CHECK_EQ(arch_hop_bytes(&plan, F + 0x2000, F + 0x2040, 0, out), 0, "short: hop bytes");
	memcpy(&rel, out + 1, 4);
	CHECK(out[0] == 0xe9 && F + 20 + rel == F + 0x2000,
	      "short: the hop jumps to the trampoline");
	CHECK_EQ(arch_plan_mid_site(shrt, 15, 0, F, F + 7, NULL, 0, NULL, &plan), 0,
		 "short, no pad");
	WANT_INT3("short, no pad", "func+0xa after it is reached only by a jump");
}

/*
 * A location last in a function (spdk_like's nvmf_subsystem_change_state_done):
 *  0: 48 09 d0   or %rdx,%rax
 *  3: 90         nop            the location
 *  4: c3         ret            the function's last byte
 * The jump starts at the `or` (plan.mid_at = 3); an int3 made of that plan
 * goes back on the location itself.  After a `jne` instead of the `or`
 * (not falling through only), no jump can start before: the breakpoint.
 */
static void test_before(void)
{
	static const uint8_t tail[] = {0x48, 0x09, 0xd0, 0x90, 0xc3};
	static const uint8_t after_jcc[] = {0x90, 0x90, 0x75, 0xfc, 0x90, 0xc3};

	CHECK_EQ(plan_at(tail, sizeof(tail), F + 3, NULL), 0, "before");
	WANT_JMP("before");
	CHECK_EQ(plan.site, F, "before: the jump starts at the or");
	CHECK_EQ(plan.mid_at, 3, "before: the location after it");
	CHECK_EQ(plan.orig_len, 5, "before: or, nop, ret");
	arch_plan_to_int3(&plan, "test");
	CHECK_EQ(plan.site, F + 3, "before, int3: on the location");
	CHECK_EQ(plan.orig_len, 1, "before, int3: the nop");
	CHECK_EQ(plan.orig[0], 0x90, "before, int3: its byte");
	CHECK_EQ(plan.mid_at, 0, "before, int3: no offset left");

	CHECK_EQ(plan_at(after_jcc, sizeof(after_jcc), F + 4, NULL), 0, "after a jcc");
	WANT_INT3("after a jcc", "too close to the end of the function for a jmp");
}

int main(void)
{
	test_call_inside();
	test_redirect();
	test_before();
	test_pic();
	test_after_jump();
	test_rel8_into();
	test_hops();
	test_row();
	test_nopic();
	test_computed_goto();
	return check_summary("mid-plan");
}
