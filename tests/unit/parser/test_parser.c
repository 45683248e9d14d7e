/*
 * test_parser.c - table-driven tests of the front end (parse_script() and
 * sema_check()): for each script in cases.h, the AST dump without and with
 * types and the full diagnostic text must match byte for byte.  Most
 * expectations are what bpftrace 0.17 itself prints for the same script.
 * A second part checks what sema_info records (maps, variables, printf
 * formats) and feeds pathological inputs (deep nesting, 1 MB scripts, NUL
 * bytes, bad UTF-8) that must give an error or succeed, never crash, and
 * a table of attach points split by parse_script() (attach_spec.c).
 *
 * Checks are tests/unit/check.h's: one line per failure, then
 * "parser: N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/ast.h"
#include "sema/sema.h"
#include "util/util.h"

#include "../check.h"

struct tcase {
	const char *name;
	const char *src;
	const char *ast;   /* NULL: the parse must fail */
	const char *typed; /* NULL: sema must fail (or was not reached) */
	const char *diag;  /* everything diag_print() prints */
};

#include "cases.h"

struct result {
	char *ast, *typed, *diag;
	int parse_rc, sema_rc;
	struct sema_info info;
	struct ast_node *prog;
};

static char *dump(const struct ast_node *prog, bool types)
{
	char *s = NULL;
	size_t n;
	FILE *f = open_memstream(&s, &n);
	ast_dump(prog, types, f);
	fclose(f);
	return s;
}

/* Runs both stages; keeps the tree and sema_info for the caller. */
static void run(const char *src, size_t len, struct result *r)
{
	struct diags d;
	memset(r, 0, sizeof(*r));
	diag_init(&d, "stdin", src, len);
	r->parse_rc = parse_script(src, len, &d, &r->prog);
	r->sema_rc = -1;
	if (r->parse_rc == 0) {
		r->ast = dump(r->prog, false);
		r->sema_rc = sema_check(r->prog, &d, &r->info);
		if (r->sema_rc == 0)
			r->typed = dump(r->prog, true);
	}
	size_t n;
	FILE *f = open_memstream(&r->diag, &n);
	diag_print(&d, f);
	fclose(f);
	diag_free(&d);
}

static void result_free(struct result *r)
{
	free(r->ast);
	free(r->typed);
	free(r->diag);
	if (r->prog) {
		sema_info_free(&r->info);
		ast_free(r->prog);
	}
}

static void table_tests(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct tcase *c = &cases[i];
		struct result r;
		run(c->src, strlen(c->src), &r);
		CHECK_STR(r.ast, c->ast, "%s", c->name);
		CHECK_STR(r.typed, c->typed, "%s", c->name);
		CHECK_STR(r.diag, c->diag, "%s", c->name);
		result_free(&r);
	}
}

