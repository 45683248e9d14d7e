/*
 * parser.y - the grammar of bpftrace scripts (bison, pure, LALR(1) with
 * LAC), and parse_script(), the front end's entry point.
 *
 * Pipeline position: script text -> lexer.l tokens -> this grammar ->
 * struct ast_node tree (ast.h) -> sema_check() (sema.c).  Grammar actions
 * only build nodes.  The rule structure follows bpftrace 0.17's parser.yy
 * on purpose: bison derives its "expecting ..." lists from the automaton's
 * states, so a grammar of the same shape yields the same messages, e.g.
 *
 *   stdin:1:18-19: ERROR: syntax error, unexpected }, expecting {
 *   BEGIN { @x = 1 } }
 *                    ~
 *
 * Constructs that are not implemented yet (casts, tuples, loops, struct
 * definitions, positional parameters) are left out of the grammar; their
 * tokens exist so that they fail as syntax errors at the right place.
 *
 * Nesting: bison's stack lives on the heap (YYMAXDEPTH below), so 10,000
 * nested parentheses parse; but every node records the height of its
 * subtree and a tree deeper than AST_MAX_DEPTH is refused with "expression
 * nested too deeply", which bounds every recursive walker that runs later.
 */
%define api.pure full
%define api.prefix {ubt_yy}
%define api.token.prefix {TOK_}
%define api.location.type {struct src_loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 5

%param {void *scanner}
%parse-param {struct parse_state *ps}

%code requires {
#include <stdint.h>
#include "ast.h"
struct parse_state;
}

%code provides {
int ubt_yylex(UBT_YYSTYPE *yylval, UBT_YYLTYPE *yylloc, void *scanner);
}

%{
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parser_internal.h"
#include "parser.h"
#include "../util/util.h"

#define YYMAXDEPTH 4000000

/* A range from the first symbol of a rule to its last; an empty rule sits
 * at the end of what precedes it. */
#define YYLLOC_DEFAULT(cur, rhs, n)                                     \
	do {                                                            \
		if (n) {                                                \
			(cur).line = YYRHSLOC(rhs, 1).line;             \
			(cur).col = YYRHSLOC(rhs, 1).col;               \
			(cur).end_line = YYRHSLOC(rhs, n).end_line;     \
			(cur).end_col = YYRHSLOC(rhs, n).end_col;       \
		} else {                                                \
			(cur).line = (cur).end_line = YYRHSLOC(rhs, 0).end_line; \
			(cur).col = (cur).end_col = YYRHSLOC(rhs, 0).end_col; \
		}                                                       \
	} while (0)

static void ubt_yyerror(struct src_loc *loc, void *scanner, struct parse_state *ps,
			const char *msg);
/* An attach point starts at its first token, not where the empty rule
 * that begins it sat (after a comment line, say). */
#define AP_START(cur, text, tok)                \
	do {                                    \
		if (!*(text)) {                 \
			(cur).line = (tok).line; \
			(cur).col = (tok).col;   \
		}                               \
	} while (0)
%}

%union {
	char *s;
	struct { char *p; size_t n; } str;
	uint64_t i;
	struct ast_node *node;
	int op;
	struct { char *text; int line, col; } cdef;
}

%token END 0 "end of file"
%token COLON ":" SEMI ";" LBRACE "{" RBRACE "}" LBRACKET "[" RBRACKET "]"
%token LPAREN "(" RPAREN ")" QUES "?" ENDPRED "end predicate" COMMA ","
%token PARAMCOUNT "$#" ASSIGN "=" EQ "==" NE "!=" LE "<=" GE ">="
%token LEFT "<<" RIGHT ">>" LT "<" GT ">" LAND "&&" LOR "||" PLUS "+"
%token INCREMENT "++"
%token LEFTASSIGN "<<=" RIGHTASSIGN ">>=" PLUSASSIGN "+=" MINUSASSIGN "-="
%token MULASSIGN "*=" DIVASSIGN "/=" MODASSIGN "%=" BANDASSIGN "&="
%token BORASSIGN "|=" BXORASSIGN "^="
%token MINUS "-" DECREMENT "--" MUL "*" DIV "/" MOD "%" BAND "&" BOR "|"
%token BXOR "^" LNOT "!" BNOT "~" DOT "." PTR "->" IF "if" ELSE "else"
%token UNROLL "unroll" STRUCT "struct" UNION "union" WHILE "while" FOR "for"
%token RETURN "return" CONTINUE "continue" BREAK "break"
%token DOTDOT ".." LET "let" SIZEOF "sizeof" TYPEOF "typeof" CONFIG "config" ENUM "enum" MACRO "macro"
%token <s> CPREPROC "preprocessor directive"
%token <cdef> CDEF "C definition"

%token <s> BUILTIN "builtin" CALL "call" CALL_BUILTIN "call_builtin"
%token <s> IDENT "identifier" PATH "path" MAP "map" VAR "variable"
%token <s> PARAM "positional parameter" STACK_MODE "stack_mode"
%token <str> STRING "string"
%token <i> INT "integer"

%type <s> attach_point_def ident
%type <op> unary_op compound_op stars
%type <node> probes probe attach_points attach_point pred block stmt_list
%type <node> block_stmt expr_stmt if_stmt block_or_if assign_stmt
%type <node> primary_expr postfix_expr unary_expr cast_expr expr conditional_expr
%type <node> logical_or_expr logical_and_expr or_expr xor_expr and_expr
%type <node> equality_expr relational_expr shift_expr addi_expr muli_expr
%type <node> int call map var map_or_var vargs cargs carg
%type <node> loop_stmt jump_stmt let_stmt cast_type decl_type param config config_list
%type <node> config_item for_stmt macro mparams mparam bare_cond mapdecl value_expr if_value typeof
%type <node> if_cond
%type <s> type_word

%destructor { free($$); } <s>
%destructor { free($$.p); } <str>
%destructor { ast_free($$); } <node>
%destructor { free($$.text); } <cdef>

%start program

%initial-action {
	@$.line = @$.end_line = 1;
	@$.col = @$.end_col = 1;
}

%%

/* program -> c_definitions [config] probe+ EOF */
program:
		c_definitions config probes END
		{
			ps->root = $3;
			ps->root->prog = ps->prog;
			ps->prog = NULL;
			ps->root->prog->config = $2;
		}
	;

/* C definitions before the first probe: struct/union/enum/typedef, kept
 * whole by the scanner and parsed by cdefs.c; #define and #include. */
c_definitions:
		c_definitions CDEF
		{
			cdefs_parse(ps->prog, $2.text, $2.line, $2.col, ps->diags, ps->filename,
				    ps->include_depth);
			free($2.text);
		}
	|	c_definitions CPREPROC
		{
			cdefs_preproc(ps->prog, $2, @2, ps->diags, ps->filename, ps->include_depth);
			free($2);
		}
	|	%empty { }
	;

/* config -> 'config' '=' '{' (ident '=' expr ';')* '}' */
config:
		CONFIG ASSIGN "{" config_list "}" { $$ = $4; $$->loc = @$; }
	|	%empty { $$ = NULL; }
	;

config_list:
		config_list config_item ";" { $$ = parse_grow(ps, $1, $2); }
	|	config_list config_item     { $$ = parse_grow(ps, $1, $2); }
	|	%empty                      { $$ = parse_node(ps, AST_CONFIG, @$); }
	;

config_item:
		IDENT ASSIGN expr
		{
			$$ = parse_node(ps, AST_ASSIGN, @2);
			$$->op = '=';
			$$->lhs = parse_named(ps, AST_IDENT, $1, @1);
			$$->rhs = $3;
			$$ = parse_fin(ps, $$);
		}
	;

/* probes and macro definitions (expanded and removed by macro.c) */
probes:
		probes probe { $$ = $1; ast_add_kid($$, $2); }
	|	probes macro { $$ = $1; ast_add_kid($$, $2); }
	|	probes mapdecl { $$ = $1; ast_add_kid($$, $2); }
	|	probe        { $$ = parse_node(ps, AST_PROGRAM, @1); ast_add_kid($$, $1); }
	|	macro        { $$ = parse_node(ps, AST_PROGRAM, @1); ast_add_kid($$, $1); }
	|	mapdecl      { $$ = parse_node(ps, AST_PROGRAM, @1); ast_add_kid($$, $1); }
	;

/* mapdecl -> 'let' map '=' kind '(' int ')' ';' (bpftrace 0.24; moved to
 * the program's mapdecls by macro.c, checked by sema) */
mapdecl:
		LET map ASSIGN call ";"
		{
			$$ = parse_node(ps, AST_LET, @$);
			$$->lhs = $2;
			$$->rhs = $4;
			$$ = parse_fin(ps, $$);
		}
	;

/* macro -> 'macro' name '(' [param (',' param)*] ')' block (bpftrace 0.24) */
macro:
		MACRO ident "(" ")" block
		{
			$$ = parse_named(ps, AST_MACRO, $2, parse_span(@1, @4));
			$$->body = $5;
			$$ = parse_fin(ps, $$);
		}
	|	MACRO ident "(" mparams ")" block
		{
			$$ = parse_take_kids(parse_named(ps, AST_MACRO, $2, parse_span(@1, @5)), $4);
			$$->body = $6;
			$$ = parse_fin(ps, $$);
		}
	;

mparams:
		mparams "," mparam { $$ = parse_grow(ps, $1, $3); }
	|	mparam             { $$ = parse_grow(ps, parse_node(ps, AST_BLOCK, @1), $1); }
	;

mparam:
		VAR   { $$ = parse_named(ps, AST_VAR, $1, @1); }
	|	MAP   { $$ = parse_named(ps, AST_MAP, $1, @1); }
	|	IDENT { $$ = parse_named(ps, AST_IDENT, $1, @1); }
	;

/* probe -> attach_point (',' attach_point)* ['/' expr '/'] block */
probe:
		attach_points pred block
		{
			$$ = $1;
			$$->pred = $2;
			$$->body = $3;
			if ($2)
				$$->pred_loc = @2;
			$$ = parse_fin(ps, $$);
		}
	|	attach_points END
		{
			if (!ps->eof_reported)
				diag_error(ps->diags, @$, "unexpected end of file, expected {");
			ast_free($1);
			$$ = NULL;
			YYERROR;
		}
	;

attach_points:
		attach_points "," attach_point { $$ = $1; ast_add_kid($$, $3); }
	|	attach_point                   { $$ = parse_node(ps, AST_PROBE, @1); ast_add_kid($$, $1); }
	;

attach_point:
		attach_point_def { $$ = parse_node(ps, AST_ATTACH, @1); $$->str = $1; }
	;

/* The attach text is glued back together from tokens, as bpftrace does:
 * "uprobe:./t:f" arrives as IDENT PATH PATH, "/bin/a+b" as PATH "+" IDENT. */
attach_point_def:
		attach_point_def ident      { AP_START(@$, $1, @2); $$ = parse_cat($1, $2); free($2); }
	|	attach_point_def STRING     { AP_START(@$, $1, @2); $$ = parse_cat_quoted($1, $2.p, $2.n); free($2.p); }
	|	attach_point_def PATH       { AP_START(@$, $1, @2); $$ = parse_cat($1, $2); free($2); }
	|	attach_point_def INT        { AP_START(@$, $1, @2); char b[24]; snprintf(b, sizeof(b), "%llu", (unsigned long long)$2); $$ = parse_cat($1, b); }
	|	attach_point_def ":"        { AP_START(@$, $1, @2); $$ = parse_cat($1, ":"); }
	|	attach_point_def "."        { AP_START(@$, $1, @2); $$ = parse_cat($1, "."); }
	|	attach_point_def "+"        { AP_START(@$, $1, @2); $$ = parse_cat($1, "+"); }
	|	attach_point_def "*"        { AP_START(@$, $1, @2); $$ = parse_cat($1, "*"); }
	|	attach_point_def "["        { AP_START(@$, $1, @2); $$ = parse_cat($1, "["); }
	|	attach_point_def "]"        { AP_START(@$, $1, @2); $$ = parse_cat($1, "]"); }
	|	attach_point_def PARAM
		{
			/* `i:ms:$1`, `uprobe:BIN:$2`: the parameter's text, "" if
			 * it was not given (bpftrace 0.17) */
			AP_START(@$, $1, @2);
			unsigned long k = strtoul($2 + 1, NULL, 10);
			$$ = parse_cat($1, k >= 1 && k <= (unsigned long)ps->nparams ? ps->params[k - 1] : "");
			free($2);
		}
	|	%empty                      { $$ = xstrdup(""); }
	;

pred:
		DIV expr ENDPRED { $$ = $2; }
	|	%empty           { $$ = NULL; }
	;

/* block -> '{' stmt_list '}' */
block:
		"{" stmt_list "}"
		{
			/* stmt_list collects its statements last-first (right
			 * recursion, appended); put them back in source order. */
			$$ = $2;
			$$->loc = @$;
			for (int i = 0, j = $$->nkids - 1; i < j; i++, j--) {
				struct ast_node *t = $$->kids[i];
				$$->kids[i] = $$->kids[j];
				$$->kids[j] = t;
			}
		}
	;

/* Expressions must be followed by ';' unless they end the block; if
 * statements need no ';'. */
stmt_list:
		expr_stmt ";" stmt_list { $$ = parse_grow(ps, $3, $1); }
	|	expr_stmt
		{
			/* the block's last, without ';': its value (a macro's body) */
			if ($1->kind == AST_EXPR_STMT)
				$1->op = 'v';
			$$ = parse_grow(ps, parse_node(ps, AST_BLOCK, @1), $1);
		}
	|	block_stmt stmt_list    { $$ = parse_grow(ps, $2, $1); }
	|	%empty                  { $$ = parse_node(ps, AST_BLOCK, @$); }
	;

block_stmt:
		if_stmt   { $$ = $1; }
	|	loop_stmt { $$ = $1; }
	|	for_stmt  { $$ = $1; }
	|	block     { $$ = $1; }
	;

expr_stmt:
		expr        { $$ = parse_unop(ps, AST_EXPR_STMT, 0, $1, @1); }
	|	assign_stmt { $$ = $1; }
	|	jump_stmt   { $$ = $1; }
	|	let_stmt    { $$ = $1; }
	;

/* jump_stmt -> 'break' | 'continue' | 'return' [expr] */
jump_stmt:
		BREAK       { $$ = parse_node(ps, AST_BREAK, @1); }
	|	CONTINUE    { $$ = parse_node(ps, AST_CONTINUE, @1); }
	|	RETURN      { $$ = parse_node(ps, AST_RETURN, @1); }
	|	RETURN expr { $$ = parse_node(ps, AST_RETURN, @1); $$->lhs = $2; $$ = parse_fin(ps, $$); }
	;

/* loop_stmt -> 'unroll' '(' (int | param) ')' block | 'while' '(' expr ')' block */
loop_stmt:
		UNROLL "(" int ")" block
		{
			$$ = parse_node(ps, AST_UNROLL, parse_span(@1, @4));
			$$->lhs = $3;
			$$->body = $5;
			$$ = parse_fin(ps, $$);
		}
	|	UNROLL "(" param ")" block
		{
			$$ = parse_node(ps, AST_UNROLL, parse_span(@1, @4));
			$$->lhs = $3;
			$$->body = $5;
			$$ = parse_fin(ps, $$);
		}
	|	WHILE "(" expr ")" block
		{
			$$ = parse_node(ps, AST_WHILE, parse_span(@1, @4));
			$$->cond = $3;
			$$->body = $5;
			$$ = parse_fin(ps, $$);
		}
	;

/* for_stmt -> 'for' '(' var ':' map ')' block
 *           | 'for' '(' var ':' expr '..' expr ')' block */
for_stmt:
		FOR "(" var COLON map ")" block
		{
			$$ = parse_node(ps, AST_FOR_MAP, parse_span(@1, @6));
			$$->lhs = $3;
			$$->rhs = $5;
			$$->body = $7;
			$$ = parse_fin(ps, $$);
		}
	|	FOR "(" var COLON shift_expr DOTDOT shift_expr ")" block
		{
			$$ = parse_node(ps, AST_FOR_RANGE, parse_span(@1, @8));
			$$->lhs = $3;
			ast_add_kid($$, $5);
			ast_add_kid($$, $7);
			$$->body = $9;
			$$ = parse_fin(ps, $$);
		}
	;

/* let_stmt -> 'let' var [':' type] ['=' expr] */
let_stmt:
		LET var
		{
			$$ = parse_node(ps, AST_LET, @$);
			$$->lhs = $2;
			$$ = parse_fin(ps, $$);
		}
	|	LET var COLON decl_type
		{
			$$ = parse_node(ps, AST_LET, @$);
			$$->lhs = $2;
			$$->tyn = $4;
			$$ = parse_fin(ps, $$);
		}
	|	LET var ASSIGN value_expr
		{
			$$ = parse_node(ps, AST_LET, @$);
			$$->lhs = $2;
			$$->rhs = $4;
			$$ = parse_fin(ps, $$);
		}
	|	LET var COLON decl_type ASSIGN value_expr
		{
			$$ = parse_node(ps, AST_LET, @$);
			$$->lhs = $2;
			$$->tyn = $4;
			$$->rhs = $6;
			$$ = parse_fin(ps, $$);
		}
	;

/* A type in a declaration: int8 .. uint64, typedef names, struct/union/enum
 * x, each with any number of '*'; string[N] and int8[N]. */
cast_type:
		IDENT                 { $$ = parse_named(ps, AST_TYPE, $1, @$); }
	|	typeof                { $$ = $1; }
	|	IDENT stars           { $$ = parse_named(ps, AST_TYPE, $1, @$); $$->uval = $2; }
	|	type_word ident       { $$ = parse_named(ps, AST_TYPE, parse_cat(parse_cat($1, " "), $2), @$); free($2); }
	|	type_word ident stars { $$ = parse_named(ps, AST_TYPE, parse_cat(parse_cat($1, " "), $2), @$); free($2); $$->uval = $3; }
	;

/* typeof(expr) or typeof(type) (bpftrace 0.24): the type sema gives it */
typeof:
		TYPEOF "(" expr ")"
		{
			$$ = parse_named(ps, AST_TYPE, xstrdup("typeof"), @$);
			$$->lhs = $3;
		}
	;

stars:
		MUL       { $$ = 1; }
	|	stars MUL { $$ = $1 + 1; }
	;

type_word:
		STRUCT { $$ = xstrdup("struct"); }
	|	UNION  { $$ = xstrdup("union"); }
	|	ENUM   { $$ = xstrdup("enum"); }
	;

/* In a declaration also string[N] and int8[N]. */
decl_type:
		cast_type              { $$ = $1; }
	|	IDENT "[" INT "]"      { $$ = parse_named(ps, AST_TYPE, $1, @$); $$->slen = $3 ? $3 : 1; if ($3 > 1u << 20) $$->slen = 1u << 20; }
	;

param:
		PARAM      { $$ = parse_named(ps, AST_POSPARAM, $1, @1); $$->uval = strtoull($1 + 1, NULL, 10); }
	|	PARAMCOUNT { $$ = parse_node(ps, AST_PARAMCOUNT, @1); }
	;

/* an if's condition: an expression, or a block's value (bpftrace 0.24) */
if_cond:
		expr      { $$ = $1; }
	|	block     { $$ = $1; }
	;

/* if_stmt -> 'if' '(' if_cond ')' block ['else' (block | if_stmt)] */
if_stmt:
		IF "(" if_cond ")" block
		{
			$$ = parse_node(ps, AST_IF, parse_span(@1, @4));
			$$->cond = $3;
			$$->body = $5;
			$$ = parse_fin(ps, $$);
		}
	|	IF "(" if_cond ")" block ELSE block_or_if
		{
			$$ = parse_node(ps, AST_IF, parse_span(@1, @4));
			$$->cond = $3;
			$$->body = $5;
			$$->els = $7;
			$$ = parse_fin(ps, $$);
		}
	|	IF bare_cond block
		{
			$$ = parse_node(ps, AST_IF, parse_span(@1, @2));
			$$->cond = $2;
			$$->body = $3;
			$$ = parse_fin(ps, $$);
		}
	|	IF bare_cond block ELSE block_or_if
		{
			$$ = parse_node(ps, AST_IF, parse_span(@1, @2));
			$$->cond = $2;
			$$->body = $3;
			$$->els = $5;
			$$ = parse_fin(ps, $$);
		}
	;

/* `if x {`, `if !$v {`, `if has_key(@m, k) {`: bpftrace 0.24's if without
 * parentheses around a unary expression */
bare_cond:
		IDENT                { $$ = parse_named(ps, AST_IDENT, $1, @1); }
	|	BUILTIN              { $$ = parse_named(ps, AST_BUILTIN, $1, @1); }
	|	map_or_var           { $$ = $1; }
	|	call                 { $$ = $1; }
	|	unary_op cast_expr   { $$ = parse_unop(ps, AST_UNOP, $1, $2, @1); }
	;

block_or_if:
		block   { $$ = $1; }
	|	if_stmt { $$ = $1; }
	;

/* assign_stmt -> (map | var) ('=' | op'=') expr */
/* A value after '=' (bpftrace 0.24): an expression, a block whose last
 * statement is an expression without ';', or `if (c) { a } else { b }`. */
value_expr:
		expr      { $$ = $1; }
	|	block     { $$ = $1; }
	|	if_value  { $$ = $1; }
	;

if_value:
		IF "(" expr ")" block ELSE block
		{
			$$ = parse_node(ps, AST_IF, parse_span(@1, @4));
			$$->cond = $3;
			$$->body = $5;
			$$->els = $7;
			$$ = parse_fin(ps, $$);
		}
	|	IF "(" expr ")" block ELSE if_value
		{
			$$ = parse_node(ps, AST_IF, parse_span(@1, @4));
			$$->cond = $3;
			$$->body = $5;
			$$->els = $7;
			$$ = parse_fin(ps, $$);
		}
	;

assign_stmt:
		map ASSIGN value_expr
		{
			$$ = parse_node(ps, AST_ASSIGN, @2);
			$$->op = '=';
			$$->lhs = $1;
			$$->rhs = $3;
			$$ = parse_fin(ps, $$);
		}
	|	var ASSIGN value_expr
		{
			$$ = parse_node(ps, AST_ASSIGN, @2);
			$$->op = '=';
			$$->lhs = $1;
			$$->rhs = $3;
			$$ = parse_fin(ps, $$);
		}
	|	map compound_op expr
		{
			$$ = parse_node(ps, AST_ASSIGN, @$);
			$$->op = $2;
			$$->lhs = $1;
			$$->rhs = $3;
			$$->pred_loc = @2; /* the operator, where bpftrace puts the binop */
			$$ = parse_fin(ps, $$);
		}
	|	var compound_op expr
		{
			$$ = parse_node(ps, AST_ASSIGN, @$);
			$$->op = $2;
			$$->lhs = $1;
			$$->rhs = $3;
			$$->pred_loc = @2;
			$$ = parse_fin(ps, $$);
		}
	|	IDENT ASSIGN value_expr /* `_ = v` (bpftrace 0.24): v run, its value discarded */
		{
			if (strcmp($1, "_")) {
				diag_error(ps->diags, @2, "syntax error, unexpected =, expecting }");
				free($1);
				ast_free($3);
				$$ = NULL;
				YYERROR;
			}
			free($1);
			$$ = parse_unop(ps, AST_EXPR_STMT, 0, $3, @$);
		}
	;

primary_expr:
		IDENT              { $$ = parse_named(ps, AST_IDENT, $1, @1); }
	|	int                { $$ = $1; }
	|	STRING             { $$ = parse_node(ps, AST_STR, @1); $$->str = $1.p; $$->slen = $1.n; }
	|	BUILTIN            { $$ = parse_named(ps, AST_BUILTIN, $1, @1); }
	|	CALL_BUILTIN       { $$ = parse_named(ps, AST_BUILTIN, $1, @1); }
	|	"(" expr ")"       { $$ = $2; }
	|	"(" expr "," vargs ")"
		{
			$$ = parse_node(ps, AST_TUPLE, @$);
			ast_add_kid($$, $2);
			$$ = parse_fin(ps, parse_take_kids($$, $4));
		}
	|	map_or_var         { $$ = $1; }
	|	param              { $$ = $1; }
	|	STACK_MODE         { $$ = parse_named(ps, AST_IDENT, $1, @1); }
	;

postfix_expr:
		primary_expr         { $$ = $1; }
	|	call                 { $$ = $1; }
	|	postfix_expr DOT INT
		{
			$$ = parse_node(ps, AST_TUPLE_INDEX, @$);
			$$->lhs = $1;
			$$->uval = $3;
			$$ = parse_fin(ps, $$);
		}
	|	postfix_expr DOT ident
		{
			$$ = parse_named(ps, AST_FIELD, $3, @$);
			$$->op = '.';
			$$->lhs = $1;
			$$ = parse_fin(ps, $$);
		}
	|	postfix_expr PTR ident
		{
			$$ = parse_named(ps, AST_FIELD, $3, @$);
			$$->op = OP_PTR;
			$$->lhs = $1;
			$$ = parse_fin(ps, $$);
		}
	|	postfix_expr "[" expr "]"
		{
			$$ = parse_node(ps, AST_INDEX, @$);
			$$->lhs = $1;
			$$->rhs = $3;
			$$ = parse_fin(ps, $$);
		}
	|	SIZEOF "(" expr ")"
		{
			$$ = parse_node(ps, AST_SIZEOF, @$);
			$$->lhs = $3;
			$$ = parse_fin(ps, $$);
		}
	|	SIZEOF "(" typeof ")"
		{
			$$ = parse_node(ps, AST_SIZEOF, @$);
			$$->tyn = $3;
			$$ = parse_fin(ps, $$);
		}
	|	SIZEOF "(" type_word ident ")"
		{
			$$ = parse_node(ps, AST_SIZEOF, @$);
			$$->tyn = parse_named(ps, AST_TYPE, parse_cat(parse_cat($3, " "), $4), parse_span(@3, @4));
			free($4);
			$$ = parse_fin(ps, $$);
		}
	|	map_or_var INCREMENT { $$ = parse_unop(ps, AST_INCDEC, OP_INC, $1, @2); }
	|	map_or_var DECREMENT { $$ = parse_unop(ps, AST_INCDEC, OP_DEC, $1, @2); }
	|	INCREMENT ident
		{
			diag_error(ps->diags, @1, "The ++ operator must be applied to a map or variable");
			free($2);
			$$ = NULL;
			YYERROR;
		}
	|	DECREMENT ident
		{
			diag_error(ps->diags, @1, "The -- operator must be applied to a map or variable");
			free($2);
			$$ = NULL;
			YYERROR;
		}
	;

unary_expr:
		unary_op cast_expr   { $$ = parse_unop(ps, AST_UNOP, $1, $2, @1); }
	|	postfix_expr         { $$ = $1; }
	|	INCREMENT map_or_var { $$ = parse_unop(ps, AST_INCDEC, OP_INC, $2, @1); $$->uval = 1; }
	|	DECREMENT map_or_var { $$ = parse_unop(ps, AST_INCDEC, OP_DEC, $2, @1); $$->uval = 1; }
	|	ident DECREMENT
		{
			diag_error(ps->diags, @1, "The -- operator must be applied to a map or variable");
			free($1);
			$$ = NULL;
			YYERROR;
		}
	|	ident INCREMENT
		{
			diag_error(ps->diags, @1, "The ++ operator must be applied to a map or variable");
			free($1);
			$$ = NULL;
			YYERROR;
		}
	;

unary_op:
		MUL   { $$ = '*'; }
	|	BAND  { $$ = '&'; } /* &$x, bpftrace 0.24 */
	|	BNOT  { $$ = '~'; }
	|	LNOT  { $$ = '!'; }
	|	MINUS { $$ = '-'; }
	;

expr:
		conditional_expr { $$ = $1; }
	;

/* conditional_expr -> logical_or_expr ['?' expr ':' conditional_expr] */
conditional_expr:
		logical_or_expr { $$ = $1; }
	|	logical_or_expr QUES expr COLON conditional_expr
		{
			$$ = parse_node(ps, AST_TERNARY, @$);
			$$->cond = $1;
			$$->lhs = $3;
			$$->rhs = $5;
			$$ = parse_fin(ps, $$);
		}
	;

logical_or_expr:
		logical_and_expr                     { $$ = $1; }
	|	logical_or_expr LOR logical_and_expr { $$ = parse_binop(ps, $1, OP_LOR, $3, @2); }
	;

logical_and_expr:
		or_expr                       { $$ = $1; }
	|	logical_and_expr LAND or_expr { $$ = parse_binop(ps, $1, OP_LAND, $3, @2); }
	;

or_expr:
		xor_expr             { $$ = $1; }
	|	or_expr BOR xor_expr { $$ = parse_binop(ps, $1, '|', $3, @2); }
	;

xor_expr:
		and_expr               { $$ = $1; }
	|	xor_expr BXOR and_expr { $$ = parse_binop(ps, $1, '^', $3, @2); }
	;

and_expr:
		equality_expr               { $$ = $1; }
	|	and_expr BAND equality_expr { $$ = parse_binop(ps, $1, '&', $3, @2); }
	;

equality_expr:
		relational_expr                  { $$ = $1; }
	|	equality_expr EQ relational_expr { $$ = parse_binop(ps, $1, OP_EQ, $3, @2); }
	|	equality_expr NE relational_expr { $$ = parse_binop(ps, $1, OP_NE, $3, @2); }
	;

relational_expr:
		shift_expr                    { $$ = $1; }
	|	relational_expr LE shift_expr { $$ = parse_binop(ps, $1, OP_LE, $3, @2); }
	|	relational_expr GE shift_expr { $$ = parse_binop(ps, $1, OP_GE, $3, @2); }
	|	relational_expr LT shift_expr { $$ = parse_binop(ps, $1, '<', $3, @2); }
	|	relational_expr GT shift_expr { $$ = parse_binop(ps, $1, '>', $3, @2); }
	;

shift_expr:
		addi_expr                  { $$ = $1; }
	|	shift_expr LEFT addi_expr  { $$ = parse_binop(ps, $1, OP_SHL, $3, @2); }
	|	shift_expr RIGHT addi_expr { $$ = parse_binop(ps, $1, OP_SHR, $3, @2); }
	;

muli_expr:
		cast_expr               { $$ = $1; }
	|	muli_expr MUL cast_expr { $$ = parse_binop(ps, $1, '*', $3, @2); }
	|	muli_expr DIV cast_expr { $$ = parse_binop(ps, $1, '/', $3, @2); }
	|	muli_expr MOD cast_expr { $$ = parse_binop(ps, $1, '%', $3, @2); }
	;

addi_expr:
		muli_expr                 { $$ = $1; }
	|	addi_expr PLUS muli_expr  { $$ = parse_binop(ps, $1, '+', $3, @2); }
	|	addi_expr MINUS muli_expr { $$ = parse_binop(ps, $1, '-', $3, @2); }
	;

/* cast_expr -> '(' type ')' cast_expr.  `(x)` followed by an operand is
 * a cast, as in bpftrace (a type name cannot be told from a value here). */
cast_expr:
		unary_expr { $$ = $1; }
	|	"(" typeof ")" cast_expr { $$ = parse_cast(ps, $2, $4, @$); }
	|	"(" IDENT ")" cast_expr
		{ $$ = parse_cast(ps, parse_named(ps, AST_TYPE, $2, @2), $4, @$); }
	|	"(" IDENT stars ")" cast_expr
		{
			struct ast_node *t = parse_named(ps, AST_TYPE, $2, parse_span(@2, @3));
			t->uval = $3;
			$$ = parse_cast(ps, t, $5, @$);
		}
	|	"(" type_word ident ")" cast_expr
		{ $$ = parse_cast(ps, parse_named(ps, AST_TYPE, parse_cat(parse_cat($2, " "), $3), parse_span(@2, @3)), $5, @$); free($3); }
	|	"(" type_word ident stars ")" cast_expr
		{
			struct ast_node *t = parse_named(ps, AST_TYPE, parse_cat(parse_cat($2, " "), $3), parse_span(@2, @4));
			t->uval = $4;
			free($3);
			$$ = parse_cast(ps, t, $6, @$);
		}
	;

/* A '-' directly before a literal belongs to the literal: `-1` is int -1. */
int:
		MINUS INT { $$ = parse_node(ps, AST_INT, @$); $$->uval = ~$2 + 1; }
	|	INT       { $$ = parse_node(ps, AST_INT, @$); $$->uval = $1; }
	;

ident:
		IDENT        { $$ = $1; }
	|	BUILTIN      { $$ = $1; }
	|	CALL         { $$ = $1; }
	|	CALL_BUILTIN { $$ = $1; }
	|	STACK_MODE   { $$ = $1; }
	;

/* call -> name '(' [arg (',' arg)*] ')'.  Any name parses; sema says
 * "Unknown function: x" for names it does not know.  An argument may be a
 * type name (`offsetof(struct Foo, y)`), as bpftrace's lexer makes
 * `struct Foo` an identifier there; sema says what it thinks of it. */
call:
		CALL "(" ")"                { $$ = parse_call(ps, $1, @$, @1); $$->op = AST_CALL_KNOWN; }
	|	CALL "(" cargs ")"          { $$ = parse_take_kids(parse_call(ps, $1, @$, @1), $3); $$ = parse_fin(ps, $$); $$->op = AST_CALL_KNOWN; }
	|	CALL_BUILTIN "(" ")"        { $$ = parse_call(ps, $1, @$, @1); $$->op = AST_CALL_KNOWN; }
	|	CALL_BUILTIN "(" cargs ")"  { $$ = parse_take_kids(parse_call(ps, $1, @$, @1), $3); $$ = parse_fin(ps, $$); $$->op = AST_CALL_KNOWN; }
	|	IDENT "(" ")"               { $$ = parse_call(ps, $1, @$, @1); }
	|	IDENT "(" cargs ")"         { $$ = parse_take_kids(parse_call(ps, $1, @$, @1), $3); $$ = parse_fin(ps, $$); }
	|	BUILTIN "(" ")"             { $$ = parse_call(ps, $1, @$, @1); $$->op = AST_CALL_KNOWN; }
	|	BUILTIN "(" cargs ")"       { $$ = parse_take_kids(parse_call(ps, $1, @$, @1), $3); $$ = parse_fin(ps, $$); $$->op = AST_CALL_KNOWN; }
	|	STACK_MODE "(" ")"          { $$ = parse_call(ps, $1, @$, @1); }
	|	STACK_MODE "(" cargs ")"    { $$ = parse_take_kids(parse_call(ps, $1, @$, @1), $3); $$ = parse_fin(ps, $$); }
	;

cargs:
		cargs "," carg { $$ = parse_grow(ps, $1, $3); }
	|	carg           { $$ = parse_grow(ps, parse_node(ps, AST_BLOCK, @1), $1); }
	;

carg:
		expr           { $$ = $1; }
	|	block          { $$ = $1; } /* a block's value (0.24): `m({ $y += 1; $y })` */
	|	type_word ident
		{ $$ = parse_named(ps, AST_IDENT, parse_cat(parse_cat($1, " "), $2), @$); free($2); }
	;

map:
		MAP               { $$ = parse_named(ps, AST_MAP, $1, @$); }
	|	MAP "[" vargs "]" { $$ = parse_take_kids(parse_named(ps, AST_MAP, $1, @$), $3); $$ = parse_fin(ps, $$); }
	;

var:
		VAR { $$ = parse_named(ps, AST_VAR, $1, @$); }
	;

map_or_var:
		var { $$ = $1; }
	|	map { $$ = $1; }
	;

/* Argument and key lists are collected in a scratch AST_BLOCK node and
 * moved into the call or map by parse_take_kids(). */
vargs:
		vargs "," expr { $$ = parse_grow(ps, $1, $3); }
	|	expr           { $$ = parse_grow(ps, parse_node(ps, AST_BLOCK, @1), $1); }
	;

compound_op:
		LEFTASSIGN  { $$ = OP_SHL; }
	|	BANDASSIGN  { $$ = '&'; }
	|	BORASSIGN   { $$ = '|'; }
	|	BXORASSIGN  { $$ = '^'; }
	|	DIVASSIGN   { $$ = '/'; }
	|	MINUSASSIGN { $$ = '-'; }
	|	MODASSIGN   { $$ = '%'; }
	|	MULASSIGN   { $$ = '*'; }
	|	PLUSASSIGN  { $$ = '+'; }
	|	RIGHTASSIGN { $$ = OP_SHR; }
	;

%%

static void ubt_yyerror(struct src_loc *loc, void *scanner, struct parse_state *ps,
			const char *msg)
{
	(void)scanner;
	diag_error(ps->diags, *loc, "%s", msg);
}

/*
 * The tokens bpftrace would list after "expecting".  bpftrace's parser has
 * no LAC: on a bad token it first performs the default reductions of the
 * states it is in, then lists the tokens the state it ends up in can
 * shift.  LAC stops earlier (where the token first fails), so replay those
 * default reductions on a scratch copy of the top of the stack, read
 * straight from bison's tables.  More than four candidates: list none,
 * as bison does.
 */
static int lalr_expected(const yypcontext_t *ctx, yysymbol_kind_t *out, int max)
{
	enum { OVER = 512 };
	yy_state_t over[OVER];
	int nover = 0;
	const yy_state_t *real = ctx->yyssp;
	int tok = ctx->yytoken;

	for (int guard = 0; guard < 100000; guard++) {
		int st = nover ? over[nover - 1] : *real;
		int yyn = yypact[st];
		int rule;
		if (!yypact_value_is_default(yyn) && yyn + tok >= 0 && yyn + tok <= YYLAST &&
		    yycheck[yyn + tok] == tok) {
			int act = yytable[yyn + tok];
			if (act > 0 || yytable_value_is_error(act))
				break;
			rule = -act;
		} else {
			rule = yydefact[st];
		}
		if (rule <= 0)
			break;
		int len = yyr2[rule];
		while (len > 0 && nover > 0) {
			nover--;
			len--;
		}
		real -= len;
		int lhs = yyr1[rule] - YYNTOKENS;
		int s = nover ? over[nover - 1] : *real;
		int yyi = yypgoto[lhs] + s;
		int ns = (0 <= yyi && yyi <= YYLAST && yycheck[yyi] == s) ? yytable[yyi]
									   : yydefgoto[lhs];
		if (nover == OVER)
			break;
		over[nover++] = (yy_state_t)ns;
	}

	int st = nover ? over[nover - 1] : *real;
	int yyn = yypact[st], count = 0;
	if (yypact_value_is_default(yyn))
		return 0;
	int xbegin = yyn < 0 ? -yyn : 0;
	int checklim = YYLAST - yyn + 1;
	int xend = checklim < YYNTOKENS ? checklim : YYNTOKENS;
	for (int x = xbegin; x < xend; x++) {
		if (yycheck[x + yyn] != x || x == YYSYMBOL_YYerror ||
		    yytable_value_is_error(yytable[x + yyn]))
			continue;
		if (count == max)
			return 0;
		out[count++] = (yysymbol_kind_t)x;
	}
	return count;
}

/* Token names as bison's verbose messages show them: bare, except that a
 * name holding a quote, comma or backslash keeps its quotes (so bpftrace
 * says: expecting ) or ","). */
static void symbol_text(struct buf *b, yysymbol_kind_t sym)
{
	const char *name = yysymbol_name(sym);
	if (strpbrk(name, "',\\"))
		buf_printf(b, "\"%s\"", name);
	else
		buf_printf(b, "%s", name);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, struct parse_state *ps)
{
	(void)scanner;
	if (ps->eof_reported)
		return 0;
	struct buf b = { 0 };
	buf_printf(&b, "syntax error");
	yysymbol_kind_t tok = yypcontext_token(ctx);
	if (tok != YYSYMBOL_YYEMPTY) {
		yysymbol_kind_t exp[4];
		int n = lalr_expected(ctx, exp, 4);
		buf_printf(&b, ", unexpected ");
		symbol_text(&b, tok);
		for (int i = 0; i < n; i++) {
			buf_printf(&b, i ? " or " : ", expecting ");
			symbol_text(&b, exp[i]);
		}
	}
	diag_error(ps->diags, *yypcontext_location(ctx), "%s", b.data);
	buf_free(&b);
	return 0;
}

/* ---- entry point -------------------------------------------------------- */

/* NUL bytes and malformed UTF-8 are refused before scanning: flex would
 * otherwise see them as ordinary bytes and columns would lie. */
static int check_bytes(const char *src, size_t len, struct diags *diags)
{
	int line = 1, col = 1;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)src[i];
		size_t need = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
			      : (c & 0xf8) == 0xf0 ? 3 : 9;
		struct src_loc loc = { line, col, line, col + 1 };
		if (c == 0) {
			diag_error(diags, loc, "invalid NUL byte in script");
			return -1;
		}
		bool bad = need == 9 || (need == 1 && c < 0xc2) || i + need >= len + (need ? 0 : 1);
		for (size_t k = 1; !bad && k <= need; k++)
			if (((unsigned char)src[i + k] & 0xc0) != 0x80)
				bad = true;
		if (bad) {
			diag_error(diags, loc, "invalid UTF-8 byte 0x%02x in script", c);
			return -1;
		}
		if (c == '\n') {
			line++;
			col = 1;
		} else {
			col += 1 + (int)need;
		}
		i += 1 + need;
	}
	return 0;
}

