/*
 * cg_loop.c - the budget of one probe hit (DESIGN.md decision 11; the
 * estimate and the compile-time check are sema_loop.c's).
 *
 * A probe with loops keeps a budget of SEMA_HIT_BUDGET instructions in a
 * local of its own, so every loop of the hit draws on the same budget,
 * nested or not (a budget per loop let `while (1) { while (1) { } }` run
 * 10^12 iterations).  Each turn of a loop subtracts what one iteration
 * costs (sema_loop_charge); a check runs only when the budget crosses a
 * multiple of 1024, so most turns cost a subtract and a compare:
 *
 *     b' = b - charge
 *     if ((b ^ b') >= 1024 || b' < 0):        (every ~1,000 instructions)
 *         b' < 0                      -> stop  the hit has used its budget
 *         ubt_priv.enabled == 0       -> stop  ubt is detaching: leave its code
 *         first check: t0 = nsecs
 *         nsecs - t0 > SEMA_HIT_NS    -> stop  slow work in the loops (reads
 *                                              through a system call, a
 *                                              contended map)
 *     stop: header.hits_stopped += 1; the hit ends (its exit block)
 *
 * The hit ends where it is, as after `return`: what it did before stays
 * done.  ubt reports the count at exit (output.c).  The clock is the TSC
 * (nsecs), wall time: the thread's CPU time would not count time it was
 * preempted, but reading it is a system call (6 us on the development VM),
 * so SEMA_HIT_NS is long enough (100 ms) that preemption on a busy machine
 * does not reach it in practice; the budget of instructions is the bound
 * that matters, the time a net under slow operations.
 */
#include "cg_internal.h"

#include <stddef.h>

#define CHECK_EVERY 1024

static bool has_loop(const struct ast_node *n)
{
	if (!n)
		return false;
	if (n->kind == AST_WHILE || n->kind == AST_FOR_RANGE || n->kind == AST_FOR_MAP ||
	    n->kind == AST_UNROLL)
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els};
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		if (has_loop(sub[i]))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (has_loop(n->kids[i]))
			return true;
	return false;
}

void cg_loop_budget(struct cg *c, const struct ast_node *probe)
{
	c->budget = c->loop_t0 = NULL;
	if (!has_loop(probe->body))
		return;
	c->budget = cg_alloca(c, c->i64, "budget");
	c->loop_t0 = cg_alloca(c, c->i64, "loop_t0");
	LLVMBuildStore(c->b, cg_const(c, SEMA_HIT_BUDGET), c->budget);
	LLVMBuildStore(c->b, cg_const(c, 0), c->loop_t0);
}

static void stop_if(struct cg *c, LLVMValueRef cond, LLVMBasicBlockRef stop)
{
	LLVMBasicBlockRef go = cg_new_bb(c, "loop_go");
	LLVMBuildCondBr(c->b, cond, stop, go);
	LLVMPositionBuilderAtEnd(c->b, go);
}

void cg_loop_charge(struct cg *c, const struct ast_node *loop)
{
	if (!c->budget)
		return;
	LLVMValueRef old = LLVMBuildLoad2(c->b, c->i64, c->budget, "");
	LLVMValueRef b = LLVMBuildSub(c->b, old, cg_const(c, sema_loop_charge(loop)), "budget");
	LLVMBuildStore(c->b, b, c->budget);
	LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, b, cg_const(c, 0), "");
	LLVMValueRef crossed = LLVMBuildICmp(c->b, LLVMIntUGE, LLVMBuildXor(c->b, old, b, ""),
					     cg_const(c, CHECK_EVERY), "");
	LLVMBasicBlockRef check = cg_new_bb(c, "loop_check"), stop = cg_new_bb(c, "loop_stop"),
			  cont = cg_new_bb(c, "loop_cont");
	LLVMBuildCondBr(c->b, LLVMBuildOr(c->b, neg, crossed, ""), check, cont);

	LLVMPositionBuilderAtEnd(c->b, check);
	stop_if(c, neg, stop);
	LLVMValueRef off = cg_const(c, offsetof(struct rt_priv, enabled));
	LLVMValueRef en = LLVMBuildLoad2(c->b, c->i32, LLVMBuildGEP2(c->b, c->i8, c->priv, &off, 1, ""),
					 "");
	LLVMSetVolatile(en, 1);
	stop_if(c, LLVMBuildICmp(c->b, LLVMIntEQ, en, LLVMConstInt(c->i32, 0, 0), ""), stop);
	LLVMValueRef now = cg_nsecs(c);
	LLVMValueRef t0 = LLVMBuildLoad2(c->b, c->i64, c->loop_t0, "");
	LLVMBasicBlockRef first = cg_new_bb(c, "loop_t0"), later = cg_new_bb(c, "loop_time");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, t0, cg_const(c, 0), ""), first, later);
	LLVMPositionBuilderAtEnd(c->b, first);
	LLVMBuildStore(c->b, now, c->loop_t0);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, later);
	LLVMValueRef slow = LLVMBuildICmp(c->b, LLVMIntUGT, LLVMBuildSub(c->b, now, t0, ""),
					  cg_const(c, SEMA_HIT_NS), "");
	LLVMBuildCondBr(c->b, slow, stop, cont);

	LLVMPositionBuilderAtEnd(c->b, stop);
	LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpAdd,
			   cg_shm_ptr(c, offsetof(struct rt_shm_header, hits_stopped)),
			   cg_const(c, 1), LLVMAtomicOrderingMonotonic, 0);
	LLVMBuildBr(c->b, c->exit_bb);

	LLVMPositionBuilderAtEnd(c->b, cont);
}
