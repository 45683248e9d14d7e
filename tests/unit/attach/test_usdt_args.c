/*
 * test_usdt_args.c - table tests of the USDT operand parser
 * (src/attach/resolve/usdt_args.c): operand text in, struct cg_usdt_arg out, or
 * the reason it cannot be read.
 *
 * The operands are the forms GNU as and clang's assembler accept for the
 * "nor" constraint of sys/sdt.h, among them real notes: PostgreSQL 15's
 * `-4@40+CheckpointStats(%rip)`, python3.11's `-4@112(%rsp)`.  The symbol
 * table is fixed; the location is at PC.
 */
#include "attach/resolve/usdt.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define PC 0x1ec240
#define R(f) ((uint8_t)offsetof(struct rt_regs_mid, f))
#define NO CG_USDT_NOREG

static int failures;

static const struct {
	const char *name;
	int64_t value;
	int64_t tpoff; /* 0: not a TLS variable */
} symtab[] = {
	{"CheckpointStats", 0x885000, 0},
	{"NBuffers", 0x886010, 0},
	{"table.2", 0x4000, 0},
	{"_ZN3foo3barE", 0x5000, 0},
	{"tls_counter", 0x10, -24},
};

static int find(void *ctx, const char *name, bool tpoff, int64_t *value)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(symtab) / sizeof(symtab[0]); i++)
		if (!strcmp(symtab[i].name, name)) {
			if (tpoff && !symtab[i].tpoff)
				return -2;
			*value = tpoff ? symtab[i].tpoff : symtab[i].value;
			return 0;
		}
	return -2;
}

struct want {
	const char *text;
	uint8_t kind, size;
	bool sign;
	uint8_t reg, index, scale, shift, seg;
	bool pcrel;
	int64_t val;
	const char *err; /* for CG_USDT_BAD: a part of the message */
};

#define OK(t, k, sz, sg, rg, ix, sc, sh, sgm, pr, v) {t, k, sz, sg, rg, ix, sc, sh, sgm, pr, v, 0}
#define BAD(t, e) {t, CG_USDT_BAD, 0, 0, NO, NO, 0, 0, 0, 0, 0, e}
#define C CG_USDT_CONST
#define G CG_USDT_REG
#define M CG_USDT_MEM
#define FS CG_USDT_SEG_FS

