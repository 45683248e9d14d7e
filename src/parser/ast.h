/*
 * ast.h - the abstract syntax tree of a bpftrace script.
 *
 * Pipeline position: parse_script() (parser.y + lexer.l) builds this tree,
 * sema_check() (src/sema) annotates it with types and resolves maps and
 * variables, cg_compile() (src/codegen) turns it into machine code.  Later
 * stages only read it (const).
 *
 * Room rule (src/parser/): text in, AST out; the parser includes only
 * util/, never sema or a later stage (tests/layers/check.py).
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
	AST_EXPR_STMT, /* lhs = expression evaluated for its effect; op = 'v' when it ends
			* its block without ';' (a block's value, for macros) */
	AST_ASSIGN,    /* lhs = AST_MAP or AST_VAR; rhs = value; op = '=' or compound op */
	AST_IF,	       /* cond, body (then block), els (else block, or AST_IF, or NULL) */
	AST_WHILE,     /* cond, body; the hit's budget bounds the iterations (sema_loop.c) */
	AST_UNROLL,    /* lhs = count (AST_INT or AST_POSPARAM); body; sema sets uval = count */
	AST_FOR_MAP,   /* `for ($kv : @m) {}`: lhs = AST_VAR, rhs = AST_MAP (no keys), body;
			* $kv is a 2-tuple (key, value); with several keys, key is a tuple */
	AST_FOR_RANGE, /* `for ($i : a..b) {}`: lhs = AST_VAR, kids = {a, b}, body; a <= $i < b */
	AST_BREAK,     /* inside while/for only (sema checks) */
	AST_CONTINUE,  /* inside while/for only */
	AST_RETURN,    /* lhs = value or NULL; ends the probe */
	AST_LET,       /* `let $x [: type] [= e]`: lhs = AST_VAR, tyn = AST_TYPE or NULL,
			* rhs = initialiser or NULL; $x is scoped to the enclosing block */
	AST_CONFIG,    /* `config = { k = v; ... }`: kids = AST_ASSIGN with lhs AST_IDENT */
	AST_MACRO,     /* `macro name(params) { body }` (bpftrace 0.24): str = name, kids =
			* parameters (AST_VAR, AST_MAP or AST_IDENT), body; expanded at
			* each use and removed before sema (macro.c) */
	/* expressions */
	AST_INT,	 /* ival (unsigned bit pattern in uval) */
	AST_STR,	 /* str = decoded bytes (escapes resolved), slen = length */
	AST_BUILTIN,	 /* str = name ("pid", "tid", "arg0", ...) */
	AST_VAR,	 /* str = name including '$' */
	AST_MAP,	 /* str = name including '@' ("@" for the anonymous map); kids = keys */
	AST_CALL,	 /* str = function name; kids = arguments; op = AST_CALL_KNOWN when the
			  * name is one of bpftrace's builtins or functions (the lexer's class) */
	AST_BINOP,	 /* op; lhs, rhs */
	AST_UNOP,	 /* op ('-', '!', '~'); lhs = operand */
	AST_INCDEC,	 /* op = OP_INC or OP_DEC; lhs = map or var; uval = 1 if prefix */
	AST_TERNARY,	 /* cond, lhs (true), rhs (false) */
	AST_IDENT,	 /* str = bare identifier ("x" in `$a = x`): a #define or enum constant;
			  * sema: uval = 1 for a #define'd integer (ast_int_literal) */
	AST_TUPLE,	 /* kids = elements ("(1, "a")"); type TY_TUPLE */
	AST_CAST,	 /* `(type)e`: tyn = AST_TYPE, lhs = e; type = the target type */
	AST_FIELD,	 /* `e.f` (op '.') or `e->f` (op OP_PTR): lhs = e, str = field name;
			  * type = the member's; field = the member (sema) */
	AST_INDEX,	 /* `e[i]` on an array or pointer: lhs = e, rhs = i; type = element */
	AST_TUPLE_INDEX, /* `t.N`: lhs = tuple, uval = N; type = element N */
	AST_POSPARAM,	 /* `$N`: uval = N, str = "$N"; sema types it int64 if the
			  * parameter is a number, else string (see sema_params) */
	AST_PARAMCOUNT,	 /* `$#`: number of positional parameters, int64 */
	AST_SIZEOF,	 /* `sizeof(type)` (tyn) or `sizeof(expr)` (lhs); uint64, value in cval */
	AST_TYPE,	 /* a type as written: str = "uint32", "struct x", "string", ...;
			  * uval = pointer depth ("struct x **" -> 2), slen = array/string
			  * size in brackets or 0; type = resolved by sema */
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
	OP_PTR,      /* -> (AST_FIELD) */
};

