/*
 * sema_internal.h - what the parts of semantic analysis share: sema.c
 * (statements, expressions, maps, variables) and sema_call.c (builtins
 * and function calls).
 */
#ifndef UBT_SEMA_INTERNAL_H
#define UBT_SEMA_INTERNAL_H

#include <stdio.h>
#include "sema.h"

enum { SEMA_PASSES = 3 };

struct sema {
	struct diags *diags;
	struct sema_info *info;
	int pass;
	bool final;
	struct ast_node *probe;   /* probe being checked */
	const char *func;         /* call whose arguments are being checked */
	int func_arg;             /* index of that argument */
	struct ast_program *prog; /* preamble, params, type arena */
	const struct ast_node *scopes[AST_MAX_DEPTH + 1]; /* open blocks, outermost first */
	int nscopes;
	int loop_depth;           /* enclosing while/for loops (break, continue) */
	bool said_truth, said_strlen; /* sema_newer.c's warnings, once each */
};

/* What an AST_CALL is the value of: bpftrace's call.map / .var / .key_for_map. */
enum call_use {
	USE_NONE,
	USE_MAP,  /* @m = f() */
	USE_VAR,  /* $v = f() */
	USE_KEY,  /* @m[f()] */
};

void sema_expr(struct sema *s, struct ast_node *n, enum call_use use,
		const struct ast_node *user);

/* ---- types -------------------------------------------------------------- */

static const struct ast_type ty_none __attribute__((unused)) = { TY_NONE, 0, false, AS_NONE };
static const struct ast_type ty_int64 __attribute__((unused)) = { TY_INT, 8, true, AS_NONE };
static const struct ast_type ty_uint64 __attribute__((unused)) = { TY_INT, 8, false, AS_NONE };
static const struct ast_type ty_bool __attribute__((unused)) = {TY_INT, 1, false, AS_NONE, true};

static inline struct ast_type ty_str(int size)
{
	return (struct ast_type){ TY_STR, size, false, AS_NONE };
}


const char *sema_kind_name(const struct ast_type *t);
const char *sema_tn(const struct ast_type *t, char buf[64]);

/* sema_newer.c: bpftrace 0.19-0.24's calls lowered onto ubt's (each true when it took n) */
void sema_map_key_form(struct ast_node *n);
bool sema_builtin_call(struct sema *s, struct ast_node *n);
bool sema_offsetof_call(struct sema *s, struct ast_node *n);
bool sema_getopt_call(struct sema *s, struct ast_node *n);
bool sema_find_call(struct sema *s, struct ast_node *n); /* then check n, an AST_BLOCK */
void sema_map_decls(struct sema *s); /* after the last pass: the declared sizes */
/* A comparison, a logical operation, has_key or strcontains: 0/1 here, bool in 0.24+. */
bool sema_is_truth(const struct ast_node *n);
/* In a script of bpftrace 0.24+ (ast_program.newer), once each: a truth value
 * printed or stored (1/0, where 0.24 prints true/false); str() without a
 * length (64 bytes, where 0.24 reads 1024). */
void sema_newer_warn_truth(struct sema *s, const struct ast_node *value, struct src_loc loc);
void sema_newer_warn_strlen(struct sema *s, const struct ast_node *call);

/* sema_call.c */
int sema_strlen(void);
void sema_builtin(struct sema *s, struct ast_node *n);
bool sema_builtin_ret(struct sema *s, struct ast_node *n); /* retval func nsecs */
/* sema_call.c, issue 7: usym(), func in uprobes */
bool sema_sym_builtin(struct sema *s, struct ast_node *n);
bool sema_sym_call(struct sema *s, struct ast_node *n, enum call_use use,
		   const struct ast_node *user);
void sema_call(struct sema *s, struct ast_node *n, enum call_use use, const struct ast_node *user);
/* sema_call.c, shared with sema_fmt.c */
bool sema_check_use(struct sema *s, struct ast_node *n, enum call_use use,
		    const struct ast_node *user, bool want_map);
bool sema_check_nargs(struct sema *s, struct ast_node *n, int want);
void sema_register_fmt(struct sema *s, struct ast_node *n, const char *fmt, size_t len, int first);
/* sema_fmt.c: buf, strftime, join, strerror, ntop, pton, macaddr */
bool sema_fmt_call(struct sema *s, struct ast_node *n, enum call_use use,
		   const struct ast_node *user);
bool sema_fmt_string_like(enum ast_type_kind k); /* printed as text by %s */
/* sema_fmt.c: bpftrace's check_varargs() and check_arg() (argument i is a
 * `want`, a literal one when literal), with its messages */
bool sema_check_varargs(struct sema *s, struct ast_node *n, int lo, int hi);
bool sema_check_arg(struct sema *s, struct ast_node *n, int i, enum ast_type_kind want,
		    bool literal);
/* sema_stack.c, issue 7: ustack, uaddr() */
bool sema_stack_call(struct sema *s, struct ast_node *n);
bool sema_uaddr_call(struct sema *s, struct ast_node *n);

/* sema_args.c, issue 7: a uprobe's `args` (typed from DWARF by attach/resolve/dwarf.c) */
bool sema_args_builtin(struct sema *s, struct ast_node *n);
bool sema_args_field(struct sema *s, struct ast_node *n);

/* sema_loop.c: loops that can never fit in one probe hit are errors */
void sema_loops(struct diags *d, const struct ast_node *prog);

/* sema_types.c: casts, fields, indexes, tuples, constants, params, sizeof */
bool sema_resolve_type(struct sema *s, struct ast_node *tyn, struct ast_type *out);
/* sema_stack.c: reg() of r is read from an entry's or return's struct rt_regs */
bool sema_entry_saves_reg(const char *r);
/* sema.c: map `name` is known to be used without keys (`@g = 2`) */
bool sema_map_is_scalar(struct sema *s, const char *name);
void sema_cast(struct sema *s, struct ast_node *n);
void sema_field(struct sema *s, struct ast_node *n);
void sema_index(struct sema *s, struct ast_node *n);
void sema_deref(struct sema *s, struct ast_node *n);
void sema_tuple(struct sema *s, struct ast_node *n);
void sema_tuple_index(struct sema *s, struct ast_node *n);
void sema_posparam(struct sema *s, struct ast_node *n);
bool sema_str_param_offset(struct sema *s, struct ast_node *n);
void sema_ident(struct sema *s, struct ast_node *n);
void sema_sizeof(struct sema *s, struct ast_node *n);

#endif