/* scanner functions (lexer.l, prefix ubt_yy) */
typedef void *yyscan_t;
int ubt_yylex_init_extra(struct parse_state *extra, yyscan_t *scanner);
int ubt_yylex_destroy(yyscan_t scanner);
void *ubt_yy_scan_bytes(const char *bytes, int len, yyscan_t scanner);
void ubt_yyset_lloc(struct src_loc *loc, yyscan_t scanner);

int parse_script(const char *src, size_t len, struct diags *diags, struct ast_node **prog)
{
	return parse_script_params(src, len, 0, NULL, diags, prog);
}

int parse_script_params(const char *src, size_t len, int nparams, char **params,
			struct diags *diags, struct ast_node **prog)
{
	*prog = NULL;
	if (len > (size_t)1 << 30) {
		diag_error(diags, (struct src_loc){ 0 }, "script too large (%zu bytes)", len);
		return -1;
	}
	if (check_bytes(src, len, diags))
		return -1;

	struct parse_state ps = { .diags = diags, .step_line = 1, .step_col = 1,
				  .nparams = nparams, .params = params };
	ps.prog = xcalloc(1, sizeof(*ps.prog));
	ps.filename = diags->filename;
	yyscan_t scanner;
	if (ubt_yylex_init_extra(&ps, &scanner)) {
		diag_error(diags, (struct src_loc){ 0 }, "cannot start the scanner");
		return -1;
	}
	ubt_yy_scan_bytes(src, (int)len, scanner);
	int errors_before = diags->nerrors;
	int rc = ubt_yyparse(scanner, &ps);
	ubt_yylex_destroy(scanner);
	buf_free(&ps.sbuf);
	buf_free(&ps.cdef);
	if (ps.prog) {
		/* the grammar did not take it (syntax error): free it through a
		 * throwaway program node */
		struct ast_node *tmp = ast_new(AST_PROGRAM, (struct src_loc){ 0 });
		tmp->prog = ps.prog;
		ast_free(tmp);
	}

	if (rc == 0 && ps.root && diags->nerrors == errors_before && !ps.too_deep)
		rc = parse_macros(ps.root, diags);
	if (rc == 0 && ps.root && diags->nerrors == errors_before && !ps.too_deep)
		rc = parse_attach_points(ps.root, diags);
	else
		rc = -1;
	if (rc || diags->nerrors > errors_before) {
		ast_free(ps.root);
		return -1;
	}
	struct ast_program *pg = ps.root->prog;
	pg->nparams = nparams;
	pg->params = xcalloc(nparams ? (size_t)nparams : 1, sizeof(char *));
	for (int i = 0; i < nparams; i++)
		pg->params[i] = xstrdup(params[i]);
	*prog = ps.root;
	return 0;
}
