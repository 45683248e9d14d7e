/*
 * ast.h - the abstract syntax tree of a bpftrace script.
 *
 * Pipeline position: parse_script() (parser.y + lexer.l) builds this tree,
 * sema_check() (sema.c) annotates it with types and resolves maps and
 * variables, cg_compile() (src/codegen) turns it into machine code.  Later
 * stages only read it (const).
 *
 * One node struct serves every kind; which fields a kind uses is written
 * next to the kind.  Lists (probes, attach points, statements, call
 * arguments, map keys) are arrays of child pointers in `kids`.
 *
 *   program          kids = probes (AST_PROBE) in source order
 *   probe            kids = attach points (AST_ATTACH); pred = predicate or
 *                    NULL; body = AST_BLOCK
 *   attach point     str = the full text as written ("uprobe:./t:f");
 *                    provider/target/func split out (see struct ast_attach)
 */
#ifndef UBT_AST_H
#define UBT_AST_H

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include "../util/diag.h"

enum ast_kind {
	/* top level */
	AST_PROGRAM, /* kids = probes */
	AST_PROBE,   /* kids = attach points, pred, body */
	AST_ATTACH,  /* attach.* filled; str = full spec as written */
	/* statements */
	AST_BLOCK,     /* kids = statements */
	AST_EXPR_STMT, /* lhs = expression evaluated for its effect */
	AST_ASSIGN,    /* lhs = AST_MAP or AST_VAR; rhs = value; op = '=' or compound op */
	AST_IF,        /* cond, body (then block), els (else block, or AST_IF, or NULL) */
	/* expressions */
	AST_INT,     /* ival (unsigned bit pattern in uval) */
	AST_STR,     /* str = decoded bytes (escapes resolved), slen = length */
	AST_BUILTIN, /* str = name ("pid", "tid", "arg0", ...) */
	AST_VAR,     /* str = name including '$' */
	AST_MAP,     /* str = name including '@' ("@" for the anonymous map); kids = keys */
	AST_CALL,    /* str = function name; kids = arguments */
	AST_BINOP,   /* op; lhs, rhs */
	AST_UNOP,    /* op ('-', '!', '~'); lhs = operand */
	AST_INCDEC,  /* op = OP_INC or OP_DEC; lhs = map or var; uval = 1 if prefix */
	AST_TERNARY, /* cond, lhs (true), rhs (false) */
	AST_IDENT,   /* str = bare identifier ("x" in `$a = x`); sema rejects it for now */
	AST_TUPLE,   /* kids = elements ("(1, "a")"); sema rejects it for now */
};

/*
 * Operators as stored in node->op.  Single-character operators are their
 * own character; the rest use these codes.
 */
enum ast_op {
	OP_EQ = 256, /* == */
	OP_NE,       /* != */
	OP_LE,       /* <= */
	OP_GE,       /* >= */
	OP_LAND,     /* && */
	OP_LOR,      /* || */
	OP_SHL,      /* << */
	OP_SHR,      /* >> */
	OP_INC,      /* ++ */
	OP_DEC,      /* -- */
};

/* Attach point split into its parts: "uprobe:./t:f" -> provider "uprobe",
 * target "./t", func "f".  BEGIN/END have provider "BEGIN"/"END". */
struct ast_attach {
	char *provider; /* canonical name: "uprobe", "BEGIN", "END", ... ("u" becomes "uprobe") */
	char *target;   /* binary path or NULL */
	char *func;     /* function name or NULL */
};

/* Types assigned by sema (src/parser/sema.c). */
enum ast_type_kind {
	TY_NONE,   /* statement, or not yet typed */
	TY_INT,    /* integer: size bytes (1,2,4,8), is_signed */
	TY_STR,    /* string: size = buffer size including NUL */
	TY_COUNT,  /* count() aggregation */
	TY_SUM,    /* sum() aggregation */
	TY_VOID,   /* call with no value (printf, exit) */
	/* aggregations (sema_call.c); per-CPU values in the runtime */
	TY_AVG,    /* avg() */
	TY_MIN,    /* min() */
	TY_MAX,    /* max() */
	TY_STATS,  /* stats() */
	TY_HIST,   /* hist() */
	TY_LHIST,  /* lhist(v, min, max, step) */
	TY_USYM,   /* a code address of the target, printed as its symbol: usym(), func
	            * (8 bytes, an integer in code; output/sym.c names it) */
};

/* Address space a value's pointer-ish bits refer to; only shown by the
 * typed AST dump (bpftrace prints ", AS(user)" for argN in a uprobe). */
enum ast_addrspace {
	AS_NONE,   /* not printed */
	AS_KERNEL, /* "AS(kernel)": string literals, comm */
	AS_USER,   /* "AS(user)": argN in uprobes */
};

struct ast_type {
	enum ast_type_kind kind;
	int size;       /* bytes */
	bool is_signed;
	enum ast_addrspace as; /* added for the dump; ignore for code generation */
};

struct sema_map;
struct sema_var;

struct ast_node {
	enum ast_kind kind;
	struct src_loc loc;
	int op;         /* ast_op or a character */
	uint64_t uval;  /* AST_INT value; AST_INCDEC: 1 if prefix */
	char *str;      /* names and string literal bytes */
	size_t slen;    /* AST_STR length (without the NUL) */
	struct ast_node *lhs, *rhs, *cond, *body, *els, *pred;
	struct ast_node **kids;
	int nkids;
	struct ast_attach attach; /* AST_ATTACH only */
	/* filled by sema */
	struct ast_type type;
	struct sema_map *map; /* AST_MAP: the map this names */
	struct sema_var *var; /* AST_VAR: the variable this names */
	int builtin_arg;      /* AST_BUILTIN argN: N */
	/* AST_ASSIGN with a compound op (`@x += 2`): type of `lhs op rhs`, which
	 * bpftrace types and prints as a binop node of its own. */
	struct ast_type optype;
	/* AST_PROBE: the predicate with its slashes (bpftrace's error range);
	 * compound AST_ASSIGN: the operator token; AST_CALL: the name token. */
	struct src_loc pred_loc;
	int depth;            /* parser: height of this subtree (nesting limit) */
};

/* Trees deeper than this are refused by the parser ("nested too deeply"),
 * so every recursive walker over a parsed tree is bounded. */
#define AST_MAX_DEPTH 1000

struct ast_node *ast_new(enum ast_kind kind, struct src_loc loc);
void ast_add_kid(struct ast_node *parent, struct ast_node *kid);
void ast_free(struct ast_node *n);
/* "==", "<<", "+": an operator as written (static storage for one-char ones). */
const char *ast_op_text(int op);

/*
 * `ubt -d ast` / `-d types`: bpftrace's own AST dump format, one node per
 * line, one space of indent per depth; with_types appends " :: type[...]"
 * exactly as bpftrace 0.17 prints it after its semantic pass:
 *
 *   Program
 *    uprobe:./t:f
 *     =
 *      map: @c :: type[count, ctx: 0]
 *      call: count :: type[count, ctx: 0]
 */
void ast_dump(const struct ast_node *prog, bool with_types, FILE *out);

/* parser entry point: 0 on success, -1 if errors were added to diags. */
int parse_script(const char *src, size_t len, struct diags *diags, struct ast_node **prog);

#endif