static const struct want cases[] = {
	/* registers of every width */
	OK("8@%rax", G, 8, 0, R(rax), NO, 1, 0, 0, 0, 0),
	OK("-4@%edx", G, 4, 1, R(rdx), NO, 1, 0, 0, 0, 0),
	OK("2@%si", G, 2, 0, R(rsi), NO, 1, 0, 0, 0, 0),
	OK("1@%dil", G, 1, 0, R(rdi), NO, 1, 0, 0, 0, 0),
	OK("1@%ah", G, 1, 0, R(rax), NO, 1, 8, 0, 0, 0),
	OK("-1@%bh", G, 1, 1, R(rbx), NO, 1, 8, 0, 0, 0),
	OK("-4@%r12d", G, 4, 1, R(r12), NO, 1, 0, 0, 0, 0),
	OK("2@%r9w", G, 2, 0, R(r9), NO, 1, 0, 0, 0, 0),
	OK("1@%r15b", G, 1, 0, R(r15), NO, 1, 0, 0, 0, 0),
	OK("1@%r10l", G, 1, 0, R(r10), NO, 1, 0, 0, 0, 0),
	OK("8@%rbp", G, 8, 0, R(rbp), NO, 1, 0, 0, 0, 0),
	OK("%rsi", G, 8, 1, R(rsi), NO, 1, 0, 0, 0, 0), /* old notes: no size */
	/* immediates */
	OK("-4@$-7", C, 4, 1, NO, NO, 1, 0, 0, 0, -7),
	OK("4@$0x10", C, 4, 0, NO, NO, 1, 0, 0, 0, 16),
	OK("8@$18446744073709551615", C, 8, 0, NO, NO, 1, 0, 0, 0, -1),
	OK("8@$NBuffers", C, 8, 0, NO, NO, 1, 0, 0, 1, 0x886010 - PC),
	OK("8@$NBuffers+8", C, 8, 0, NO, NO, 1, 0, 0, 1, 0x886018 - PC),
	/* base + displacement, negative too */
	OK("8@-16(%rbp)", M, 8, 0, R(rbp), NO, 1, 0, 0, 0, -16),
	OK("-4@112(%rsp)", M, 4, 1, R(rsp), NO, 1, 0, 0, 0, 112),
	OK("4@(%rdi)", M, 4, 0, R(rdi), NO, 1, 0, 0, 0, 0),
	OK("8@-0x18(%r13)", M, 8, 0, R(r13), NO, 1, 0, 0, 0, -24),
	/* scaled index, with and without a base */
	OK("2@8(%rax,%rcx,2)", M, 2, 0, R(rax), R(rcx), 2, 0, 0, 0, 8),
	OK("8@(%rax,%rbx)", M, 8, 0, R(rax), R(rbx), 1, 0, 0, 0, 0),
	OK("8@(,%rbx,8)", M, 8, 0, NO, R(rbx), 8, 0, 0, 0, 0),
	OK("-4@-4(%rdx,%r8,4)", M, 4, 1, R(rdx), R(r8), 4, 0, 0, 0, -4),
	/* symbol and offset, both orders, rip-relative and absolute */
	OK("-4@NBuffers(%rip)", M, 4, 1, NO, NO, 1, 0, 0, 1, 0x886010 - PC),
	OK("-4@40+CheckpointStats(%rip)", M, 4, 1, NO, NO, 1, 0, 0, 1, 0x885028 - PC),
	OK("-4@CheckpointStats+40(%rip)", M, 4, 1, NO, NO, 1, 0, 0, 1, 0x885028 - PC),
	OK("8@CheckpointStats-8(%rip)", M, 8, 0, NO, NO, 1, 0, 0, 1, 0x884ff8 - PC),
	OK("8@-8+CheckpointStats(%rip)", M, 8, 0, NO, NO, 1, 0, 0, 1, 0x884ff8 - PC),
	OK("4@0x10+CheckpointStats+4(%rip)", M, 4, 0, NO, NO, 1, 0, 0, 1, 0x885014 - PC),
	OK("4@table.2(%rip)", M, 4, 0, NO, NO, 1, 0, 0, 1, 0x4000 - PC),
	OK("8@_ZN3foo3barE(%rip)", M, 8, 0, NO, NO, 1, 0, 0, 1, 0x5000 - PC),
	OK("4@NBuffers", M, 4, 0, NO, NO, 1, 0, 0, 1, 0x886010 - PC),
	OK("4@NBuffers+4", M, 4, 0, NO, NO, 1, 0, 0, 1, 0x886014 - PC),
	OK("8@table.2(,%rax,8)", M, 8, 0, NO, R(rax), 8, 0, 0, 1, 0x4000 - PC),
	OK("4@16+table.2(%rcx)", M, 4, 0, R(rcx), NO, 1, 0, 0, 1, 0x4010 - PC),
	/* segment prefixes */
	OK("8@%fs:0x28", M, 8, 0, NO, NO, 1, 0, FS, 0, 0x28),
	OK("-4@%fs:-8", M, 4, 1, NO, NO, 1, 0, FS, 0, -8),
	OK("8@%fs:(%rax)", M, 8, 0, R(rax), NO, 1, 0, FS, 0, 0),
	OK("4@%fs:tls_counter@tpoff", M, 4, 0, NO, NO, 1, 0, FS, 0, -24),
	OK("4@%fs:tls_counter@tpoff+4", M, 4, 0, NO, NO, 1, 0, FS, 0, -20),
	OK("8@%ds:8(%rax)", M, 8, 0, R(rax), NO, 1, 0, 0, 0, 8),
	/* still unreadable: the argument alone is refused, with its text */
	BAD("8@%xmm0", "cannot parse argument '8@%xmm0': register %xmm0 cannot be read"),
	BAD("8f@%xmm1", "floating-point"),
	BAD("4@%gs:0x10", "%gs"),
	BAD("4@missing(%rip)", "symbol 'missing' not found"),
	BAD("8@foo@GOTPCREL(%rip)", "'@GOTPCREL'"),
	BAD("8@8(%rip)", "%rip needs a symbol"),
	BAD("8@%rip", "%rip is not a value"),
	BAD("3@%rax", "bad size"),
	BAD("8@0x1000", "absolute address"),
	BAD("4@8(%rax,%rbx,3)", "scale"),
	BAD("4@(%ah)", "8-bit"),
	BAD("4@8(%rax", "')' expected"),
	BAD("4@NBuffers-CheckpointStats(%rip)", "added, once"),
	BAD("4@tls_counter@tpoff", "outside %fs:"),
	BAD("4@%rax)", "unexpected ')'"),
};

