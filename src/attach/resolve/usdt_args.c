/*
 * usdt_args.c - USDT argument operands: from a note's text, e.g.
 *
 *   Arguments: -4@%edx 8@-16(%rbp) -4@40+CheckpointStats(%rip) 8@%fs:-8
 *
 * to struct cg_usdt_arg, which codegen compiles into one or two loads
 * (codegen.h draws the kinds).  Pure: symbols are looked up through the
 * caller's struct usdt_syms (usdt.c: the ELF file), so the unit tests run
 * it on tables of text.
 *
 * Pipeline position: attach (usdt.c, when a usdt attach point is
 * resolved).  Each operand is `[-]SIZE@OPERAND` (SIZE 1, 2, 4 or 8, negative
 * for signed; very old notes omit it: 8 bytes, signed) in AT&T syntax, as
 * GNU as and clang's assembler accept it for the "nor" constraint that
 * sys/sdt.h uses.  The grammar parsed here:
 *
 *   operand -> '%' reg                          register, any width
 *            | '$' expr                         immediate (a symbol: its address)
 *            | ['%' seg ':'] [expr] ['(' [reg] [',' reg [',' scale]] ')']
 *   expr    -> term {('+' | '-') term}          at most one symbol, added
 *   term    -> number | symbol ['@' reloc]      0x10, 16, -8; sym, sym@tpoff
 *
 * so `sym+8`, `8+sym`, `-8+sym`, `sym-8`, `(,%rax,8)`, `sym(,%rax,8)` and
 * `%fs:v@tpoff` all parse.  An operand that still cannot be parsed (a
 * vector register, `%gs:`, a relocation other than @tpoff, a symbol the
 * file does not define) becomes CG_USDT_BAD with the reason and its text;
 * usdt.c refuses only a script that reads that argument.
 */
#include "attach/resolve/usdt.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RM(f) ((uint8_t)offsetof(struct rt_regs_mid, f))
#define REG_PC RM(pc)

static const struct {
	const char *name;
	uint8_t off, shift;
} regs[] = {
	{"rax", RM(rax)}, {"eax", RM(rax)}, {"ax", RM(rax)}, {"al", RM(rax)}, {"ah", RM(rax), 8},
	{"rbx", RM(rbx)}, {"ebx", RM(rbx)}, {"bx", RM(rbx)}, {"bl", RM(rbx)}, {"bh", RM(rbx), 8},
	{"rcx", RM(rcx)}, {"ecx", RM(rcx)}, {"cx", RM(rcx)}, {"cl", RM(rcx)}, {"ch", RM(rcx), 8},
	{"rdx", RM(rdx)}, {"edx", RM(rdx)}, {"dx", RM(rdx)}, {"dl", RM(rdx)}, {"dh", RM(rdx), 8},
	{"rsi", RM(rsi)}, {"esi", RM(rsi)}, {"si", RM(rsi)}, {"sil", RM(rsi)},
	{"rdi", RM(rdi)}, {"edi", RM(rdi)}, {"di", RM(rdi)}, {"dil", RM(rdi)},
	{"rbp", RM(rbp)}, {"ebp", RM(rbp)}, {"bp", RM(rbp)}, {"bpl", RM(rbp)},
	{"rsp", RM(rsp)}, {"esp", RM(rsp)}, {"sp", RM(rsp)}, {"spl", RM(rsp)},
	{"r8", RM(r8)},   {"r9", RM(r9)},   {"r10", RM(r10)}, {"r11", RM(r11)},
	{"r12", RM(r12)}, {"r13", RM(r13)}, {"r14", RM(r14)}, {"r15", RM(r15)},
	{"rip", REG_PC},
};

/* The operand being parsed: [s, end), and where a failure is described. */
struct cur {
	const char *s, *end;
	char *err;
	size_t errlen;
};

static int fail(struct cur *c, const char *fmt, const char *what)
{
	snprintf(c->err, c->errlen, fmt, what);
	return -EINVAL;
}

