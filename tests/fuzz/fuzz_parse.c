/*
 * fuzz_parse.c - libFuzzer target over the front end: parse_script() then
 * sema_check() on arbitrary bytes, as a script from a file would arrive
 * (with two positional parameters).  Any crash, leak, sanitizer report or
 * hang is a bug: the front end must answer every input with an AST or an
 * error.  Build and run with tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/ast.h"
#include "sema/sema.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diags d;
	struct ast_node *prog = NULL;
	diag_init(&d, "fuzz.bt", (const char *)data, size);
	if (parse_script((const char *)data, size, &d, &prog) == 0) {
		prog->prog->nparams = 2;
		prog->prog->params = xcalloc(2, sizeof(char *));
		prog->prog->params[0] = xstrdup("42");
		prog->prog->params[1] = xstrdup("word");
		struct sema_info info;
		sema_check(prog, &d, &info);
		char *out = NULL;
		size_t n;
		FILE *f = open_memstream(&out, &n);
		ast_dump(prog, true, f);
		diag_print(&d, f);
		fclose(f);
		free(out);
		sema_info_free(&info);
		ast_free(prog);
	} else {
		FILE *f = fopen("/dev/null", "w");
		diag_print(&d, f);
		fclose(f);
	}
	diag_free(&d);
	return 0;
}