/* AST_CALL's op when its name is a builtin or function of bpftrace's */
#define AST_CALL_KNOWN 1

/* Attach point split into its parts: "uprobe:./t:f" -> provider "uprobe",
 * target "./t", func "f".  BEGIN/END have provider "BEGIN"/"END". */
/*
 * target, func and ns are fnmatch() patterns: a character the script wrote
 * quoted or after a backslash that means something in a pattern or an
 * attach point (* ? [ ] \ +) is stored with a backslash (attach_spec.c).
 */
struct ast_attach {
	char *provider; /* canonical name: "uprobe", "BEGIN", "END", ... ("u" becomes "uprobe") */
	char *target;   /* binary path or NULL; interval/profile: the unit ("s", "ms", "hz");
	                 * usdt: "" for the -p process's objects */
	char *func;     /* function or usdt probe name or NULL; may hold wildcards (* ? [..]) */
	char *ns;       /* usdt provider ("spdk" in usdt:/bin/x:spdk:nvmf_poll), or NULL */
	uint64_t freq;  /* interval/profile/software/hardware: the number after the unit */
	bool has_offset;  /* uprobe:bin:func+OFF written (also +0) */
	uint64_t offset;  /* uprobe:bin:func+0x10: 0x10 */
	uint64_t address; /* uprobe:bin:0x401000 (func is NULL then) */
	bool wildcard;    /* target, ns or func holds a wildcard: expand when resolving */
	bool kernel;      /* a provider that needs the kernel (kprobe, tracepoint, ...) */
	/* uprobe:BIN@FILE:LINE[:COL] (bpftrace 0.26): target BIN, func NULL */
	char *src_file;
	uint32_t src_line, src_col; /* src_col 0: any column */
};

/* An attach pattern holds an unescaped wildcard (* ? [). */
bool attach_is_wild(const char *pat);
/* The name a pattern stands for when it has no wildcard: escapes removed (malloc'ed). */
char *attach_plain(const char *pat);

/* Types assigned by sema (src/sema/sema.c). */
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
	TY_USTACK, /* ustack, ustack(mode, n): a stack id (8 bytes, runtime/mem/rt_stack.c);
	            * count = AST_STACK(mode, n) */
	/* types of the C preamble, casts and tuples (issue 3) */
	TY_PTR,    /* pointer: elem = pointee type, size 8 */
	TY_STRUCT, /* struct or union: rec = its layout, size = rec->size */
	TY_ARRAY,  /* fixed-size array: elem, count; size = elem->size * count */
	TY_TUPLE,  /* tuple: tup = element types and offsets; size = packed size */
	/* values formatted by ubt when printed (issue 4, output/values.c); bytes
	 * in a buffer of their size, like a tuple (ast_type_is_blob) */
	TY_BUF,      /* buf(p, n): size = 1 + n: a u8 length, then the bytes */
	TY_TSTAMP,   /* strftime(fmt, ns): 16 bytes: u64 format id (sema_printf), u64 ns */
	TY_INET,     /* ntop([af,] a): 24 bytes: u64 address family, 16 address bytes */
	TY_STRERROR, /* strerror(e): 8 bytes, the error number */
	TY_USERNAME, /* username: 8 bytes, the uid (ubt prints its /etc/passwd name) */
	TY_MACADDR,  /* macaddr(p): the 6 bytes */
	TY_CGPATH,   /* cgroup_path(id[, filter]): 16 bytes: u64 filter id (sema_printf),
	              * u64 cgroup id; ubt names it from the cgroup mounts */
};

/* Kept and copied as bytes, keyed and compared byte for byte, printed by
 * type (output/values.c): records, arrays, tuples and the formatted values
 * above. */
static inline bool ast_type_is_blob(enum ast_type_kind k)
{
	return k == TY_TUPLE || k == TY_BUF || k == TY_TSTAMP || k == TY_INET ||
	       k == TY_STRERROR || k == TY_USERNAME || k == TY_MACADDR || k == TY_CGPATH ||
	       k == TY_STRUCT || k == TY_ARRAY;
}

/* Address space a value's pointer-ish bits refer to; only shown by the
 * typed AST dump (bpftrace prints ", AS(user)" for argN in a uprobe). */
enum ast_addrspace {
	AS_NONE,   /* not printed */
	AS_KERNEL, /* "AS(kernel)": string literals, comm */
	AS_USER,   /* "AS(user)": argN in uprobes */
};