/* What later stages rely on: map ids/types/keys, variables, printf records. */
static void info_tests(void)
{
	const char *src = "uprobe:./t:f { @c = count(); @m[arg0, tid] = sum(arg1); $s = \"ab\";"
			  " printf(\"%s %d\\n\", $s, pid); }\n"
			  "u:./t:g { @c = count(); printf(\"x\\n\"); $s = 5; @m[1, 2] = sum(3); }";
	struct result r;
	run(src, strlen(src), &r);
	CHECK(r.parse_rc == 0 && r.sema_rc == 0, "info: script accepted");
	if (r.sema_rc == 0) {
		struct sema_info *in = &r.info;
		CHECK(in->nmaps == 2, "info: two maps");
		CHECK(in->nmaps == 2 && !strcmp(in->maps[0]->name, "@c") && in->maps[0]->id == 0 &&
			      in->maps[0]->value.kind == TY_COUNT && in->maps[0]->nkeys == 0, "info: @c is a scalar count map with id 0");
		CHECK(in->nmaps == 2 && !strcmp(in->maps[1]->name, "@m") && in->maps[1]->id == 1 &&
			      in->maps[1]->value.kind == TY_SUM && in->maps[1]->nkeys == 2 &&
			      in->maps[1]->keys[0].kind == TY_INT && in->maps[1]->keys[0].size == 8 &&
			      !in->maps[1]->keys[0].is_signed, "info: @m is a sum map keyed by two unsigned int64");
		CHECK(in->nvars == 2, "info: $s counted once per probe");
		CHECK(in->nvars == 2 && in->vars[0]->type.kind == TY_STR && in->vars[0]->type.size == 3 &&
			      in->vars[1]->type.kind == TY_INT, "info: $s is string[3] in the first probe, int in the second");
		CHECK(in->nprintfs == 2 && in->printfs[0]->id == 0 &&
			      !strcmp(in->printfs[0]->fmt, "%s %d\n") && in->printfs[0]->nargs == 2 &&
			      in->printfs[0]->args[0].kind == TY_STR &&
			      in->printfs[0]->args[1].kind == TY_INT && in->printfs[1]->nargs == 0, "info: printf records in order of appearance");
		const struct ast_node *probe = r.prog->kids[1];
		CHECK(!strcmp(probe->kids[0]->attach.provider, "uprobe") &&
			      !strcmp(probe->kids[0]->attach.target, "./t") &&
			      !strcmp(probe->kids[0]->attach.func, "g") &&
			      !strcmp(probe->kids[0]->str, "u:./t:g"), "info: u:./t:g canonicalised, text kept as written");
		const struct ast_node *asg = r.prog->kids[0]->body->kids[1];
		CHECK(asg->lhs->map == in->maps[1] && asg->lhs->kids[0]->builtin_arg == 0, "info: map node linked, arg0 numbered");
	}
	result_free(&r);
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail, size_t *len)
{
	struct buf b = { 0 };
	buf_append(&b, head, strlen(head));
	for (size_t i = 0; i < n; i++)
		buf_append(&b, unit, strlen(unit));
	buf_append(&b, tail, strlen(tail));
	*len = b.len;
	return b.data;
}

/* Each must fail cleanly or succeed; ASan/UBSan catch the rest. */
static void pathological_tests(void)
{
	struct result r;
	size_t len;
	char *s;

	struct buf b = { 0 };
	buf_printf(&b, "BEGIN { $x = ");
	for (int i = 0; i < 10000; i++)
		buf_append(&b, "(", 1);
	buf_append(&b, "1", 1);
	for (int i = 0; i < 10000; i++)
		buf_append(&b, ")", 1);
	buf_printf(&b, "; exit(); }");
	run(b.data, b.len, &r);
	CHECK(r.parse_rc == 0 && r.sema_rc == 0, "deep_parens: 10,000 nested parentheses parse");
	result_free(&r);
	buf_free(&b);

	s = repeat("BEGIN { $x = ", "1 + ", 250000, "1; }", &len);
	run(s, len, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "ERROR: expression nested too deeply"), "long_sum: 1 MB of `1 + 1 + ...` is refused as too deep");
	result_free(&r);
	free(s);

	s = repeat("BEGIN { $x = ", "-(", 100000, "1", &len);
	for (int i = 0; i < 100000; i++)
		buf_append(&b, ")", 1);
	s = xrealloc(s, len + b.len + 4);
	memcpy(s + len, b.data, b.len);
	memcpy(s + len + b.len, "; }", 4);
	len += b.len + 3;
	buf_free(&b);
	run(s, len, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "nested too deeply"), "deep_unary: 100,000 nested negations are refused");
	result_free(&r);
	free(s);

	s = repeat("BEGIN { ", "if (1) { ", 5000, "}", &len);
	run(s, len, &r);
	CHECK(r.parse_rc != 0, "deep_if: 5,000 nested ifs are refused (and unterminated)");
	result_free(&r);
	free(s);

	s = repeat("BEGIN { ", "@x = @x + 1; ", 80000, "exit() }", &len);
	run(s, len, &r);
	CHECK(r.parse_rc == 0 && r.sema_rc == 0, "many_stmts: 1 MB of statements is accepted");
	result_free(&r);
	free(s);

	s = repeat("BEGIN { printf(\"", "%d", 20, "\\n\", 1); }", &len);
	run(s, len, &r);
	CHECK(r.sema_rc != 0 && strstr(r.diag, "Not enough arguments"), "printf_many: printf with 20 specifiers and 1 argument is refused");
	result_free(&r);
	free(s);

	static const char nul[] = "BEGIN { @x = 1;\0 }";
	run(nul, sizeof(nul) - 1, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "stdin:1:16-17: ERROR: invalid NUL byte in script"), "nul_byte: a NUL byte is refused at its position");
	result_free(&r);

	static const char utf[] = "BEGIN { @x = \"\xff\"; }";
	run(utf, sizeof(utf) - 1, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "ERROR: invalid UTF-8 byte 0xff in script"), "bad_utf8: invalid UTF-8 is refused");
	result_free(&r);

	static const char trunc[] = "BEGIN { @x = \"\xc3";
	run(trunc, sizeof(trunc) - 1, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "invalid UTF-8"), "truncated_utf8: a truncated UTF-8 sequence at the end is refused");
	result_free(&r);

	static const char good[] = "BEGIN { printf(\"h\xc3\xa9llo\\n\"); exit() } // \xe2\x82\xac";
	run(good, sizeof(good) - 1, &r);
	CHECK(r.parse_rc == 0 && r.sema_rc == 0, "utf8_ok: UTF-8 in strings and comments is fine");
	result_free(&r);

	static const char outside[] = "BEGIN { \xc3\xa9 }";
	run(outside, sizeof(outside) - 1, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "invalid character '\xc3\xa9'"), "utf8_outside: a non-ASCII character outside strings is an invalid character");
	result_free(&r);

	s = repeat("BEGIN { $s = \"", "a", 1000000, "\"; }", &len);
	run(s, len, &r);
	CHECK(r.sema_rc != 0 && strstr(r.diag, "String is too long"), "huge_string: a 1 MB string literal is refused by sema");
	result_free(&r);
	free(s);

	run("", 0, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "ERROR: unexpected end of file, expected {"), "empty: an empty script is an error");
	result_free(&r);

	static const char big[] = "BEGIN { @x = 99999999999999999999; }";
	run(big, sizeof(big) - 1, &r);
	CHECK(r.parse_rc != 0 && strstr(r.diag, "integer literal out of range"), "int_range: a literal above 2^64 is refused");
	result_free(&r);
}

