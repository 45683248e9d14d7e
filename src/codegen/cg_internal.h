/*
 * cg_internal.h - state shared by the code generator's files.
 */
#ifndef UBT_CG_INTERNAL_H
#define UBT_CG_INTERNAL_H

#include "codegen.h"

#include <llvm-c/Core.h>

struct cg {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMTypeRef i1, i8, i32, i64, ptr, ptr_fs, void_t;
	LLVMValueRef shm;  /* @ubt_shm: the data part */
	LLVMValueRef priv; /* @ubt_priv: struct rt_priv, the target's private page */
	/* runtime helpers */
	LLVMValueRef fn_thread_enter, fn_thread_exit, fn_ring_reserve, fn_ring_commit,
		fn_map_lookup, fn_gettid, fn_map_delete;
	LLVMTypeRef ty_thread_enter, ty_thread_exit, ty_ring_reserve, ty_ring_commit,
		ty_map_lookup, ty_gettid, ty_map_delete;
	/* the probe being generated */
	LLVMValueRef fn;
	LLVMValueRef regs;   /* struct rt_regs * */
	LLVMValueRef frame_regs; /* the same (or struct rt_regs_mid *) whose `ret` is the real
				  * return slot, for code that needs stack addresses (ustack) */
	LLVMValueRef thread; /* struct rt_thread *, or NULL when the probe needs none */
	LLVMValueRef frame;  /* a handler's F: its caller's frame (abi.h) */
	bool pstack;         /* the handler runs on a probe stack (runtime/thread/rt_pstack.c) */
	bool uses_pstack;    /* some code does (cg_object.pstack) */
	char **forced;       /* handlers whose frames were too big for the target's stack */
	int nforced;
	/* frame sizes LLVM reported (codegen.c, on_diag), as many as it reports
	 * (a fixed 1,024 refused a probe compiled for more functions) */
	struct cg_frame {
		char *name;
		uint64_t size;
	} *frames;
	int nframes, frames_cap;
	LLVMBasicBlockRef exit_bb;
	LLVMBasicBlockRef loop_break, loop_continue; /* innermost loop (cg_expr.c) */
	LLVMValueRef budget, loop_t0; /* i64 locals of a probe with loops (cg_loop.c) */
	LLVMValueRef *vars; /* alloca per sema_var, indexed like sema_info.vars */
	const struct ast_node *probe;
	const struct cg_usdt_spec *usdt_spec; /* usdt variant being generated, or NULL */
	const struct cg_usdt_spec *sys_spec;  /* system-call site variant (sys_kind set), or NULL */
	const char *site_name; /* `probe` of the sites of the variant being generated, or NULL */
	/* the variant's sites have several names: `probe` is site_names[id], id
	 * from the trampoline (runtime/abi.h, "Site ids"); the table, made on
	 * first use, is shared by the probe's variants */
	const struct cg_usdt_variants *site_names;
	LLVMValueRef names_table;
	int names_table_probe, names_table_size;
	LLVMValueRef sys_nr;   /* a dynamic system-call site's number (i64, from %rax), or NULL */
	LLVMValueRef sys_idx;  /* its index in sys_spec->sys_dyn (i64), or NULL */
	uint32_t mid_regs;     /* cg_object.mid_regs, collected by cg_reg() */
	uint32_t ids_used;     /* cg_object.ids_used, collected by comm/uid/gid (cg_call.c) */
	/* entry indexes that map lookups of this probe found for keys whose
	 * value cannot change inside it (`tid`, `pid`), for a later
	 * delete() of the same key (cg_map.c) */
	struct cg_idx_memo {
		const struct cg_map_layout *ml;
		const char *key;       /* the builtin's name */
		LLVMValueRef idx;      /* i64, -1: not found */
		LLVMBasicBlockRef bb;  /* where idx is defined */
	} idx_memo[8];
	int nidx_memo;
	/* pidns: the host's tid, found once where the probe starts when it
	 * reads `tid` (the latency idiom reads it twice per return), or NULL */
	LLVMValueRef host_tid;
	const struct sema_info *info;
	const struct cg_layout *layout;
	const struct cg_facts *facts;
	enum cg_side side;
	struct diags *diags;
	int failed;
};

