/*
 * test_usdt_args.c - table tests of the USDT operand parser
 * (src/attach/resolve/usdt_args.c): operand text in, struct cg_usdt_arg out, or
 * the reason it cannot be read.
 *
 * The operands are the forms GNU as and clang's assembler accept for the
 * "nor" constraint of sys/sdt.h, among them real notes: PostgreSQL 15's
 * `-4@40+CheckpointStats(%rip)`, python3.11's `-4@112(%rsp)`.  The symbol
 * table is fixed; the location is at PC.  A second table takes whole
 * notes' operand lists through usdt_args_parse(): each operand its slot,
 * a bad one only its own.
 */
#include "attach/resolve/usdt.h"
#include "util/util.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#define PC 0x1ec240
#define R(f) ((uint8_t)offsetof(struct rt_regs_mid, f))
#define NO CG_USDT_NOREG

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
	for (size_t i = 0; i < ARRAY_SIZE(symtab); i++)
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
	OK("8@%rbx", G, 8, 0, R(rbx), NO, 1, 0, 0, 0, 0),
	OK("-8@%rcx", G, 8, 1, R(rcx), NO, 1, 0, 0, 0, 0),
	OK("4@%eax", G, 4, 0, R(rax), NO, 1, 0, 0, 0, 0),
	OK("4@%esp", G, 4, 0, R(rsp), NO, 1, 0, 0, 0, 0),
	OK("2@%ax", G, 2, 0, R(rax), NO, 1, 0, 0, 0, 0),
	OK("-2@%bp", G, 2, 1, R(rbp), NO, 1, 0, 0, 0, 0),
	OK("1@%al", G, 1, 0, R(rax), NO, 1, 0, 0, 0, 0),
	OK("1@%ch", G, 1, 0, R(rcx), NO, 1, 8, 0, 0, 0),
	OK("1@%dh", G, 1, 0, R(rdx), NO, 1, 8, 0, 0, 0),
	OK("1@%sil", G, 1, 0, R(rsi), NO, 1, 0, 0, 0, 0),
	OK("1@%spl", G, 1, 0, R(rsp), NO, 1, 0, 0, 0, 0),
	OK("8@%r8", G, 8, 0, R(r8), NO, 1, 0, 0, 0, 0),
	OK("4@%r11d", G, 4, 0, R(r11), NO, 1, 0, 0, 0, 0),
	OK("-2@%r13w", G, 2, 1, R(r13), NO, 1, 0, 0, 0, 0),
	OK("8@%r14", G, 8, 0, R(r14), NO, 1, 0, 0, 0, 0),
	/* immediates */
	OK("-4@$-7", C, 4, 1, NO, NO, 1, 0, 0, 0, -7),
	OK("4@$0x10", C, 4, 0, NO, NO, 1, 0, 0, 0, 16),
	OK("8@$18446744073709551615", C, 8, 0, NO, NO, 1, 0, 0, 0, -1),
	OK("8@$0", C, 8, 0, NO, NO, 1, 0, 0, 0, 0),
	OK("-8@$-9223372036854775808", C, 8, 1, NO, NO, 1, 0, 0, 0, INT64_MIN),
	OK("1@$255", C, 1, 0, NO, NO, 1, 0, 0, 0, 255),
	OK("-2@$-0x10", C, 2, 1, NO, NO, 1, 0, 0, 0, -16),
	OK("8@$NBuffers", C, 8, 0, NO, NO, 1, 0, 0, 1, 0x886010 - PC),
	OK("8@$NBuffers+8", C, 8, 0, NO, NO, 1, 0, 0, 1, 0x886018 - PC),
	/* base + displacement, negative too */
	OK("8@-16(%rbp)", M, 8, 0, R(rbp), NO, 1, 0, 0, 0, -16),
	OK("-4@112(%rsp)", M, 4, 1, R(rsp), NO, 1, 0, 0, 0, 112),
	OK("4@(%rdi)", M, 4, 0, R(rdi), NO, 1, 0, 0, 0, 0),
	OK("8@-0x18(%r13)", M, 8, 0, R(r13), NO, 1, 0, 0, 0, -24),
	OK("1@0x7fffffff(%rax)", M, 1, 0, R(rax), NO, 1, 0, 0, 0, 0x7fffffff),
	OK("-1@-1(%r15)", M, 1, 1, R(r15), NO, 1, 0, 0, 0, -1),
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
	BAD("", "cannot parse argument ''"),
	BAD("8@", "cannot parse argument '8@'"),
	BAD("@%rax", "cannot parse argument '@%rax'"),
	BAD("8@%", "cannot parse argument '8@%'"),
	BAD("8@%foo", "cannot parse argument '8@%foo'"),
	BAD("8@$", "cannot parse argument '8@$'"),
	BAD("8@$nosuch", "symbol 'nosuch' not found"),
	BAD("16@%rax", "bad size"),
	BAD("0@%rax", "bad size"),
	BAD("x@%rax", "cannot parse argument 'x@%rax'"),
	BAD("4@(%rax,%rbx,16)", "scale"),
	BAD("4@8(%rax,%rbx,2", "')' expected"),
	BAD("4@%fs:%rax", "cannot parse argument '4@%fs:%rax'"),
	BAD("4@%fs:nosuch@tpoff", "symbol 'nosuch' not found"),
	BAD("4@%fs:NBuffers@tpoff", "NBuffers"),
};

