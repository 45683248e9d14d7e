/*
 * cdefs.c - the C preamble of a script: struct, union and enum
 * definitions, typedefs, #define'd constants and #include'd local headers.
 *
 * Pipeline position: the scanner (lexer.l) keeps each top-level
 * `struct x { ... };` or `typedef ...;` whole, as bpftrace does before
 * handing it to clang; the grammar (parser.y) passes it here, and what we
 * learn goes into the program's struct ast_program (records, typedefs,
 * constants) for sema to resolve casts, `->`, `.` and identifiers.
 *
 * This is a small C declaration parser, not a C compiler: enough for the
 * definitions scripts carry (SPDK's sched.bt declares its structs inline,
 * with array members, pointers and nested structs):
 *
 *   struct thread_stats { uint64_t busy_tsc; uint64_t idle_tsc; };
 *   struct thread_info {
 *           char name[64];  uint64_t id;  int lcore;
 *           struct thread_stats current_stats, last_stats;
 *           struct { int a : 3; unsigned b : 5; } bits;
 *   };
 *   enum state { IDLE, BUSY = 4 };  #define MAX_CORES 128
 *
 * Layout follows the x86-64 System V ABI: natural alignment, unions as
 * large as their largest member, bitfields packed into units of their
 * declared type.  `char x[N]` members are strings, as in bpftrace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parser_internal.h"
#include "../util/util.h"

enum { CD_INCLUDE_MAX = 8 };

enum ctok { CT_EOF, CT_IDENT, CT_NUM, CT_STR, CT_PUNCT };

struct cd {
	struct ast_program *prog;
	struct diags *diags;
	const char *p, *end;
	int line, col;
	/* current token */
	enum ctok tok;
	char text[256];
	uint64_t num;
	struct src_loc loc;
	bool failed;
	int depth;         /* nested struct/union bodies and parentheses (bounded) */
	bool quiet;        /* #define values: a non-constant is no error, just no constant */
	const char *where; /* "x.h:" prefix for errors inside an included file */
	struct src_loc at; /* the #include's location in that case */
};

static void cd_error(struct cd *c, const char *fmt, const char *arg)
{
	if (c->failed)
		return;
	c->failed = true;
	if (c->quiet)
		return;
	if (c->where)
		diag_error(c->diags, c->at, "%s%d: in C definition: %s%s", c->where, c->loc.line,
			   fmt, arg ? arg : "");
	else
		diag_error(c->diags, c->loc, "%s%s", fmt, arg ? arg : "");
}

static void cd_adv(struct cd *c, size_t n)
{
	for (size_t i = 0; i < n && c->p < c->end; i++, c->p++) {
		if (*c->p == '\n') {
			c->line++;
			c->col = 1;
		} else {
			c->col++;
		}
	}
}