/* nsecs(mode)'s clock, in the AST_BUILTIN's uval */
enum ast_clock {
	AST_CLOCK_DEFAULT,   /* nsecs: CLOCK_BOOTTIME in ubt */
	AST_CLOCK_MONOTONIC, /* nsecs(monotonic) */
	AST_CLOCK_BOOT,	     /* nsecs(boot) */
	AST_CLOCK_TAI,	     /* nsecs(tai) */
	AST_CLOCK_SW_TAI,    /* nsecs(sw_tai): the same clock as tai in user space */
};

/* TY_USTACK's count: the print mode and the number of frames */
enum ast_stack_mode {
	AST_STACK_BPFTRACE, /* "        sym+off" lines */
	AST_STACK_PERF,     /* "\thexaddr sym+off (path)" lines */
	AST_STACK_RAW,      /* "        hexaddr" lines */
};
#define AST_STACK(mode, n) ((int)(mode) << 16 | (n))
#define AST_STACK_MODE(t) ((enum ast_stack_mode)((t)->count >> 16))
#define AST_STACK_FRAMES(t) ((t)->count & 0xffff)

struct ast_record;
struct ast_tuple;

struct ast_type {
	enum ast_type_kind kind;
	int size;       /* bytes */
	bool is_signed;
	enum ast_addrspace as; /* added for the dump; ignore for code generation */
	bool is_bool;	       /* TY_INT: a bool (bpftrace 0.24's true/false), printed as such */
	const char *enum_tag;  /* TY_INT of an enum: its tag (ast_const.enum_tag), by which
				* `%s` prints the enumerator's name (bpftrace 0.21) */
	/* composite types; what these point to lives in the program's type
	 * arena (struct ast_program) and outlives sema_info */
	const struct ast_type *elem;   /* TY_PTR: pointee; TY_ARRAY: element */
	int count;                     /* TY_ARRAY: number of elements */
	const struct ast_record *rec;  /* TY_STRUCT */
	const struct ast_tuple *tup;   /* TY_TUPLE */
};

/* One member of a struct/union from the script's C preamble. */
struct ast_member {
	char *name;
	struct ast_type type;
	int offset;          /* bytes from the start of the record */
	int bit_off, bit_width; /* bitfield: bits from offset's byte (LSB first), width; 0 if none */
};

/* struct NAME { ... } / union NAME { ... } */
struct ast_record {
	char *name;          /* "struct task" / "union u" as bpftrace prints it */
	bool is_union;
	bool complete;       /* declared with a body (else only named, `struct x *` only) */
	int size, align;
	int nmembers;
	struct ast_member *members;
};

/* (t0, t1, ...): packed like a C struct with natural alignment, as bpftrace */
struct ast_tuple {
	int count;
	struct ast_type *types;
	int *offsets;
};

/* A named constant: `#define N 10`, enum members, or `#define S "text"`. */
struct ast_const {
	char *name;
	int64_t value;
	char *str;      /* string #define: the bytes, else NULL */
	bool is_enum;   /* an enumerator (uint64, not a literal), else a #define */
	char *enum_tag; /* the enumerator's enum: "Foo" of enum Foo, the anonymous one's name */
};

/*
 * What a program has besides its probes: the C preamble (records,
 * typedefs, constants), the config block, the positional parameters
 * (set by the driver before sema_check), and the arena that owns every
 * composite type the front end creates.  Hangs off AST_PROGRAM (node->prog).
 */
struct ast_typedef {
	char *name;
	struct ast_type type;
};

struct ast_program {
	struct ast_record **records;
	int nrecords;
	struct ast_typedef *typedefs;
	int ntypedefs;
	struct ast_const *consts;
	int nconsts;
	struct ast_node *config; /* AST_CONFIG or NULL */
	int nparams;             /* positional parameters $1..$N */
	char **params;
	void *arena;             /* allocations freed with the program */
	/* `let @m = lruhash(N);` at the top (bpftrace 0.24's map declarations):
	 * the AST_LET nodes (lhs AST_MAP, rhs AST_CALL kind(N)), in order */
	struct ast_node **mapdecls;
	int nmapdecls;
	/* the script uses what only bpftrace 0.24 and later have (macros,
	 * durations, lowercase begin, true/false, ...): sema warns where ubt
	 * keeps 0.17's meaning of something those versions changed */
	bool newer;
};

/* A deep copy of a tree as the parser made it (before sema). */
struct ast_node *ast_clone(const struct ast_node *n);

/* Arena allocation for types that must live as long as the program. */
void *ast_arena_alloc(struct ast_program *p, size_t size);
/* The record named "struct x"/"union x", NULL if unknown; create makes an
 * incomplete one. */
