/*
 * sema.h - semantic analysis: types, maps, variables, builtin and function
 * checks.  Runs after parse_script() and before cg_compile().
 *
 * sema_check() annotates every expression node's `type`, links AST_MAP
 * nodes to a struct sema_map and AST_VAR nodes to a struct sema_var, and
 * fills struct sema_info with everything later stages need to know about
 * the program as a whole.  All errors go to diags in bpftrace's wording.
 *
 * Room rule (src/sema/): a pure pass over the AST, above src/parser and
 * below codegen; it includes only parser/ and util/ (tests/layers/check.py).
 * What it needs from files (a uprobe's DWARF arguments) was put on the AST
 * before it runs (attach/resolve/dwarf.c).
 */
#ifndef UBT_SEMA_H
#define UBT_SEMA_H

#include "parser/ast.h"

#define SEMA_MAX_KEYS 8

/* One global map (@name); all AST_MAP nodes naming it point here. */
struct sema_map {
	char *name;            /* "@c", "@" for the anonymous map */
	int id;                /* index in sema_info.maps, in order of first appearance */
	int nkeys;             /* 0 = scalar map */
	struct ast_type keys[SEMA_MAX_KEYS];
	struct ast_type value; /* TY_COUNT, TY_SUM, TY_INT, TY_STR, ... */
	int64_t lhist_min, lhist_max, lhist_step; /* TY_LHIST: the literal arguments */
	int hist_bits;	    /* TY_HIST: hist(v, k)'s k, 0..5: 2^k buckets per power of 2 */
	int hist_bits_pass; /* the sema pass that set hist_bits (one k per map) */
	uint32_t max_keys;  /* `let @m = hash(N);`: N; 0: max_map_keys */
};

/* One scratch variable ($x); scoped to its probe. */
struct sema_var {
	char *name;
	struct ast_type type;
	struct ast_node *probe; /* the AST_PROBE it belongs to */
	/* the block it is visible in: NULL for variables created by a plain
	 * assignment (probe-wide, as in bpftrace 0.17); `let` and loop
	 * variables belong to their block (the loop body) */
	const struct ast_node *scope;
};

/* printf formats are checked here and kept for the output stage. */
struct sema_printf {
	int id;                /* index in sema_info.printfs */
	char *fmt;             /* the literal format string (decoded) */
	int nargs;
	struct ast_type args[16];
	struct ast_node *call;
};

struct sema_info {
	struct sema_map **maps;
	int nmaps;
	struct sema_var **vars;
	int nvars;
	struct sema_printf **printfs;
	int nprintfs;
	int stack_frames; /* the most frames a ustack asks for; 0: no ustack (issue 7) */
	const struct ast_program *prog; /* its enumerators, for `%s` of an enum (output) */
};

/* --unsafe: allow system() (set by the driver before sema_check). */
extern bool sema_unsafe;
/* config probe_inline (or BPFTRACE_PROBE_INLINE=1): a uprobe's points are all
 * mid-function ones (its inlined copies; set by the driver before sema_check) */
extern bool sema_probe_inline;
/* `--name[=value]` words after the script (bpftrace 0.24's named
 * parameters, read by getopt()); set by the driver before sema_check. */
extern char **sema_named_args;
extern int sema_nnamed_args;

/* Returns 0, or -1 if errors were added to diags. */
int sema_check(struct ast_node *prog, struct diags *diags, struct sema_info *info);
void sema_info_free(struct sema_info *info);
/* The trampoline kind (runtime enum rt_stack_kind) every attach point of
 * the probe has: 0 entry, 1 inside a function, 2 return, 3 none (BEGIN);
 * -1 when they differ (sema_stack.c). */
int sema_stack_kind(const struct ast_node *probe);
/*
 * A script whose uprobe probes read a register the entry trampoline does
 * not save (reg("ax"), "bx", "bp", "r10", "r12".."r15", "ip"; issue 25: Go
 * passes arguments in rax, rbx, ...): true.  The driver sets sema_all_regs
 * from it before resolving; then every uprobe point is a mid-function one,
 * whose trampoline saves every register (resolve.c, sema_stack_kind), as
 * under probe_inline: two probes of one function need one kind of site.
 * A script that reads none keeps the entry trampoline.
 */
bool sema_program_wants_all_regs(const struct ast_node *prog);
extern bool sema_all_regs;
/*
 * The loops of one probe hit run at most SEMA_HIT_BUDGET instructions (an
 * estimate, the kernel verifier's limit for bpftrace) and for at most
 * SEMA_HIT_NS; past either the hit ends there, counted, and ubt reports it.
 * Loops that can never fit are refused by sema_check (sema_loop.c).
 */
#define SEMA_HIT_BUDGET 1000000
#define SEMA_HIT_NS 100000000ull
/* Instructions one iteration of a loop (while, for, unroll) charges against the budget. */
uint64_t sema_loop_charge(const struct ast_node *loop);

/* reg("name"): bpftrace's x86-64 register names, index in a reg() node's cval */
#define SEMA_NREGS 21
extern const char *const sema_reg_names[SEMA_NREGS];

#endif