/* next token -> c->tok / text / num / loc */
static void cd_next(struct cd *c)
{
	for (;;) {
		while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' ||
					 *c->p == '\r' || *c->p == '\f' || *c->p == '\v' ||
					 (*c->p == '\\' && c->p + 1 < c->end && c->p[1] == '\n')))
			cd_adv(c, 1);
		if (c->p + 1 < c->end && c->p[0] == '/' && c->p[1] == '/') {
			while (c->p < c->end && *c->p != '\n')
				cd_adv(c, 1);
			continue;
		}
		if (c->p + 1 < c->end && c->p[0] == '/' && c->p[1] == '*') {
			cd_adv(c, 2);
			while (c->p < c->end && !(c->p[0] == '*' && c->p + 1 < c->end && c->p[1] == '/'))
				cd_adv(c, 1);
			cd_adv(c, 2);
			continue;
		}
		break;
	}
	c->loc = (struct src_loc){ c->line, c->col, c->line, c->col + 1 };
	c->text[0] = '\0';
	if (c->p >= c->end) {
		c->tok = CT_EOF;
		return;
	}
	const char *s = c->p;
	size_t n = 0;
	char ch = *s;
	if (ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
		while (s + n < c->end && (s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') ||
					  (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9')))
			n++;
		c->tok = CT_IDENT;
	} else if (ch >= '0' && ch <= '9') {
		while (s + n < c->end && ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'z') ||
					  (s[n] >= 'A' && s[n] <= 'Z')))
			n++;
		c->tok = CT_NUM;
	} else if (ch == '"') {
		n = 1;
		while (s + n < c->end && s[n] != '"' && s[n] != '\n')
			n += (s[n] == '\\' && s + n + 1 < c->end) ? 2 : 1;
		if (s + n < c->end && s[n] == '"')
			n++;
		c->tok = CT_STR;
	} else {
		n = 1;
		if (s + 1 < c->end && ((ch == '<' && s[1] == '<') || (ch == '>' && s[1] == '>')))
			n = 2;
		c->tok = CT_PUNCT;
	}
	size_t k = n < sizeof(c->text) - 1 ? n : sizeof(c->text) - 1;
	memcpy(c->text, s, k);
	c->text[k] = '\0';
	c->loc.end_col = c->col + (int)n;
	if (c->tok == CT_NUM) {
		char digits[64];
		size_t m = 0;
		for (size_t i = 0; i < k && m + 1 < sizeof(digits); i++)
			if (!strchr("uUlL", c->text[i]) || (i < 2 && k > 1 && (c->text[1] == 'x' || c->text[1] == 'X')))
				digits[m++] = c->text[i];
		digits[m] = '\0';
		char *e;
		errno = 0;
		c->num = strtoull(digits, &e, 0);
		if (*e || errno)
			cd_error(c, "invalid number: ", c->text);
	}
	cd_adv(c, n);
}

static bool is(struct cd *c, const char *t)
{
	return c->tok != CT_EOF && c->tok != CT_STR && !strcmp(c->text, t);
}

static bool accept(struct cd *c, const char *t)
{
	if (!is(c, t))
		return false;
	cd_next(c);
	return true;
}

static bool expect(struct cd *c, const char *t)
{
	if (accept(c, t))
		return true;
	char msg[64];
	snprintf(msg, sizeof(msg), "expected '%s' in C definition, found ", t);
	cd_error(c, msg, c->tok == CT_EOF ? "end of definition" : c->text);
	return false;
}

/* ---- constant expressions (array sizes, enum values, #define) ------------ */

static int64_t cd_const_expr(struct cd *c);

static int64_t cd_primary(struct cd *c)
{
	if (c->tok == CT_NUM) {
		int64_t v = (int64_t)c->num;
		cd_next(c);
		return v;
	}
	if (c->depth > 256) {
		cd_error(c, "constant expression nested too deeply", NULL);
		return 0;
	}
	if (accept(c, "(")) {
		c->depth++;
		int64_t v = cd_const_expr(c);
		c->depth--;
		expect(c, ")");
		return v;
	}
	if (is(c, "-") || is(c, "~") || is(c, "+")) {
		char op = c->text[0];
		cd_next(c);
		c->depth++;
		int64_t v = cd_primary(c);
		c->depth--;
		return op == '-' ? (int64_t)(0 - (uint64_t)v) : op == '~' ? ~v : v;
	}
	if (c->tok == CT_IDENT) {
		for (int i = 0; i < c->prog->nconsts; i++)
			if (!c->prog->consts[i].str && !strcmp(c->prog->consts[i].name, c->text)) {
				cd_next(c);
				return c->prog->consts[i].value;
			}
		cd_error(c, "unknown constant in C definition: ", c->text);
		cd_next(c);
		return 0;
	}
	cd_error(c, "expected a constant in C definition, found ",
		 c->tok == CT_EOF ? "end of definition" : c->text);
	return 0;
}