/*
 * Attach points split into struct ast_attach (attach_spec.c): the parts
 * are fnmatch patterns in which what was quoted or escaped stands for
 * itself, so every name a binary has can be written (`ubt -l` prints them
 * so) and pasted back.
 */
#define NOFF (-1) /* no +OFFSET */
static const struct {
	const char *src; /* one attach point; the script is `SRC { }` */
	const char *provider, *target, *ns, *func;
	int64_t offset;   /* NOFF: none */
	uint64_t address; /* uprobe:BIN:ADDR */
	bool wild;        /* attach_is_wild(func) */
	const char *plain; /* attach_plain(func) */
	const char *err;   /* not NULL: the script is refused with this message */
} attach_cases[] = {
	{"uprobe:./t:f", "uprobe", "./t", NULL, "f", NOFF, 0, false, "f", NULL},
	{"u:./t:f+0x10", "uprobe", "./t", NULL, "f", 16, 0, false, "f", NULL},
	{"uprobe:./t:f+8", "uprobe", "./t", NULL, "f", 8, 0, false, "f", NULL},
	{"uprobe:/bin/bash:\"echo_builtin\"+0", "uprobe", "/bin/bash", NULL, "echo_builtin", 0, 0,
	 false, "echo_builtin", NULL},
	{"uprobe:./t:\"operator+\"", "uprobe", "./t", NULL, "operator\\+", NOFF, 0, false,
	 "operator+", NULL},
	{"uprobe:./t:\"operator+\"+4", "uprobe", "./t", NULL, "operator\\+", 4, 0, false,
	 "operator+", NULL},
	{"uprobe:./t:\"op\\\\*\"", "uprobe", "./t", NULL, "op\\*", NOFF, 0, false, "op*", NULL},
	{"uprobe:./t:\"ma*\"", "uprobe", "./t", NULL, "ma*", NOFF, 0, true, "ma*", NULL},
	{"uprobe:./t:ma*", "uprobe", "./t", NULL, "ma*", NOFF, 0, true, "ma*", NULL},
	{"uprobe:./t:\"f?o\"", "uprobe", "./t", NULL, "f?o", NOFF, 0, true, "f?o", NULL},
	{"uprobe:./t:\"fn$\"", "uprobe", "./t", NULL, "fn$", NOFF, 0, false, "fn$", NULL},
	{"uprobe:/usr/lib/libstdc++.so.6:f", "uprobe", "/usr/lib/libstdc++.so.6", NULL, "f", NOFF,
	 0, false, "f", NULL},
	{"uprobe:./t:0x401136", "uprobe", "./t", NULL, "0x401136", NOFF, 0x401136, false,
	 "0x401136", NULL},
	{"uprobe:./t:4198710", "uprobe", "./t", NULL, "4198710", NOFF, 4198710, false, "4198710",
	 NULL},
	{"uprobe:./t:cpp:\"ns::f(int)\"", "uprobe", "./t", "cpp", "ns::f(int)", NOFF, 0, false,
	 "ns::f(int)", NULL},
	{"uprobe:./t:c:f", "uprobe", "./t", "c", "f", NOFF, 0, false, "f", NULL},
	{"uretprobe:./t:f", "uretprobe", "./t", NULL, "f", NOFF, 0, false, "f", NULL},
	{"ur:./t:f", "uretprobe", "./t", NULL, "f", NOFF, 0, false, "f", NULL},
	{"uprobe:libc:malloc", "uprobe", "libc", NULL, "malloc", NOFF, 0, false, "malloc", NULL},
	{"uprobe:*:f", "uprobe", "*", NULL, "f", NOFF, 0, false, "f", NULL},
	/* quoted paths: ':' does not split inside quotes, spaces are kept */
	{"uprobe:\"./a b/t\":f", "uprobe", "./a b/t", NULL, "f", NOFF, 0, false, "f", NULL},
	{"uprobe:\"./x:y/t\":f", "uprobe", "./x:y/t", NULL, "f", NOFF, 0, false, "f", NULL},
	{"uprobe:\"./a b:c/t\":\"f\"+0x4", "uprobe", "./a b:c/t", NULL, "f", 4, 0, false, "f", NULL},
	{"uretprobe:\"/tmp/a b:c/t\":f", "uretprobe", "/tmp/a b:c/t", NULL, "f", NOFF, 0, false,
	 "f", NULL},
	{"uprobe:\"./a b/t\":\"a:b c\"", "uprobe", "./a b/t", NULL, "a:b c", NOFF, 0, false,
	 "a:b c", NULL},
	{"usdt:\"/tmp/a b:c/t\":prov:name", "usdt", "/tmp/a b:c/t", "prov", "name", NOFF, 0, false,
	 "name", NULL},
	{"usdt:\"./a b/t\":name", "usdt", "./a b/t", NULL, "name", NOFF, 0, false, "name", NULL},
	{"usdt:./t:\"p:q\":\"n:m\"", "usdt", "./t", "p:q", "n:m", NOFF, 0, false, "n:m", NULL},
	{"uprobe:./t:\"a:b\"", "uprobe", "./t", NULL, "a:b", NOFF, 0, false, "a:b", NULL},
	/* usdt */
	{"usdt:./t:test:\"\\\"probe1\\\"\"", "usdt", "./t", "test", "\"probe1\"", NOFF, 0, false,
	 "\"probe1\"", NULL},
	{"usdt:/usr/lib/x86_64-linux-gnu/libstdc++.so.6:libstdcxx:throw", "usdt",
	 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdcxx", "throw", NOFF, 0, false, "throw",
	 NULL},
	{"usdt:./t::*probe2", "usdt", "./t", "", "*probe2", NOFF, 0, true, "*probe2", NULL},
	{"U:./t:p:n", "usdt", "./t", "p", "n", NOFF, 0, false, "n", NULL},
	{"usdt:./t:p:n+4", "usdt", "./t", "p", "n+4", NOFF, 0, false, "n+4", NULL},
	/* other providers */
	{"interval:s:1", "interval", "s", NULL, NULL, NOFF, 0, false, "", NULL},
	{"i:ms:100", "interval", "ms", NULL, NULL, NOFF, 0, false, "", NULL},
	{"profile:hz:99", "profile", "hz", NULL, NULL, NOFF, 0, false, "", NULL},
	{"BEGIN", "BEGIN", NULL, NULL, NULL, NOFF, 0, false, "", NULL},
	{"kprobe:do_nanosleep", "kprobe", NULL, NULL, "do_nanosleep", NOFF, 0, false,
	 "do_nanosleep", NULL},
	/* refused, with bpftrace's messages */
	{"uprobe:./t", .err = "stdin:1:1-11: ERROR: uprobe probe type requires 2 arguments"},
	{"uprobe:./t:a:b", .err = "ERROR: uprobe probe type requires 2 arguments"},
	{"uprobe::f", .err = "ERROR: uprobe should have a target"},
	{"uretprobe::f", .err = "ERROR: uretprobe should have a target"},
	{"uprobe:./t:", .err = "ERROR: uprobe should be attached to a function and/or address"},
	{"uprobe:./t:f+", .err = "ERROR: Invalid offset in uprobe probe: \n"},
	{"uprobe:./t:f+abc", .err = "ERROR: Invalid offset in uprobe probe: abc"},
	{"uprobe:./t:f+0x", .err = "ERROR: Invalid offset in uprobe probe: 0x"},
	{"usdt:./t", .err = "ERROR: usdt probe type requires 2 or 3 arguments"},
	{"usdt:./t:a:b:c", .err = "ERROR: usdt probe type requires 2 or 3 arguments"},
	{"usdt::p:n", .err = "ERROR: usdt probe must specify at least path or pid to probe"},
	{"foo:./t:f", .err = "ERROR: Invalid probe type: foo"},
	{"interval:s", .err = "ERROR: interval probe type requires 2 arguments"},
	{"interval:x:1", .err = "ERROR: x is not an accepted unit of time"},
	{"interval:s:abc", .err = "ERROR: Invalid rate of interval probe: 'abc'"},
	{"interval:s:0", .err = "ERROR: Invalid rate of interval probe: '0'"},
	{"profile:hz:0", .err = "ERROR: profile frequency should be a positive integer"},
	{"kprobe:a:b", .err = "ERROR: kprobe probe type requires 1 argument"},
};