static bool at(const struct cur *c, char ch)
{
	return c->s < c->end && *c->s == ch;
}

/* A word of [A-Za-z0-9_.$] at c (no '@', which starts a relocation). */
static size_t word_len(const struct cur *c)
{
	size_t n = 0;
	while (c->s + n < c->end &&
	       (isalnum((unsigned char)c->s[n]) || c->s[n] == '_' || c->s[n] == '.' || c->s[n] == '$'))
		n++;
	return n;
}

/* reg -> '%' name: "%r8d" names r8's slot; widths r8 r8d r8w r8b r8l all do. */
static int parse_reg(struct cur *c, uint8_t *off, uint8_t *shift)
{
	if (!at(c, '%'))
		return fail(c, "%s", "register expected");
	c->s++;
	size_t len = word_len(c);
	char name[8];
	if (len == 0 || len >= sizeof(name))
		return fail(c, "%s", "register expected");
	memcpy(name, c->s, len);
	name[len] = 0;
	if (name[0] == 'r' && isdigit((unsigned char)name[1]) && len >= 3 &&
	    strchr("dwbl", name[len - 1]))
		name[len - 1] = 0; /* r8d r8w r8b r8l -> r8 */
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(regs[i].name, name)) {
			*off = regs[i].off;
			*shift = regs[i].shift;
			c->s += len;
			return 0;
		}
	snprintf(c->err, c->errlen, "register %%%s cannot be read", name);
	return -EINVAL;
}

/* A number at c: decimal, 0x hex or 0 octal, as the assemblers write them. */
static int parse_number(struct cur *c, int64_t *v)
{
	char buf[32];
	size_t n = word_len(c);
	if (n == 0 || n >= sizeof(buf))
		return fail(c, "%s", "number expected");
	memcpy(buf, c->s, n);
	buf[n] = 0;
	char *e;
	errno = 0;
	unsigned long long u = strtoull(buf, &e, 0);
	if (*e || errno)
		return fail(c, "bad number '%s'", buf);
	*v = (int64_t)u;
	c->s += n;
	return 0;
}

/* The value of expr: numbers summed, and the one symbol's address if any. */
struct expr {
	int64_t num;
	bool has_sym, tpoff;
	int64_t sym; /* link-time address, or offset from the thread pointer (tpoff) */
};

/* term -> number | symbol ['@' reloc] */
static int parse_term(struct cur *c, const struct usdt_syms *syms, int sign, struct expr *x)
{
	if (c->s >= c->end)
		return fail(c, "%s", "missing term");
	if (isdigit((unsigned char)*c->s)) {
		int64_t v;
		if (parse_number(c, &v))
			return -EINVAL;
		/* wrapping, as the assembler's 64-bit arithmetic does ($-2^63) */
		uint64_t u = sign < 0 ? 0 - (uint64_t)v : (uint64_t)v;
		x->num = (int64_t)((uint64_t)x->num + u);
		return 0;
	}
	size_t n = word_len(c);
	if (!n || x->has_sym || sign < 0)
		return fail(c, "%s", n ? "a symbol may only be added, once" : "unexpected character");
	char name[256];
	if (n >= sizeof(name))
		return fail(c, "%s", "symbol name too long");
	memcpy(name, c->s, n);
	name[n] = 0;
	c->s += n;
	bool tpoff = false;
	if (at(c, '@')) {
		c->s++;
		size_t r = word_len(c);
		char rel[32];
		snprintf(rel, sizeof(rel), "%.*s", (int)r, c->s);
		if (strcmp(rel, "tpoff") && strcmp(rel, "ntpoff"))
			return fail(c, "relocation '@%s' is not supported", rel);
		tpoff = true;
		c->s += r;
	}
	if (!syms || !syms->find || syms->find(syms->ctx, name, tpoff, &x->sym)) {
		snprintf(c->err, c->errlen, "symbol '%s' not found", name);
		return -EINVAL;
	}
	x->has_sym = true;
	x->tpoff = tpoff;
	return 0;
}

