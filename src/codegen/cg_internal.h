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
	LLVMValueRef shm; /* @ubt_shm: the data part */
	/* runtime helpers */
	LLVMValueRef fn_thread_enter, fn_thread_exit, fn_ring_reserve, fn_ring_commit,
		fn_map_lookup, fn_gettid;
	LLVMTypeRef ty_thread_enter, ty_thread_exit, ty_ring_reserve, ty_ring_commit,
		ty_map_lookup, ty_gettid;
	/* the probe being generated */
	LLVMValueRef fn;
	LLVMValueRef regs;   /* struct rt_regs * */
	LLVMValueRef thread; /* struct rt_thread *, or NULL when the probe needs none */
	LLVMBasicBlockRef exit_bb;
	LLVMValueRef *vars; /* alloca per sema_var, indexed like sema_info.vars */
	const struct ast_node *probe;
	const struct sema_info *info;
	const struct cg_layout *layout;
	const struct cg_facts *facts;
	enum cg_side side;
	struct diags *diags;
	int failed;
};

/* cg_expr.c */
LLVMValueRef cg_expr(struct cg *c, const struct ast_node *n);
void cg_stmt(struct cg *c, const struct ast_node *n);
bool cg_needs_thread(const struct ast_node *n);
LLVMValueRef cg_alloca(struct cg *c, LLVMTypeRef t, const char *name);

/* codegen.c */
LLVMValueRef cg_shm_ptr(struct cg *c, uint64_t off);
LLVMValueRef cg_const(struct cg *c, uint64_t v);
void cg_fail(struct cg *c, const struct ast_node *n, const char *what);

#endif