static void attach_tests(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(attach_cases); i++) {
		const char *s = attach_cases[i].src;
		char *src = xasprintf("%s { }", s);
		struct result r;
		run(src, strlen(src), &r);
		if (attach_cases[i].err) {
			CHECK(r.parse_rc != 0, "%s: refused", s);
			CHECK(r.diag && strstr(r.diag, attach_cases[i].err), "%s: message [%s], want [%s]",
			      s, r.diag, attach_cases[i].err);
			result_free(&r);
			free(src);
			continue;
		}
		const struct ast_attach *a =
		    r.prog && r.prog->nkids && r.prog->kids[0]->nkids ? &r.prog->kids[0]->kids[0]->attach
								       : NULL;
		CHECK(r.parse_rc == 0 && a, "%s: parses (%s)", s, r.diag);
		if (a) {
			CHECK_STR(a->provider, attach_cases[i].provider, "%s", s);
			CHECK_STR(a->target, attach_cases[i].target, "%s", s);
			CHECK_STR(a->ns, attach_cases[i].ns, "%s", s);
			CHECK_STR(a->func, attach_cases[i].func, "%s", s);
			CHECK_EQ(a->has_offset ? (int64_t)a->offset : NOFF, attach_cases[i].offset, "%s", s);
			CHECK_EQ(a->address, attach_cases[i].address, "%s", s);
			CHECK_EQ(attach_is_wild(a->func), attach_cases[i].wild, "%s", s);
			char *plain = attach_plain(a->func);
			CHECK_STR(plain, attach_cases[i].plain, "%s", s);
			free(plain);
		}
		result_free(&r);
		free(src);
	}
}

int main(void)
{
	table_tests();
	attach_tests();
	info_tests();
	pathological_tests();
	return check_summary("parser");
}