static void check_case(const struct want *w)
{
	struct usdt_syms syms = {find, NULL};
	struct cg_usdt_arg a;
	char err[USDT_ERR_LEN] = "";
	int ret = usdt_arg_parse(w->text, strlen(w->text), PC, &syms, &a, err, sizeof(err));
	const char *t = w->text;
	CHECK_EQ(a.kind, w->kind, "'%s' (%s)", t, err);
	if (w->kind == CG_USDT_BAD) {
		CHECK(ret != 0, "'%s' refused", t);
		CHECK(strstr(err, w->err) && strstr(err, t), "'%s': message '%s', want '%s'", t, err,
		      w->err);
		return;
	}
	CHECK_EQ(ret, 0, "'%s'", t);
	CHECK_EQ(a.size, w->size, "'%s'", t);
	CHECK_EQ(a.is_signed, w->sign, "'%s'", t);
	CHECK_EQ(a.reg, w->reg, "'%s'", t);
	CHECK_EQ(a.index, w->index, "'%s'", t);
	CHECK_EQ(a.scale, w->scale, "'%s'", t);
	CHECK_EQ(a.shift, w->shift, "'%s'", t);
	CHECK_EQ(a.seg, w->seg, "'%s'", t);
	CHECK_EQ(a.pcrel, w->pcrel, "'%s'", t);
	CHECK_EQ(a.val, w->val, "'%s'", t);
}

/*
 * Whole notes: the kinds of the operands in order ('C'onst, 'R'eg,
 * 'M'em, 'B'ad), and the index of the bad ones' messages.
 */
static const struct {
	const char *args;
	const char *kinds;
} lists[] = {
	{"-4@40+CheckpointStats(%rip) 8@%xmm0  -4@NBuffers(%rip) 8@%rax", "MBMR"},
	{"", ""},
	{"   ", ""},
	{"8@%rax", "R"},
	{"  8@%rax  ", "R"},
	{"8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%r8 8@%r9", "RRRRRR"},
	{"-4@$5 8@-8(%rbp) 1@%al", "CMR"},
	{"8@%xmm0 8@%xmm1", "BB"},
	{"bogus 8@%rax", "BR"},
	{"8@%rax\t-4@%edx", "RR"},
	{"1@%al 1@%bl 1@%cl 1@%dl 1@%sil 1@%dil 1@%r8b 1@%r9b 1@%r10b 1@%r11b 1@%r12b 1@%r13b",
	 "RRRRRRRRRRRR"},
};

static void check_lists(void)
{
	struct usdt_syms syms = {find, NULL};
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		struct cg_usdt_spec spec;
		struct usdt_arg_errs errs;
		const char *args = lists[i].args;
		usdt_args_parse(args, PC, &syms, &spec, &errs);
		char got[CG_USDT_MAX_ARGS + 1] = "";
		for (int k = 0; k < spec.nargs && k < CG_USDT_MAX_ARGS; k++) {
			uint8_t kind = spec.args[k].kind;
			got[k] = kind == CG_USDT_CONST ? 'C'
				 : kind == CG_USDT_REG ? 'R'
				 : kind == CG_USDT_MEM ? 'M'
				 : kind == CG_USDT_BAD ? 'B'
						       : '?';
			/* a message for each bad operand, none for the others */
			CHECK_EQ(errs.msg[k][0] != 0, kind == CG_USDT_BAD, "'%s' operand %d: '%s'", args, k,
				 errs.msg[k]);
		}
		CHECK_STR(got, lists[i].kinds, "'%s'", args);
	}
	/* errs may be NULL */
	struct cg_usdt_spec spec;
	usdt_args_parse("8@%xmm0 8@%rax", PC, &syms, &spec, NULL);
	CHECK_EQ(spec.nargs, 2, "without errs");
	CHECK_EQ(spec.args[0].kind, CG_USDT_BAD, "without errs");
	CHECK_EQ(spec.args[1].kind, CG_USDT_REG, "without errs");
}

int main(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_case(&cases[i]);
	check_lists();
	return check_summary("usdt_args");
}