/* Precedence climbing over * / % + - << >> & ^ | */
static int prec(const char *op)
{
	static const struct { const char *op; int p; } t[] = {
		{ "*", 5 }, { "/", 5 }, { "%", 5 }, { "+", 4 }, { "-", 4 }, { "<<", 3 },
		{ ">>", 3 }, { "&", 2 }, { "^", 1 }, { "|", 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (!strcmp(op, t[i].op))
			return t[i].p;
	return -1;
}

static int64_t cd_binary(struct cd *c, int min)
{
	int64_t l = cd_primary(c);
	while (c->tok == CT_PUNCT && prec(c->text) >= min && !c->failed) {
		char op[4];
		snprintf(op, sizeof(op), "%.3s", c->text);
		int p = prec(op);
		cd_next(c);
		int64_t r = cd_binary(c, p + 1);
		uint64_t ul = (uint64_t)l, ur = (uint64_t)r;
		switch (op[0]) {
		case '*': l = (int64_t)(ul * ur); break;
		case '/': l = r && !(l == INT64_MIN && r == -1) ? l / r : 0; break;
		case '%': l = r && !(l == INT64_MIN && r == -1) ? l % r : 0; break;
		case '+': l = (int64_t)(ul + ur); break;
		case '-': l = (int64_t)(ul - ur); break;
		case '<': l = (int64_t)(ul << (ur & 63)); break;
		case '>': l = l >> (ur & 63); break;
		case '&': l &= r; break;
		case '^': l ^= r; break;
		case '|': l |= r; break;
		}
	}
	return l;
}

static int64_t cd_const_expr(struct cd *c)
{
	return cd_binary(c, 0);
}

static void add_const(struct ast_program *p, const char *name, int64_t v, const char *str,
		      bool is_enum, const char *tag)
{
	for (int i = 0; i < p->nconsts; i++)
		if (!strcmp(p->consts[i].name, name)) {
			p->consts[i].value = v;
			free(p->consts[i].str);
			p->consts[i].str = str ? xstrdup(str) : NULL;
			p->consts[i].is_enum = is_enum;
			free(p->consts[i].enum_tag);
			p->consts[i].enum_tag = tag ? xstrdup(tag) : NULL;
			return;
		}
	p->consts = xrealloc(p->consts, (p->nconsts + 1) * sizeof(*p->consts));
	p->consts[p->nconsts++] = (struct ast_const){xstrdup(name), v, str ? xstrdup(str) : NULL,
						     is_enum, tag ? xstrdup(tag) : NULL};
}

/* ---- types ---------------------------------------------------------------- */

static struct ast_type int_type(int size, bool sign)
{
	return (struct ast_type){ .kind = TY_INT, .size = size, .is_signed = sign };
}

/* Integer typedef names every script may use without declaring them. */
static bool builtin_typedef(const char *n, struct ast_type *t)
{
	static const struct { const char *name; int size; bool sign; } tab[] = {
		{ "int8_t", 1, true }, { "int16_t", 2, true }, { "int32_t", 4, true },
		{ "int64_t", 8, true }, { "uint8_t", 1, false }, { "uint16_t", 2, false },
		{ "uint32_t", 4, false }, { "uint64_t", 8, false }, { "u8", 1, false },
		{ "u16", 2, false }, { "u32", 4, false }, { "u64", 8, false }, { "s8", 1, true },
		{ "s16", 2, true }, { "s32", 4, true }, { "s64", 8, true }, { "__u8", 1, false },
		{ "__u16", 2, false }, { "__u32", 4, false }, { "__u64", 8, false },
		{ "__s8", 1, true }, { "__s16", 2, true }, { "__s32", 4, true }, { "__s64", 8, true },
		{ "size_t", 8, false }, { "ssize_t", 8, true }, { "uintptr_t", 8, false },
		{ "intptr_t", 8, true }, { "ptrdiff_t", 8, true }, { "off_t", 8, true },
		{ "pid_t", 4, true }, { "uid_t", 4, false }, { "gid_t", 4, false },
		{ "bool", 1, false }, { "_Bool", 1, false },
		{ "int8", 1, true }, { "int16", 2, true }, { "int32", 4, true }, { "int64", 8, true },
		{ "uint8", 1, false }, { "uint16", 2, false }, { "uint32", 4, false },
		{ "uint64", 8, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (!strcmp(n, tab[i].name)) {
			*t = int_type(tab[i].size, tab[i].sign);
			return true;
		}
	return false;
}

static bool find_typedef(struct ast_program *p, const char *n, struct ast_type *t)
{
	for (int i = p->ntypedefs - 1; i >= 0; i--)
		if (!strcmp(p->typedefs[i].name, n)) {
			*t = p->typedefs[i].type;
			return true;
		}
	return builtin_typedef(n, t);
}

static void add_typedef(struct ast_program *p, const char *n, struct ast_type t)
{
	p->typedefs = xrealloc(p->typedefs, (p->ntypedefs + 1) * sizeof(*p->typedefs));
	p->typedefs[p->ntypedefs++] = (struct ast_typedef){ xstrdup(n), t };
}

static bool cd_record_body(struct cd *c, struct ast_record *r);
static bool cd_record_members(struct cd *c, struct ast_record *r);
static void cd_enum_body(struct cd *c, const char *tag);

static int type_align(const struct ast_type *t)
{
	switch (t->kind) {
	case TY_INT:
	case TY_PTR:
		return t->size ? t->size : 1;
	case TY_STRUCT:
		return t->rec->align ? t->rec->align : 1;
	case TY_ARRAY:
		return type_align(t->elem);
	default:
		return 1;
	}
}

/*
 * specifiers -> (qualifier | int-word | typedef-name | struct/union/enum
 *                [name] ['{' ... '}'])+
 * Returns false (after an error) if there is no type.
 */
static bool cd_specifiers(struct cd *c, struct ast_type *out)
{
	int nlong = 0, size = 0;
	bool sign = true, have = false, is_void = false;
	struct ast_type t = { 0 };
	for (;;) {
		if (c->tok != CT_IDENT)
			break;
		const char *w = c->text;
		if (!strcmp(w, "const") || !strcmp(w, "volatile") || !strcmp(w, "static") ||
		    !strcmp(w, "extern") || !strcmp(w, "register") || !strcmp(w, "inline") ||
		    !strcmp(w, "restrict") || !strcmp(w, "__restrict")) {
			cd_next(c);
			continue;
		}
		if (!strcmp(w, "unsigned") || !strcmp(w, "signed")) {
			sign = w[0] == 's';
			if (!size)
				size = 4;
			have = true;
		} else if (!strcmp(w, "char")) {
			size = 1;
			have = true;
		} else if (!strcmp(w, "short")) {
			size = 2;
			have = true;
		} else if (!strcmp(w, "int")) {
			if (!size)
				size = 4;
			have = true;
		} else if (!strcmp(w, "long")) {
			nlong++;
			size = 8;
			have = true;
		} else if (!strcmp(w, "void")) {
			is_void = have = true;
		} else if (!strcmp(w, "float") || !strcmp(w, "double")) {
			cd_error(c, "floating point types are not supported: ", w);
			return false;
		} else if (!strcmp(w, "struct") || !strcmp(w, "union") || !strcmp(w, "enum")) {
			if (have)
				break;
			char kw[8];
			snprintf(kw, sizeof(kw), "%.7s", w);
			cd_next(c);
			char name[300];
			static int anon;
			if (c->tok == CT_IDENT) {
				snprintf(name, sizeof(name), "%s %s", kw, c->text);
				cd_next(c);
			} else {
				snprintf(name, sizeof(name), "%s (anonymous at %d:%d)", kw, c->loc.line,
					 c->loc.col + anon++ * 0);
			}
			if (kw[0] == 'e') {
				if (is(c, "{"))
					cd_enum_body(c, name + 5);
				*out = int_type(4, false);
				return !c->failed;
			}
			struct ast_record *r = ast_record_find(c->prog, name, true);
			if (is(c, "{")) {
				if (r->complete) {
					cd_error(c, "redefinition of ", name);
					return false;
				}
				if (!cd_record_body(c, r))
					return false;
			}
			*out = (struct ast_type){ .kind = TY_STRUCT, .size = r->size, .rec = r };
			return true;
		} else if (!have && find_typedef(c->prog, w, &t)) {
			cd_next(c);
			*out = t;
			return true;
		} else {
			break;
		}
		cd_next(c);
	}
	if (!have) {
		cd_error(c, "unknown type name in C definition: ",
			 c->tok == CT_EOF ? "(end of definition)" : c->text);
		return false;
	}
	(void)nlong;
	*out = is_void ? (struct ast_type){ .kind = TY_NONE, .size = 0 } : int_type(size, sign);
	return true;
}

/*
 * declarator -> '*'* (name | '(' '*' name ')' '(' params ')') ('[' const ']')*
 * Builds the declared type from base into *t and the name into name.
 */
static bool cd_declarator(struct cd *c, struct ast_type base, struct ast_type *t, char *name,
			  size_t namelen)
{
	struct ast_type cur = base;
	while (accept(c, "*")) {
		while (is(c, "const") || is(c, "volatile") || is(c, "restrict"))
			cd_next(c);
		cur = ast_ptr_to(c->prog, cur);
	}
	name[0] = '\0';
	if (accept(c, "(")) {
		/* function pointer: (*name)(...) -> a pointer */
		while (accept(c, "*"))
			;
		if (c->tok == CT_IDENT) {
			snprintf(name, namelen, "%.*s", (int)namelen - 1, c->text);
			cd_next(c);
		}
		if (!expect(c, ")"))
			return false;
		if (accept(c, "(")) {
			int depth = 1;
			while (depth && c->tok != CT_EOF) {
				if (is(c, "("))
					depth++;
				else if (is(c, ")"))
					depth--;
				cd_next(c);
			}
		}
		*t = ast_ptr_to(c->prog, (struct ast_type){ .kind = TY_NONE });
		return !c->failed;
	}
	if (c->tok != CT_IDENT) {
		cd_error(c, "expected a member name in C definition, found ",
			 c->tok == CT_EOF ? "end of definition" : c->text);
		return false;
	}
	snprintf(name, namelen, "%.*s", (int)namelen - 1, c->text);
	cd_next(c);
	/* dimensions apply innermost last: int a[2][3] is 2 arrays of 3 */
	int dims[8], nd = 0;
	while (accept(c, "[")) {
		int64_t n = 0;
		if (!is(c, "]"))
			n = cd_const_expr(c);
		if (!expect(c, "]"))
			return false;
		if (n < 0 || n > (1 << 24)) {
			cd_error(c, "array size out of range in C definition for ", name);
			return false;
		}
		if (nd < 8)
			dims[nd++] = (int)n;
	}
	for (int i = nd - 1; i >= 0; i--) {
		if (cur.kind == TY_INT && cur.size == 1 && cur.is_signed && i == nd - 1) {
			cur = (struct ast_type){ .kind = TY_STR, .size = dims[i] };
			continue;
		}
		struct ast_type *e = ast_arena_alloc(c->prog, sizeof(*e));
		*e = cur;
		long long sz = (long long)cur.size * dims[i];
		if (sz > (1 << 24)) {
			cd_error(c, "array too large in C definition: ", name);
			return false;
		}
		cur = (struct ast_type){ .kind = TY_ARRAY, .size = (int)sz, .elem = e, .count = dims[i] };
	}
	*t = cur;
	return !c->failed;
}

/* record_body -> '{' (specifiers declarator [':' width] (',' ...)* ';')* '}' */
static bool cd_record_body(struct cd *c, struct ast_record *r)
{
	if (++c->depth > 64) {
		cd_error(c, "C definition nested too deeply", NULL);
		return false;
	}
	bool ok = cd_record_members(c, r);
	c->depth--;
	return ok;
}

/*
 * Where the next member goes, in bits from the record's start: the x86-64
 * System V rules gcc and clang follow.  A bitfield takes the next free
 * bits unless it would cross a boundary of its declared type's size, then
 * it starts at that boundary; bitfields of different types share units
 * (`short a:4, b:8, c:3, d:1; int e:9` puts e at bit 16, in the int unit
 * the shorts began).  `T :0` moves to the next T boundary.  Any other
 * member starts at the next byte aligned for its type.
 */
struct layout {
	int64_t bit;  /* next free bit */
	int align;    /* the record's alignment so far */
	int64_t size; /* bytes (unions: the largest member) */
};

static void layout_member(struct layout *l, bool is_union, const struct ast_type *t, int width,
			  bool bitfield, struct ast_member *m)
{
	int a = type_align(t);
	int64_t unit = (int64_t)t->size * 8;
	if (is_union) {
		m->offset = 0;
		if (t->size > l->size)
			l->size = t->size;
	} else if (bitfield && width == 0) {
		l->bit = (l->bit + a * 8 - 1) / (a * 8) * (a * 8);
		return;
	} else if (bitfield) {
		if (unit && l->bit / unit != (l->bit + width - 1) / unit)
			l->bit = (l->bit + unit - 1) / unit * unit;
		m->offset = (int)(l->bit / 8);
		m->bit_off = (int)(l->bit % 8);
		l->bit += width;
	} else {
		int64_t off = (l->bit + 7) / 8;
		off = (off + a - 1) / a * a;
		m->offset = (int)off;
		l->bit = (off + t->size) * 8;
	}
	m->bit_width = bitfield ? width : 0;
	if (a > l->align)
		l->align = a;
	if ((l->bit + 7) / 8 > l->size)
		l->size = (l->bit + 7) / 8;
}

/* An anonymous struct/union member (`struct { int a; };`): its members
 * join r's at its offset. */
static void add_anonymous(struct ast_record *r, struct layout *l, const struct ast_type *base)
{
	struct ast_member at = { 0 };
	layout_member(l, r->is_union, base, 0, false, &at);
	const struct ast_record *in = base->rec;
	for (int i = 0; i < in->nmembers; i++) {
		r->members = xrealloc(r->members, (r->nmembers + 1) * sizeof(*r->members));
		struct ast_member m = in->members[i];
		m.name = xstrdup(m.name);
		m.offset += at.offset;
		r->members[r->nmembers++] = m;
	}
}

/* member -> declarator [':' width] | ':' width (an unnamed bitfield) */
static bool cd_member(struct cd *c, struct ast_record *r, struct layout *l, struct ast_type base)
{
	struct ast_type t = base;
	char name[128] = "";
	if (!is(c, ":") && !cd_declarator(c, base, &t, name, sizeof(name)))
		return false;
	int width = 0;
	bool bitfield = false;
	if (accept(c, ":")) {
		int64_t w = cd_const_expr(c);
		if (t.kind != TY_INT || w < 0 || w > t.size * 8 || (w == 0 && name[0])) {
			cd_error(c, "invalid bitfield width for ", name[0] ? name : "(unnamed)");
			return false;
		}
		width = (int)w;
		bitfield = true;
	}
	for (int i = 0; name[0] && i < r->nmembers; i++)
		if (!strcmp(r->members[i].name, name)) {
			cd_error(c, "duplicate member ", name);
			return false;
		}
	struct ast_member m = { .type = t };
	layout_member(l, r->is_union, &t, width, bitfield, &m);
	if (!name[0])
		return true; /* padding */
	m.name = xstrdup(name);
	r->members = xrealloc(r->members, (r->nmembers + 1) * sizeof(*r->members));
	r->members[r->nmembers++] = m;
	return true;
}

/* members -> '{' (specifiers member (',' member)* ';')* '}'; the ';' before
 * '}' may be missing (`struct A { int x }`, which clang accepts) */
static bool cd_record_members(struct cd *c, struct ast_record *r)
{
	expect(c, "{");
	struct layout l = { 0, 1, 0 };
	r->complete = true; /* a struct may point to itself */
	while (!is(c, "}") && !c->failed) {
		if (c->tok == CT_EOF) {
			cd_error(c, "expected '}' in C definition", NULL);
			return false;
		}
		struct ast_type base;
		if (!cd_specifiers(c, &base))
			return false;
		if (accept(c, ";")) {
			if (base.kind == TY_STRUCT && base.rec != r && strstr(base.rec->name, "(anonymous"))
				add_anonymous(r, &l, &base);
			continue;
		}
		do {
			if (!cd_member(c, r, &l, base))
				return false;
		} while (accept(c, ","));
		if (!is(c, "}") && !expect(c, ";"))
			return false;
	}
	expect(c, "}");
	r->align = l.align;
	r->size = (int)((l.size + l.align - 1) / l.align * l.align);
	return !c->failed;
}

/* enum_body -> '{' name ['=' const] (',' name ['=' const])* [','] '}'; tag:
 * the enum's name without "enum " (its enumerators print by it) */
static void cd_enum_body(struct cd *c, const char *tag)
{
	expect(c, "{");
	int64_t next = 0;
	while (!is(c, "}") && !c->failed) {
		if (c->tok != CT_IDENT) {
			cd_error(c, "expected an enumerator name, found ",
				 c->tok == CT_EOF ? "end of definition" : c->text);
			return;
		}
		char name[128];
		snprintf(name, sizeof(name), "%.127s", c->text);
		cd_next(c);
		if (accept(c, "="))
			next = cd_const_expr(c);
		add_const(c->prog, name, next, NULL, true, tag);
		next++;
		if (!accept(c, ","))
			break;
	}
	expect(c, "}");
}

/* external -> 'typedef' specifiers declarator ';'
 *           | specifiers [declarator (',' declarator)*] ';' */
static void cd_external(struct cd *c)
{
	bool td = accept(c, "typedef");
	struct ast_type base;
	if (!cd_specifiers(c, &base))
		return;
	if (accept(c, ";") || c->tok == CT_EOF) {
		if (td)
			cd_error(c, "typedef requires a name", NULL);
		return;
	}
	do {
		struct ast_type t;
		char name[128];
		if (!cd_declarator(c, base, &t, name, sizeof(name)))
			return;
		if (td)
			add_typedef(c->prog, name, t);
		/* a variable declaration in the preamble has no use; ignore it */
	} while (accept(c, ","));
	if (c->tok != CT_EOF)
		expect(c, ";");
}

static void cd_init(struct cd *c, struct ast_program *p, const char *text, size_t len, int line,
		    int col, struct diags *diags)
{
	memset(c, 0, sizeof(*c));
	c->prog = p;
	c->diags = diags;
	c->p = text;
	c->end = text + len;
	c->line = line;
	c->col = col;
	cd_next(c);
}

int cdefs_parse(struct ast_program *p, const char *text, int line, int col, struct diags *diags,
		const char *filename, int include_depth)
{
	(void)filename;
	(void)include_depth;
	struct cd c;
	cd_init(&c, p, text, strlen(text), line, col, diags);
	while (c.tok != CT_EOF && !c.failed)
		cd_external(&c);
	return c.failed ? -1 : 0;
}

/* ---- preprocessor lines --------------------------------------------------- */

static int include_file(struct ast_program *p, const char *path, struct src_loc loc,
			struct diags *diags, const char *filename, int depth);

/* #define NAME const-expr | "string"; other directives are ignored. */
int cdefs_preproc(struct ast_program *p, const char *text, struct src_loc loc, struct diags *diags,
		  const char *filename, int include_depth)
{
	struct cd c;
	cd_init(&c, p, text + 1, strlen(text + 1), loc.line, loc.col + 1, diags);
	c.loc = loc;
	if (c.tok != CT_IDENT) {
		diag_error(diags, loc, "invalid preprocessor directive");
		return -1;
	}
	if (accept(&c, "define")) {
		if (c.tok != CT_IDENT) {
			diag_error(diags, loc, "#define needs a name");
			return -1;
		}
		char name[128];
		snprintf(name, sizeof(name), "%.127s", c.text);
		/* function-like macros ("F(x)") are not constants: ignore them */
		if (c.p < c.end && *c.p == '(')
			return 0;
		c.quiet = true;
		cd_next(&c);
		if (c.tok == CT_EOF)
			return 0; /* include guard or flag */
		if (c.tok == CT_STR) {
			char *s = xstrndup(c.text + 1, strlen(c.text) > 1 ? strlen(c.text) - 2 : 0);
			add_const(p, name, 0, s, false, NULL);
			free(s);
			return 0;
		}
		int64_t v = cd_const_expr(&c);
		if (c.failed || c.tok != CT_EOF)
			return 0; /* not a constant; bpftrace would expand it textually */
		add_const(p, name, v, NULL, false, NULL);
		return 0;
	}
	if (accept(&c, "include")) {
		char path[512];
		if (c.tok == CT_STR) {
			snprintf(path, sizeof(path), "%.*s", (int)strlen(c.text) - 2, c.text + 1);
		} else if (is(&c, "<")) {
			const char *s = strchr(text, '<'), *e = strchr(text, '>');
			if (!e || e < s) {
				diag_error(diags, loc, "#include expects \"FILENAME\" or <FILENAME>");
				return -1;
			}
			snprintf(path, sizeof(path), "%.*s", (int)(e - s - 1), s + 1);
			/* system headers (kernel types) are not available to ubt; a
			 * script that needs their types gets "Unknown struct" later */
			char local[600];
			snprintf(local, sizeof(local), "%s", path);
			return 0;
		} else {
			diag_error(diags, loc, "#include expects \"FILENAME\" or <FILENAME>");
			return -1;
		}
		return include_file(p, path, loc, diags, filename, include_depth + 1);
	}
	/* #if/#ifdef/#ifndef/#endif/#pragma/#undef: nothing to do */
	return 0;
}

static int include_file(struct ast_program *p, const char *path, struct src_loc loc,
			struct diags *diags, const char *filename, int depth)
{
	if (depth > CD_INCLUDE_MAX) {
		diag_error(diags, loc, "#include nested too deeply: %s", path);
		return -1;
	}
	char full[1024];
	if (path[0] != '/' && filename && strcmp(filename, "stdin") && strchr(filename, '/')) {
		const char *slash = strrchr(filename, '/');
		snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - filename), filename, path);
	} else {
		snprintf(full, sizeof(full), "%s", path);
	}
	char *src;
	size_t len;
	if (read_file(full, &src, &len)) {
		diag_error(diags, loc, "#include file not found: %s", path);
		return -1;
	}
	int ret = 0;
	/* preprocessor lines one by one; everything else is C definitions */
	struct buf defs = { 0 };
	int line = 1;
	for (char *l = src; l < src + len;) {
		char *nl = memchr(l, '\n', (size_t)(src + len - l));
		size_t ll = nl ? (size_t)(nl - l) : (size_t)(src + len - l);
		const char *q = l;
		while (q < l + ll && (*q == ' ' || *q == '\t'))
			q++;
		if (q < l + ll && *q == '#') {
			char *dir = xstrndup(q, ll - (size_t)(q - l));
			if (cdefs_preproc(p, dir, loc, diags, full, depth))
				ret = -1;
			free(dir);
			buf_append(&defs, "\n", 1);
		} else {
			buf_append(&defs, l, ll);
			buf_append(&defs, "\n", 1);
		}
		line++;
		l += ll + 1;
	}
	struct cd c;
	buf_append(&defs, "", 1);
	cd_init(&c, p, defs.data, strlen(defs.data), 1, 1, diags);
	char where[600];
	snprintf(where, sizeof(where), "%s:", path);
	c.where = where;
	c.at = loc;
	while (c.tok != CT_EOF && !c.failed)
		cd_external(&c);
	if (c.failed)
		ret = -1;
	buf_free(&defs);
	free(src);
	return ret;
}