/* bytes before a map key built by cg_map_key: {map, insert mode} for the
 * slow path's call (cg_map.c) */
#define CG_KEY_HDR 16

/* cg_expr.c: expressions and statements */
LLVMValueRef cg_expr(struct cg *c, const struct ast_node *n);
void cg_stmt(struct cg *c, const struct ast_node *n);
LLVMValueRef cg_alloca(struct cg *c, LLVMTypeRef t, const char *name);
LLVMBasicBlockRef cg_new_bb(struct cg *c, const char *name);
LLVMValueRef cg_phi2(struct cg *c, LLVMTypeRef t, LLVMValueRef a, LLVMBasicBlockRef ba,
		     LLVMValueRef b, LLVMBasicBlockRef bb, const char *name);
LLVMValueRef cg_bool64(struct cg *c, LLVMValueRef i1);
LLVMValueRef cg_var_ptr(struct cg *c, const struct ast_node *n);
bool cg_is_buffer(const struct ast_type *t);
bool cg_reads_target(const struct ast_node *n);
LLVMValueRef cg_read_target(struct cg *c, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef n);
void cg_store_as(struct cg *c, LLVMValueRef dst, const struct ast_type *dt, LLVMValueRef v,
		 const struct ast_type *st);
void cg_loop_rest(struct cg *c, const struct ast_node *n, LLVMValueRef iv,
		  LLVMBasicBlockRef cond, LLVMBasicBlockRef step, LLVMBasicBlockRef done);

/* cg_loop.c: the budget of one hit, paid by every turn of a loop */
void cg_loop_budget(struct cg *c, const struct ast_node *probe); /* at the probe's start */
void cg_loop_charge(struct cg *c, const struct ast_node *loop);

/* cg_call.c: builtins and calls */
/* cg_call.c, shared with cg_fmt.c */
LLVMValueRef cg_rt_fn(struct cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
		      int np, LLVMTypeRef *fty); /* a runtime function, declared on first use */
const struct sema_printf *cg_find_printf(struct cg *c, const struct ast_node *call);
LLVMValueRef cg_gep_const(struct cg *c, LLVMValueRef p, uint64_t off);
LLVMValueRef cg_ring_reserve(struct cg *c, uint32_t len, uint32_t type, uint32_t id,
			     LLVMValueRef *newhead, LLVMBasicBlockRef *skip);
void cg_ring_commit(struct cg *c, LLVMValueRef newhead, LLVMBasicBlockRef skip);
/* cg_call.c, shared with cg_args.c: n strings of size bytes as one constant table */
LLVMValueRef cg_string_table(struct cg *c, char *const *names, int n, int size, const char *name);
/* cg_fmt.c: buf, strftime, join, strerror, ntop, pton, macaddr (NULL: not one of them) */
LLVMValueRef cg_fmt_call(struct cg *c, const struct ast_node *n);
bool cg_is_call(const struct ast_node *n, const char *name);
/* cg_str.c: strncmp, strcontains, strlen, str_concat, signal_name,
 * syscall_name (NULL: not one of them) */
LLVMValueRef cg_str_call(struct cg *c, const struct ast_node *n);
bool cg_needs_thread(const struct ast_node *n);
/* cg_ids.c */
bool cg_uses_builtin(const struct ast_node *n, const char *name);
LLVMValueRef cg_own_tid(struct cg *c);
LLVMValueRef cg_host_tid(struct cg *c);
/* cg_call.c: a 32-bit load from %fs:off, zero-extended; the slot the
 * thread pointer hashes to (*ok: it holds this thread) */
LLVMValueRef cg_fs_load32(struct cg *c, int64_t off);
LLVMValueRef cg_thread_slot(struct cg *c, LLVMValueRef *okp);
LLVMValueRef cg_builtin(struct cg *c, const struct ast_node *n);
LLVMValueRef cg_builtin_uid(struct cg *c); /* uid (username keeps it in a buffer) */
LLVMValueRef cg_call(struct cg *c, const struct ast_node *n);
LLVMValueRef cg_usdt_arg(struct cg *c, const struct ast_node *n);
LLVMValueRef cg_thread_enter(struct cg *c); /* the thread slot, or NULL (inline fast path) */
void cg_thread_exit(struct cg *c);

