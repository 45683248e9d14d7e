/*
 * cg_time.c - LLVM IR for the `nsecs` builtin: the TSC scaled to
 * CLOCK_BOOTTIME nanoseconds, emitted inline into the probe.
 *
 * The same formula as the runtime's rt_nsecs() (runtime/data/rt_time.c), with
 * the factors ubt measured (attach/target/clock.c) read from the shared header:
 *
 *     nsecs = ns_base + ((rdtsc - tsc_base) * tsc_mult) >> 32
 *
 * Inline, because nsecs sits on the latency idiom's hot path twice per
 * call: it saves the call, its return and rt_nsecs' save of %rdx, a few
 * tenths of a ns per call of the idiom (within bench/run.py's noise; the
 * rdtsc itself is ~8 ns on the development VM).
 * Plain rdtsc, no lfence: a probe timestamps a call, it does not order
 * the loads around it (bpftrace's bpf_ktime_get_ns does not either).
 */
#include "cg_internal.h"

#include <stddef.h>

LLVMValueRef cg_nsecs(struct cg *c)
{
	LLVMTypeRef pair[] = {c->i32, c->i32};
	LLVMTypeRef rty = LLVMStructTypeInContext(c->ctx, pair, 2, 0);
	LLVMTypeRef fty = LLVMFunctionType(rty, NULL, 0, 0);
	static const char cons[] = "={eax},={edx}";
	LLVMValueRef ia = LLVMGetInlineAsm(fty, "rdtsc", 5, (char *)cons, sizeof(cons) - 1, 1, 0,
					   LLVMInlineAsmDialectATT, 0);
	LLVMValueRef r = LLVMBuildCall2(c->b, fty, ia, NULL, 0, "tsc");
	LLVMValueRef lo = LLVMBuildZExt(c->b, LLVMBuildExtractValue(c->b, r, 0, ""), c->i64, "");
	LLVMValueRef hi = LLVMBuildZExt(c->b, LLVMBuildExtractValue(c->b, r, 1, ""), c->i64, "");
	LLVMValueRef tsc = LLVMBuildOr(c->b, LLVMBuildShl(c->b, hi, cg_const(c, 32), ""), lo, "");

	LLVMValueRef base = LLVMBuildLoad2(
		c->b, c->i64, cg_shm_ptr(c, offsetof(struct rt_shm_header, tsc_base)), "");
	LLVMValueRef nsb = LLVMBuildLoad2(
		c->b, c->i64, cg_shm_ptr(c, offsetof(struct rt_shm_header, ns_base)), "");
	LLVMValueRef mult = LLVMBuildLoad2(
		c->b, c->i64, cg_shm_ptr(c, offsetof(struct rt_shm_header, tsc_mult)), "");
	LLVMTypeRef i128 = LLVMIntTypeInContext(c->ctx, 128);
	LLVMValueRef d = LLVMBuildZExt(c->b, LLVMBuildSub(c->b, tsc, base, ""), i128, "");
	LLVMValueRef p = LLVMBuildMul(c->b, d, LLVMBuildZExt(c->b, mult, i128, ""), "");
	p = LLVMBuildTrunc(c->b, LLVMBuildLShr(c->b, p, LLVMConstInt(i128, 32, 0), ""), c->i64, "");
	return LLVMBuildAdd(c->b, nsb, p, "nsecs");
}