/* expr -> ['+' | '-'] term {('+' | '-') term} */
static int parse_expr(struct cur *c, const struct usdt_syms *syms, struct expr *x)
{
	memset(x, 0, sizeof(*x));
	int sign = 1;
	if (at(c, '-') || at(c, '+'))
		sign = *c->s++ == '-' ? -1 : 1;
	if (parse_term(c, syms, sign, x))
		return -EINVAL;
	while (at(c, '+') || at(c, '-')) {
		sign = *c->s++ == '-' ? -1 : 1;
		if (parse_term(c, syms, sign, x))
			return -EINVAL;
	}
	return 0;
}

/*
 * An address register at c is a 64-bit one (%rax, %r8, %rip): (%eax) or
 * (%r8d) would address with the low half only (an addr32 operand, x32's),
 * which reading the whole register gets wrong.
 */
static int addr_reg(struct cur *c, uint8_t *off, uint8_t *shift)
{
	if (!at(c, '%'))
		return parse_reg(c, off, shift); /* "register expected" */
	const char *n = c->s + 1;
	size_t len = word_len(&(struct cur){.s = n, .end = c->end});
	bool numbered = len >= 2 && n[0] == 'r' && isdigit((unsigned char)n[1]);
	if (len && (n[0] != 'r' || (numbered && !isdigit((unsigned char)n[len - 1]))))
		return fail(c, "%s", "only a 64-bit register can address memory");
	return parse_reg(c, off, shift);
}

/* '(' [reg] [',' reg [',' scale]] ')' */
static int parse_regs(struct cur *c, struct cg_usdt_arg *a)
{
	uint8_t shift = 0;
	c->s++;
	if (at(c, '%') && addr_reg(c, &a->reg, &shift))
		return -EINVAL;
	if (at(c, ',')) {
		c->s++;
		if (addr_reg(c, &a->index, &shift))
			return -EINVAL;
		if (a->index == REG_PC)
			return fail(c, "%s", "%rip cannot be an index");
		if (at(c, ',')) {
			c->s++;
			int64_t sc;
			if (parse_number(c, &sc) || (sc != 1 && sc != 2 && sc != 4 && sc != 8))
				return fail(c, "%s", "scale must be 1, 2, 4 or 8");
			a->scale = (uint8_t)sc;
		}
	}
	if (!at(c, ')'))
		return fail(c, "%s", "')' expected");
	c->s++;
	return 0;
}

/* ['%' seg ':'] [expr] ['(' regs ')'] */
static int parse_mem(struct cur *c, const struct usdt_syms *syms, uint64_t pc,
		     struct cg_usdt_arg *a)
{
	a->kind = CG_USDT_MEM;
	if (at(c, '%')) {
		size_t n = (c->s++, word_len(c));
		if (n != 2 || c->s + 2 >= c->end || c->s[1] != 's' || c->s[2] != ':')
			return fail(c, "%s", "segment register expected");
		if (c->s[0] == 'g')
			return fail(c, "%s", "the %gs segment is not supported");
		if (!strchr("fcdes", c->s[0]))
			return fail(c, "%s", "segment register expected");
		if (c->s[0] == 'f')
			a->seg = CG_USDT_SEG_FS;
		c->s += 3;
	}
	struct expr x = {0};
	bool has_expr = c->s < c->end && *c->s != '(';
	if (has_expr && parse_expr(c, syms, &x))
		return -EINVAL;
	if (at(c, '(') && parse_regs(c, a))
		return -EINVAL;
	if (x.tpoff && a->seg != CG_USDT_SEG_FS)
		return fail(c, "%s", "@tpoff outside %fs: is not an address");
	if (a->reg == REG_PC) {
		/* sym(%rip) names sym itself: relative to the location, whose run-time
		 * address the trampoline saves (rt_regs_mid.pc) */
		if (!x.has_sym || a->index != CG_USDT_NOREG)
			return fail(c, "%s", "%rip needs a symbol");
		a->reg = CG_USDT_NOREG;
	}
	if (x.has_sym && !x.tpoff) {
		/* an address in the file (also absolute, non-PIC): follows the load bias */
		a->pcrel = true;
		a->val = x.sym - (int64_t)pc + x.num;
	} else {
		a->val = x.num + (x.has_sym ? x.sym : 0);
	}
	if (a->reg == CG_USDT_NOREG && a->index == CG_USDT_NOREG && !a->pcrel &&
	    a->seg == CG_USDT_SEG_NONE)
		return fail(c, "%s", "an absolute address without a symbol");
	return 0;
}

