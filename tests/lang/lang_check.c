/*
 * lang_check.c - the front end alone, for the language corpora: parses
 * and type-checks each script given (parse_script + sema_check, with the
 * positional parameters "42" and "word"), prints its diagnostics exactly
 * as ubt does, and exits 0 if every script was accepted.  tests/lang/run.py
 * compares the output of each broken script with its .err file.
 *
 *   lang_check [--name NAME] FILE...   (NAME replaces the file name in messages)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/ast.h"
#include "sema/sema.h"
#include "util/util.h"

static int check(const char *path, const char *name)
{
	char *src;
	size_t len;
	if (read_file(path, &src, &len)) {
		fprintf(stderr, "cannot read %s\n", path);
		return 2;
	}
	struct diags d;
	struct ast_node *prog = NULL;
	struct sema_info info = { 0 };
	int rc = 1;
	diag_init(&d, name ? name : path, src, len);
	char *params[] = { "42", "word" };
	if (parse_script_params(src, len, 2, params, &d, &prog) == 0) {
		if (sema_check(prog, &d, &info) == 0)
			rc = 0;
		sema_info_free(&info);
		ast_free(prog);
	}
	diag_print(&d, stdout);
	diag_free(&d);
	free(src);
	return rc;
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			name = argv[++i];
			continue;
		}
		int r = check(argv[i], name);
		if (r > rc)
			rc = r;
	}
	return rc;
}
