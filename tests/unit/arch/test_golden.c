/*
 * test_golden.c - every trampoline kind, byte for byte, against a record.
 *
 * test_reloc.c checks a few trampolines against bytes worked out by hand;
 * this test covers the rest of the space the emitters span, where working
 * the bytes out by hand would take pages: function-entry trampolines in
 * both calling conventions with handlers near and out of rel32 reach,
 * int3 out-of-line copies, mid-function trampolines for every register
 * set they save (with displaced rip-relative operands, jcc and call), and
 * return-probe trampolines (entry, stub, slow and general paths) with and
 * without the tid check, a near or far `enabled` flag and C helpers.
 *
 * golden.txt holds, for each case, its length, where its relocated copy
 * starts, where each displaced instruction maps to and the bytes.  The
 * record was produced by this program's --print mode from the emitters as
 * they were before they were rewritten on one shared code writer
 * (writer.c), so it pins that rewrite to the old output; it is not a
 * specification.  Regenerate it (--print > golden.txt) only for a change
 * that means to alter the bytes, and check the new bytes by hand then.
 * One line differs from the old output on purpose: mid-jcc-all-far, a
 * mid-function trampoline that stores the site's address (lea site(%rip))
 * from beyond rel32 reach of the site, now fails with -ERANGE where the old
 * emitter wrote a truncated displacement (a wrong pc for the handlers).
 * Attach never places a trampoline there (arch_near_window), so no probe
 * saw it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/arch/arch.h"
#include "../check.h"
#include "runtime/abi.h"

#define F 0x401000ull
#define T 0x410000ull
#define H 0x420000ull
#define FAR 0x7f0000000000ull

struct out {
	char name[64];
	int rc;
	size_t len;
	uint64_t copy;
	uint64_t map[ARCH_MAX_INSNS];
	int nmap;
	uint8_t buf[4096];
};

static struct out outs[64];
static int nouts;

/* clang-format off */

/* lea (%rdi,%rdi,2),%eax; add 0x2ff7(%rip),%eax; ret */
static const uint8_t work[] = {0x8d, 0x04, 0x7f, 0x03, 0x05, 0xf7, 0x2f, 0x00, 0x00, 0xc3};
/* cmp $1,%edi; jle +4; lea -1(%rdi),%eax; ret; mov %edi,%eax; ret */
static const uint8_t jle[] = {0x83, 0xff, 0x01, 0x7e, 0x04, 0x8d, 0x47, 0xff, 0xc3, 0x89, 0xf8, 0xc3};
/* call 0x401100; add $1,%eax; ret */
static const uint8_t call[] = {0xe8, 0xfb, 0x00, 0x00, 0x00, 0x83, 0xc0, 0x01, 0xc3};
/* add $1,%edi; jmp 0x400f48 */
static const uint8_t tail[] = {0x83, 0xc7, 0x01, 0xe9, 0x40, 0xff, 0xff, 0xff};
/* lea (%rdi,%rdi,1),%eax; dec %eax; test %eax,%eax; jg F+3 (inside: int3); ret */
static const uint8_t loop[] = {0x8d, 0x04, 0x3f, 0xff, 0xc8, 0x85, 0xc0, 0x7f, 0xfa, 0xc3};

/*
 * Mid-function sites (a USDT nop at F+1, F+0xa and F+0x13):
 *   F+0x00  55                  push %rbp
 *   F+0x01  90                  nop                      <- site 1
 *   F+0x02  03 05 f8 2f 00 00   add 0x2ff8(%rip),%eax
 *   F+0x08  89 c7               mov %eax,%edi
 *   F+0x0a  90                  nop                      <- site 2
 *   F+0x0b  83 ff 01            cmp $1,%edi
 *   F+0x0e  7e 09               jle F+0x19
 *   F+0x10  83 c7 02            add $2,%edi
 *   F+0x13  90                  nop                      <- site 3
 *   F+0x14  e8 e7 00 00 00      call F+0x100
 *   F+0x19  5d                  pop %rbp
 *   F+0x1a  c3                  ret
 */
static const uint8_t midf[] = {
	0x55, 0x90, 0x03, 0x05, 0xf8, 0x2f, 0x00, 0x00, 0x89, 0xc7,
	0x90, 0x83, 0xff, 0x01, 0x7e, 0x09, 0x83, 0xc7, 0x02,
	0x90, 0xe8, 0xe7, 0x00, 0x00, 0x00, 0x5d, 0xc3,
};