LLVMValueRef cg_builtin_ret(struct cg *c, const struct ast_node *n); /* retval func nsecs */

/* cg_map.c: maps */
const struct cg_map_layout *cg_map_of(struct cg *c, const struct ast_node *n);
bool cg_map_flat_tuple(const struct ast_node *n);
LLVMValueRef cg_map_index(struct cg *c, const struct ast_node *n, bool insert,
			  LLVMBasicBlockRef *miss);
LLVMValueRef cg_map_index_checked(struct cg *c, const struct ast_node *n, bool insert,
				  LLVMBasicBlockRef *miss, const struct ast_node *site);
LLVMValueRef cg_map_find(struct cg *c, const struct ast_node *n, LLVMValueRef key);
LLVMValueRef cg_map_value_ptr(struct cg *c, const struct ast_node *n, LLVMValueRef idx);
void cg_map_done(struct cg *c, LLVMBasicBlockRef miss);
void cg_mark_written(struct cg *c, const struct ast_node *n);
void cg_copy_str(struct cg *c, LLVMValueRef dst, LLVMValueRef src, uint64_t n);
void cg_map_assign(struct cg *c, const struct ast_node *map, const struct ast_node *rhs,
		   const struct ast_node *site);
LLVMValueRef cg_map_read(struct cg *c, const struct ast_node *n);
LLVMValueRef cg_map_key(struct cg *c, const struct ast_node *n, LLVMValueRef *buf);
/* value: 1 if it removed a live entry (delete() as a value, bpftrace 0.24);
 * without, NULL */
LLVMValueRef cg_map_delete(struct cg *c, const struct ast_node *map, const struct ast_node *site,
			   bool value);
LLVMValueRef cg_nsecs(struct cg *c); /* cg_time.c */
void cg_map_for(struct cg *c, const struct ast_node *n, LLVMValueRef kv);

/* codegen.c */
LLVMValueRef cg_shm_ptr(struct cg *c, uint64_t off);
LLVMValueRef cg_const(struct cg *c, uint64_t v);
void cg_fail(struct cg *c, const struct ast_node *n, const char *what);

/* cg_call.c, issue 7: func in a uprobe */
bool cg_sym_is_entry(const struct cg *c);
LLVMValueRef cg_sym_func(struct cg *c);
/* cg_stack.c, issue 7: ustack */
bool cg_is_stack(const struct ast_node *n);
LLVMValueRef cg_stack(struct cg *c, const struct ast_node *n);
/* cg_check.c, issue 8: -kk warnings when a read of target memory fails */
void cg_check_read(struct cg *c, const struct ast_node *n, LLVMValueRef ret,
		   enum ast_addrspace as, bool str);
/* cg_check.c: -k warning in a map update's miss block (a full map dropped it) */
void cg_check_map_update(struct cg *c, LLVMBasicBlockRef miss, const struct ast_node *site);
/* cg_check.c: -kk warning when a read or update finds no entry; -k when a
 * delete() finds none */
void cg_check_map_lookup(struct cg *c, const struct ast_node *map, LLVMValueRef key,
			 const struct ast_node *site);
void cg_check_map_delete(struct cg *c, const struct ast_node *site);
void cg_check_empty(struct cg *c, LLVMValueRef v, const struct ast_node *site);

/* cg_args.c, issue 7: a uprobe's `args` record */
bool cg_is_args(const struct ast_node *n);
LLVMValueRef cg_args(struct cg *c, const struct ast_node *n);
void cg_sys_dispatch(struct cg *c, LLVMBasicBlockRef skip);
bool cg_sys_needs_thread(const struct cg *c);
bool cg_sys_thread(struct cg *c);
LLVMValueRef cg_sys_probe_name(struct cg *c, int size);

#endif
