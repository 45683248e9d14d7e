/*
 * cg_ids.c - `tid` as bpftrace gives it: the host's, also for a target in
 * another pid namespace (docs/ARCHITECTURE.md, "Host ids in pid
 * namespaces").  A thread there keeps {namespace tid, host tid} in its
 * slot (rt_thread.htid); probe code finds the host's half inline, once
 * per probe, and asks the runtime (rt_host_tid) only the first time.
 */
#include "cg_internal.h"
#include "util/util.h"

#include <stddef.h>
#include <string.h>

/* Does the subtree read builtin `name`? */
bool cg_uses_builtin(const struct ast_node *n, const char *name)
{
	if (!n)
		return false;
	if (n->kind == AST_BUILTIN && !strcmp(n->str, name))
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (cg_uses_builtin(sub[i], name))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (cg_uses_builtin(n->kids[i], name))
			return true;
	return false;
}

/*
 * `tid` of a target in another pid namespace: the host's, which the thread
 * keeps in its slot as {namespace tid, host tid} (rt_thread.htid).  The
 * slot is the probe's own (c->thread) or the one its thread pointer hashes
 * to; the pair counts only while its low half is ns, the TCB's tid, so a
 * slot of another thread or of the slot's previous owner is never read as
 * this one's.  Otherwise rt_host_tid() asks the kernel once and keeps it.
 * Inline: the latency idiom keys a map by tid on every call.
 */
static LLVMValueRef host_tid(struct cg *c, LLVMValueRef ns)
{
	LLVMValueRef ok = NULL, t = c->thread;
	if (!t)
		t = cg_thread_slot(c, &ok);
	LLVMValueRef w = LLVMBuildLoad2(
	    c->b, c->i64, cg_gep_const(c, t, offsetof(struct rt_thread, htid)), "htid");
	LLVMSetVolatile(w, 1);
	LLVMValueRef same = LLVMBuildICmp(
	    c->b, LLVMIntEQ, LLVMBuildAnd(c->b, w, cg_const(c, 0xffffffffull), ""), ns, "");
	/* the slot's owner check (cg_thread_slot) also compares the TCB's tid
	 * with the slot's: with same, this thread's word in this thread's slot */
	if (ok)
		same = LLVMBuildAnd(c->b, ok, same, "");
	LLVMValueRef fast = LLVMBuildLShr(c->b, w, cg_const(c, 32), "");
	LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
	LLVMBasicBlockRef slow = cg_new_bb(c, "htid_slow"), done = cg_new_bb(c, "htid_done");
	LLVMBuildCondBr(c->b, same, done, slow);
	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_rt_fn(c, "rt_host_tid", c->i64, NULL, 0, &fty);
	LLVMValueRef real = LLVMBuildCall2(c->b, fty, fn, NULL, 0, "");
	LLVMBuildBr(c->b, done);
	LLVMPositionBuilderAtEnd(c->b, done);
	return cg_phi2(c, c->i64, fast, from, real, slow, "host_tid");
}

/* The tid the thread's own namespace gives it: the TCB's, else gettid. */
LLVMValueRef cg_own_tid(struct cg *c)
{
	if (c->facts->has_tid)
		return cg_fs_load32(c, c->facts->tid_off);
	return LLVMBuildZExt(c->b, LLVMBuildCall2(c->b, c->ty_gettid, c->fn_gettid, NULL, 0, ""),
			     c->i64, "");
}

/* The host's tid where the probe starts (codegen.c), for every `tid` of it. */
LLVMValueRef cg_host_tid(struct cg *c) { return host_tid(c, cg_own_tid(c)); }