struct ast_record *ast_record_find(struct ast_program *p, const char *name, bool create);
/* A value's alignment inside a tuple (C's for C types). */
int ast_type_align(const struct ast_type *t);
/* Interned pointer-to-t and tuple types. */
struct ast_type ast_ptr_to(struct ast_program *p, struct ast_type t);
struct ast_type ast_tuple_of(struct ast_program *p, const struct ast_type *types, int n);
/* "count", "int64", "unsigned int64", "string[4]": bpftrace's type names. */
const char *ast_type_name(const struct ast_type *t, char *buf, size_t len);
bool ast_type_eq(const struct ast_type *a, const struct ast_type *b);
/*
 * An integer known before code generation that bpftrace counts as a
 * literal (after sema typed n): `5`, `-5`, `$1` given a number, `$#`, a
 * #define'd integer (bpftrace's preprocessor makes it one).  Enumerators
 * are not literals in bpftrace.  False for anything else.
 */
bool ast_int_literal(const struct ast_node *n, int64_t *v);

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
	struct ast_node *tyn;     /* AST_CAST, AST_LET, AST_SIZEOF: the AST_TYPE written */
	struct ast_program *prog; /* AST_PROGRAM only: preamble, config, params */
	/* filled by sema */
	struct ast_type type;
	struct sema_map *map; /* AST_MAP: the map this names */
	struct sema_var *var; /* AST_VAR: the variable this names */
	int builtin_arg;      /* AST_BUILTIN argN: N */
	const struct ast_member *field; /* AST_FIELD: the member read */
	/* sema: a value known before code generation -- AST_POSPARAM (numeric),
	 * AST_PARAMCOUNT, AST_SIZEOF, AST_IDENT naming a constant (cstr set for
	 * a string #define, else cval) */
	uint64_t cval;
	const char *cstr;
	/* AST_ASSIGN with a compound op (`@x += 2`): type of `lhs op rhs`, which
	 * bpftrace types and prints as a binop node of its own. */
	struct ast_type optype;
	/* AST_PROBE: the predicate with its slashes (bpftrace's error range);
	 * compound AST_ASSIGN: the operator token; AST_CALL: the name token. */
	struct src_loc pred_loc;
	int depth;            /* parser: height of this subtree (nesting limit) */
	/* AST_PROBE: the parameters of its uprobe's function, read from DWARF
	 * before sema (attach/resolve/dwarf.c); NULL if the probe does not use `args`.
	 * Incomplete when they could not be found (the error is reported). */
	const struct ast_record *args;
	/* AST_PROBE on system-call tracepoints that reads `args`: the record of
	 * each tracepoint its points match (attach/resolve/syscalls.c), in
	 * order; args is the first.  sema checks a field in every one, as
	 * bpftrace checks each expanded tracepoint. */
	const struct ast_record **tp_args;
	int ntp_args;
	/* AST_PROBE that reads `probe`: the longest full name among its sites
	 * (`uprobe:./t:mul`, wildcards expanded), found before sema
	 * (attach/resolve/names.c) so the string type holds it; 0 if unknown. */
	int probe_name_len;
	/* AST_CALL uaddr("sym"): the symbol, found before sema (attach/resolve/dwarf.c):
	 * its file (in the program's arena), link-time address and size;
	 * sym_file NULL if not found.  Once the process is open the driver
	 * puts its address in the target into cval (att_uaddr_bind). */
	const char *sym_file;
	uint64_t sym_vaddr, sym_size;
};

/*
 * Layout of the `args` record (a uprobe's parameters, attach/resolve/dwarf.c; built
 * by codegen from the registers at function entry): a parameter passed in
 * the k-th integer argument register (rdi, rsi, rdx, rcx, r8, r9) is at
 * offset 8*k (a 16-byte struct in two registers spans two slots); one
 * passed on the stack is at AST_ARGS_STACK_OFF + its offset above the
 * return address minus 8 (the first stack argument is at 48).
 */
#define AST_ARGS_STACK_OFF 48

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
/* The same with the positional parameters $1..$N (params[0..nparams-1]):
 * `$N` in attach points is their text, and the program keeps a copy for
 * sema (ast_program.params). */
int parse_script_params(const char *src, size_t len, int nparams, char **params,
			struct diags *diags, struct ast_node **prog);
/* -p given: usdt attach points may name no binary (usdt::prov:name, usdt:*),
 * meaning the process's objects, as in bpftrace (set before parse_script) */
extern bool parse_have_pid;
/*
 * `ubt -l SEARCH` parses SEARCH as attach points, where bpftrace also
 * takes a wildcard probe type (`*:./t:*`) and a word without ':' (`*sleep*`,
 * a probe name anywhere).  Such a point keeps its type as a pattern in
 * provider (`*` for the word; kernel false) and the rest split as for usdt:
 * [target:[ns:]]func.  With -p, `uprobe:*` names the process's program.
 */
extern bool parse_listing;

#endif