/* [-]SIZE@ -> a->size, a->is_signed; absent: 8 bytes, signed. */
static int parse_size(struct cur *c, struct cg_usdt_arg *a)
{
	const char *p = memchr(c->s, '@', c->end - c->s);
	a->size = 8;
	a->is_signed = true;
	if (!p || (c->s < c->end && (*c->s == '%' || *c->s == '$')))
		return 0;
	const char *q = c->s;
	bool neg = *q == '-';
	q += neg;
	long v = 0;
	while (q < p && isdigit((unsigned char)*q) && v < 100)
		v = v * 10 + (*q++ - '0');
	if (q < p && *q == 'f' && q + 1 == p)
		return fail(c, "%s", "floating-point arguments are not supported");
	if (q != p || (v != 1 && v != 2 && v != 4 && v != 8)) {
		/* '@' inside the operand (sym@tpoff) with no size in front */
		if (q != p && !neg)
			return 0;
		return fail(c, "%s", "bad size");
	}
	a->size = (uint8_t)v;
	a->is_signed = neg;
	c->s = p + 1;
	return 0;
}

int usdt_arg_parse(const char *text, size_t len, uint64_t pc, const struct usdt_syms *syms,
		   struct cg_usdt_arg *a, char *err, size_t errlen)
{
	struct cur c = {text, text + len, err, errlen};
	memset(a, 0, sizeof(*a));
	a->reg = a->index = CG_USDT_NOREG;
	a->scale = 1;
	int ret = parse_size(&c, a);
	if (ret)
		goto out;
	if (at(&c, '%') && !(c.s + 3 < c.end && c.s[3] == ':')) {
		a->kind = CG_USDT_REG;
		ret = parse_reg(&c, &a->reg, &a->shift);
		if (!ret && a->reg == REG_PC)
			ret = fail(&c, "%s", "%rip is not a value");
	} else if (at(&c, '$')) {
		struct expr x;
		c.s++;
		a->kind = CG_USDT_CONST;
		ret = parse_expr(&c, syms, &x);
		if (!ret && x.has_sym && !x.tpoff) {
			a->pcrel = true; /* $sym: the symbol's run-time address */
			a->val = x.sym - (int64_t)pc + x.num;
		} else if (!ret) {
			a->val = x.num + (x.has_sym ? x.sym : 0);
		}
	} else {
		ret = parse_mem(&c, syms, pc, a);
	}
	if (!ret && c.s != c.end)
		ret = fail(&c, "unexpected '%.1s'", c.s);
out:
	if (ret) {
		char why[128];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "cannot parse argument '%.*s': %s", (int)len, text, why);
		memset(a, 0, sizeof(*a));
		a->kind = CG_USDT_BAD;
		a->reg = a->index = CG_USDT_NOREG;
	}
	return ret;
}

void usdt_args_parse(const char *args, uint64_t pc, const struct usdt_syms *syms,
		     struct cg_usdt_spec *spec, struct usdt_arg_errs *errs)
{
	const char *s = args;
	memset(spec, 0, sizeof(*spec));
	if (errs)
		memset(errs, 0, sizeof(*errs));
	while (spec->nargs < CG_USDT_MAX_ARGS) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return;
		size_t len = strcspn(s, " \t");
		char scratch[USDT_ERR_LEN];
		int i = spec->nargs++;
		usdt_arg_parse(s, len, pc, syms, &spec->args[i], errs ? errs->msg[i] : scratch,
			       USDT_ERR_LEN);
		s += len;
	}
}