/* clang-format on */

static const uint64_t near3[] = {H, H + 0x40, H + 0x80};
static const uint64_t mixed[] = {H, FAR + 0x1000, H + 0x80};
static const uint64_t atfar[] = {FAR + 0x2000, H};

static struct out *next_out(const char *name)
{
	struct out *o = &outs[nouts++];

	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", name);
	memset(o->buf, 0, sizeof(o->buf));
	return o;
}

static void entry(const char *name, const uint8_t *code, size_t len, bool c_abi, uint64_t tramp,
		  const uint64_t *h, int n)
{
	struct out *o = next_out(name);
	struct arch_site_plan plan;
	size_t max = arch_trampoline_max(n);

	CHECK_EQ(arch_plan_site(code, len, F, F, &plan), 0, "%s", name);
	plan.c_abi = c_abi;
	o->rc = arch_emit_trampoline(&plan, tramp, h, n, o->buf, max, &o->len);
	o->copy = tramp;
	for (int i = 0; i < plan.ninsns; i++) {
		uint64_t pc = 0;
		int rc = arch_pc_into_trampoline(&plan, tramp, n, F + plan.insn_off[i], &pc);
		o->map[o->nmap++] = rc ? (uint64_t)(int64_t)rc : pc;
	}
	o = next_out(name);
	strncat(o->name, ".patch", sizeof(o->name) - strlen(o->name) - 1);
	o->rc = arch_patch_bytes(&plan, tramp, o->buf);
	o->len = (size_t)plan.orig_len;
}

static void mid(const char *name, uint64_t site, uint32_t read, uint64_t tramp, const uint64_t *h,
		int n)
{
	struct out *o = next_out(name);
	struct arch_site_plan plan;

	CHECK_EQ(arch_plan_mid_site(midf, sizeof(midf), 0, F, site, NULL, 0, NULL, &plan), 0, "%s",
		 name);
	CHECK(plan.kind == ARCH_PATCH_JMP, "%s: want a JMP plan: %s", name, plan.why);
	plan.mid_read = read;
	o->rc = arch_emit_trampoline(&plan, tramp, h, n, o->buf, arch_trampoline_mid_max(n),
				     &o->len);
	o->copy = tramp;
	for (int i = 0; i < plan.ninsns; i++) {
		uint64_t pc = 0;
		int rc = arch_pc_into_trampoline(&plan, tramp, n, site + plan.insn_off[i], &pc);
		o->map[o->nmap++] = rc ? (uint64_t)(int64_t)rc : pc;
	}
}

static void ret(const char *name, const uint8_t *code, size_t len, uint64_t tramp,
		const struct arch_ret_spec *spec)
{
	struct out *o = next_out(name);
	struct arch_site_plan plan;

	CHECK_EQ(arch_plan_site(code, len, F, F, &plan), 0, "%s", name);
	o->rc = arch_emit_ret_trampoline(&plan, tramp, spec, o->buf,
					 arch_ret_trampoline_max(spec->nhandlers, spec->nrhandlers),
					 &o->len, &o->copy);
	for (int i = 0; i < plan.ninsns; i++) {
		uint64_t pc = 0;
		int rc = arch_pc_into_copy(&plan, o->copy, F + plan.insn_off[i], &pc);
		o->map[o->nmap++] = rc ? (uint64_t)(int64_t)rc : pc;
	}
}