static void check_case(const struct want *w)
{
	struct usdt_syms syms = {find, NULL};
	struct cg_usdt_arg a;
	char err[USDT_ERR_LEN] = "";
	int ret = usdt_arg_parse(w->text, strlen(w->text), PC, &syms, &a, err, sizeof(err));
	bool ok = a.kind == w->kind;
	if (w->kind == CG_USDT_BAD) {
		ok = ok && ret != 0 && strstr(err, w->err) && strstr(err, w->text);
	} else {
		ok = ok && ret == 0 && a.size == w->size && a.is_signed == w->sign &&
		     a.reg == w->reg && a.index == w->index && a.scale == w->scale &&
		     a.shift == w->shift && a.seg == w->seg && a.pcrel == w->pcrel &&
		     a.val == w->val;
	}
	if (!ok) {
		fprintf(stderr,
			"FAIL '%s': kind %d size %d signed %d reg %d index %d scale %d shift %d "
			"seg %d pcrel %d val %lld err '%s'\n",
			w->text, a.kind, a.size, a.is_signed, a.reg, a.index, a.scale, a.shift, a.seg,
			a.pcrel, (long long)a.val, err);
		failures++;
	}
}

/* A whole note: a bad operand takes only its own slot. */
static void check_list(void)
{
	struct usdt_syms syms = {find, NULL};
	struct cg_usdt_spec spec;
	struct usdt_arg_errs errs;
	usdt_args_parse("-4@40+CheckpointStats(%rip) 8@%xmm0  -4@NBuffers(%rip) 8@%rax", PC, &syms,
			&spec, &errs);
	if (spec.nargs != 4 || spec.args[0].kind != CG_USDT_MEM ||
	    spec.args[1].kind != CG_USDT_BAD || spec.args[2].kind != CG_USDT_MEM ||
	    spec.args[3].kind != CG_USDT_REG || errs.msg[0][0] || !strstr(errs.msg[1], "%xmm0") ||
	    errs.msg[2][0]) {
		fprintf(stderr, "FAIL list: nargs %d kinds %d %d %d %d, err1 '%s'\n", spec.nargs,
			spec.args[0].kind, spec.args[1].kind, spec.args[2].kind, spec.args[3].kind,
			errs.msg[1]);
		failures++;
	}
	usdt_args_parse("", PC, &syms, &spec, NULL);
	if (spec.nargs != 0) {
		fprintf(stderr, "FAIL empty list: nargs %d\n", spec.nargs);
		failures++;
	}
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	for (size_t i = 0; i < n; i++)
		check_case(&cases[i]);
	check_list();
	printf("usdt operands: %zu cases, %d failed\n", n + 2, failures);
	return failures != 0;
}
