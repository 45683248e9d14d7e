/*
 * parser_internal.h - state shared by the flex scanner (lexer.l) and the
 * bison grammar (parser.y) during one parse_script() call.  Not part of
 * the parser's public interface (that is ast.h).
 */
#ifndef UBT_PARSER_INTERNAL_H
#define UBT_PARSER_INTERNAL_H

#include <stdbool.h>
#include "ast.h"
#include "../util/util.h"

struct parse_state {
	struct diags *diags;
	struct buf sbuf;            /* string literal being scanned */
	int step_line, step_col;    /* where the next token's range starts */
	int tok_line, tok_col;      /* where the current token really starts */
	struct ast_node *root;      /* AST_PROGRAM once the grammar accepted */
	bool too_deep;              /* "nested too deeply" already reported */
	int brace_depth;            /* '{' minus '}' so far: PATH tokens only at 0 */
	struct buf cdef;            /* C definition being scanned */
	int cdef_depth;
	bool cdef_typedef;
	struct src_loc cdef_loc;
	struct ast_program *prog;   /* preamble collected while parsing */
	const char *filename;       /* for #include "x.h" relative to the script */
	int include_depth;
	bool eof_reported;          /* the scanner already said why the script ended early */
	int nparams;                /* positional parameters, for $N in attach points */
	char **params;
};

/* cdefs.c: the C preamble (struct/union/enum/typedef, #define, #include) */
int cdefs_parse(struct ast_program *p, const char *text, int line, int col,
		struct diags *diags, const char *filename, int include_depth);
int cdefs_preproc(struct ast_program *p, const char *text, struct src_loc loc,
		  struct diags *diags, const char *filename, int include_depth);

/* attach_spec.c: attach point text -> provider/target/func, with bpftrace's checks. */
int parse_attach_points(struct ast_node *prog, struct diags *diags);
/* Expands every use of a macro (macro.c) and removes the definitions. */
int parse_macros(struct ast_node *prog, struct diags *diags);

/* parse_tree.c: node builders for the grammar's actions */
struct ast_node *parse_node(struct parse_state *ps, enum ast_kind kind, struct src_loc loc);
struct ast_node *parse_fin(struct parse_state *ps, struct ast_node *n); /* height, depth check */
struct ast_node *parse_grow(struct parse_state *ps, struct ast_node *list, struct ast_node *kid);
struct ast_node *parse_binop(struct parse_state *ps, struct ast_node *l, int op,
			     struct ast_node *r, struct src_loc loc);
struct ast_node *parse_unop(struct parse_state *ps, enum ast_kind kind, int op,
			    struct ast_node *e, struct src_loc loc);
struct ast_node *parse_named(struct parse_state *ps, enum ast_kind kind, char *name,
			     struct src_loc loc);
struct ast_node *parse_call(struct parse_state *ps, char *name, struct src_loc loc,
			    struct src_loc name_loc);
struct ast_node *parse_cast(struct parse_state *ps, struct ast_node *t, struct ast_node *e,
			    struct src_loc loc);
struct ast_node *parse_take_kids(struct ast_node *dst, struct ast_node *list);
char *parse_cat(char *a, const char *b); /* a (reallocated) followed by b */
/* a followed by the string s quoted again ("\"" and "\\" escaped), so that
 * attach_spec.c reads back exactly the string that was written */
char *parse_cat_quoted(char *a, const char *s, size_t n);
struct src_loc parse_span(struct src_loc a, struct src_loc b);

#endif