static void run_cases(void)
{
	const uint32_t all = ~0u, args = 0x3c6; /* rcx rdx rsi rdi (slots 1-2, 6-9) */
	const uint32_t pc = 1u << offsetof(struct rt_regs_mid, pc) / 8;
	struct arch_ret_spec rs = {
		.handlers = mixed, .nhandlers = 3, .rhandlers = near3, .nrhandlers = 2,
		.enter = H + 0x1000, .leave = H + 0x2000, .enabled = H + 0x3000,
		.stacks = 0x7f1000000000ull, .nstacks = 64, .has_tid = true, .tid_off = 0x2d0,
	};

	entry("entry-work-h0", work, sizeof(work), false, T, NULL, 0);
	entry("entry-work-h3", work, sizeof(work), false, T, near3, 3);
	entry("entry-work-mixed", work, sizeof(work), false, T, mixed, 3);
	entry("entry-work-cabi-mixed", work, sizeof(work), true, T, mixed, 3);
	entry("entry-jle-far", jle, sizeof(jle), false, FAR, atfar, 2);
	entry("entry-jle-cabi-far", jle, sizeof(jle), true, FAR, atfar, 2);
	entry("entry-call-near", call, sizeof(call), false, T, near3, 1);
	entry("entry-call-far", call, sizeof(call), true, FAR, atfar, 2);
	entry("entry-tail-far", tail, sizeof(tail), false, FAR, near3, 1);
	entry("entry-loop-int3", loop, sizeof(loop), false, T, near3, 2);
	entry("entry-loop-int3-cabi", loop, sizeof(loop), true, T, mixed, 3);

	mid("mid-riprel-none", F + 1, 0, T, near3, 1);
	mid("mid-riprel-args", F + 1, args, T, mixed, 3);
	mid("mid-riprel-all", F + 1, all, T, mixed, 3);
	/* -ERANGE: lea site(%rip) for the pc slot cannot reach (the old emitter
	 * wrote a truncated displacement there; see the comment atop) */
	mid("mid-jcc-all-far", F + 0xa, all, FAR, atfar, 2);
	mid("mid-jcc-nopc-far", F + 0xa, all & ~pc, FAR, atfar, 2);
	mid("mid-jcc-args", F + 0xa, args, T, near3, 2);
	mid("mid-call-all", F + 0x13, all, T, near3, 0);
	mid("mid-call-far", F + 0x13, 0x1 | 0x10, FAR, atfar, 2);

	ret("ret-work-tid", work, sizeof(work), T, &rs);
	rs.has_tid = false;
	rs.nrhandlers = 0;
	ret("ret-work-notid-norh", work, sizeof(work), T, &rs);
	rs = (struct arch_ret_spec){
		.nhandlers = 0, .rhandlers = mixed, .nrhandlers = 3,
		.enter = H, .leave = H + 8, .enabled = H + 16,
		.stacks = 0x601000, .nstacks = 1, .has_tid = true, .tid_off = -0x40,
	};
	ret("ret-jle-far-rh", jle, sizeof(jle), FAR, &rs); /* -ERANGE: lea site(%rip) */
	rs.nrhandlers = 0;
	ret("ret-jle-far", jle, sizeof(jle), FAR, &rs);
	rs.handlers = atfar;
	rs.nhandlers = 2;
	rs.nstacks = 4096;
	ret("ret-call-far", call, sizeof(call), FAR, &rs);
	rs.nrhandlers = 3;
	rs.enabled = FAR + 0x100000000ull; /* out of reach of T: movabs + cmpl (%r11) */
	rs.enter = FAR;
	ret("ret-tail-near-farflag", tail, sizeof(tail), T, &rs);
}

static void print_out(FILE *f, const struct out *o)
{
	fprintf(f, "%s rc=%d len=%zu copy=0x%" PRIx64 " map=", o->name, o->rc, o->len, o->copy);
	for (int i = 0; i < o->nmap; i++)
		fprintf(f, "%s0x%" PRIx64, i ? "," : "", o->map[i]);
	fputc(' ', f);
	for (size_t i = 0; i < o->len; i++)
		fprintf(f, "%02x", o->buf[i]);
	fputc('\n', f);
}

static void compare(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, got[16384];
	size_t cap = 0;
	int i = 0;

	if (!f) {
		CHECK(0, "cannot open %s: %s", path, strerror(errno));
		return;
	}
	for (; getline(&line, &cap, f) > 0; i++) {
		FILE *m;

		if (i >= nouts) {
			CHECK(0, "%s has more cases than the test: %.40s", path, line);
			break;
		}
		m = fmemopen(got, sizeof(got), "w");
		print_out(m, &outs[i]);
		fclose(m);
		CHECK(strcmp(line, got) == 0, "%s differs\n  got  %s  want %s", outs[i].name, got,
		      line);
	}
	CHECK_EQ(i, nouts, "cases in the record");
	free(line);
	fclose(f);
}

int main(int argc, char **argv)
{
	run_cases();
	if (argc == 2 && strcmp(argv[1], "--print") == 0) {
		for (int i = 0; i < nouts; i++)
			print_out(stdout, &outs[i]);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test_golden GOLDEN.txt | --print\n");
		return 2;
	}
	compare(argv[1]);
	return check_summary("arch-golden");
}
