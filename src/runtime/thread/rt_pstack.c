/*
 * rt_pstack.c - probe stacks: where handlers that need more than a few
 * words of stack run (DESIGN.md decision 15; layout and convention in
 * abi.h, "Probe stacks").
 *
 * The probed thread's stack may be small: a pthread of 16 KiB, a
 * coroutine's, a sigaltstack, a goroutine with ~100 bytes left at a
 * function's entry.  A tuple of 30 strings of 200 bytes needs 12 KiB of
 * scratch.  So codegen gives such a handler a stub,
 *
 *     ubt_probe_N:  lea ubt_probe_N_body(%rip), %r11
 *                   jmp rt_pstack_call
 *
 * and rt_pstack_call (below) runs the body on the stack of the thread's
 * slot.  Its common path is a dozen instructions: the slot the thread
 * pointer hashes to (the same hash as probe code's and rt_thread.c's)
 * holds this thread; depth + 1; the stack is [lo, hi) of that slot:
 *
 *     rt_pstack_call:  push rax rcx rdx rsi             (on the target's stack)
 *                      slot = threads + (hash(tp) << 8); slot->tp, tid == ours?
 *                      depth = slot->depth++            (< RT_PSTACK_DEPTH)
 *                      top = %rsp in [lo, hi) ? %rsp : hi - depth * seg
 *                      %rsp = top & -16; push slot, F   (F = caller's %rsp + 8)
 *                      restore rax rcx rdx rsi; call *%r11
 *                      %rsp = F; slot->depth--; ret
 *
 * Otherwise (the thread's first hit, a collision, a TCB reused) it calls
 * rt_thread_find() in C, with the registers a C call may change saved
 * first.  A hit that finds no slot, or a thread with RT_PSTACK_DEPTH
 * probes running already, is skipped and counted (threads_full,
 * deep_skipped).
 *
 * depth goes up before the switch and down after the switch back, so a
 * probe that interrupts either (in a signal handler) starts below.  A
 * signal delivered while a body runs lands on the probe stack (unless its
 * action has SA_ONSTACK); a probe in that handler finds %rsp on the
 * stack already and goes on right below it.
 *
 * rt_map_lookup_r11, the slow path of an inline map lookup in handlers
 * that stay on the target's stack, runs rt_map_lookup on the probe stack
 * the same way (rt_map.c).
 */
#include <stddef.h>

#include "../rt.h"

extern struct rt_priv ubt_priv RT_API;

/* offsets the assembly below uses, checked against the structs */
#define H_NTHREADS 28
#define H_FLAGS 36
#define H_THREADS_OFF 40
#define H_TID_OFF 64
#define P_ENABLED 4
#define P_PSTACK_BASE 24
#define P_PSTACK_SIZE 32
#define P_PSTACK_SEG 40
#define T_TID 8
#define T_DEPTH 12
_Static_assert(offsetof(struct rt_shm_header, nthreads) == H_NTHREADS, "asm offset");
_Static_assert(offsetof(struct rt_shm_header, flags) == H_FLAGS, "asm offset");
_Static_assert(offsetof(struct rt_shm_header, threads_off) == H_THREADS_OFF, "asm offset");
_Static_assert(offsetof(struct rt_shm_header, tid_off) == H_TID_OFF, "asm offset");
_Static_assert(offsetof(struct rt_priv, enabled) == P_ENABLED, "asm offset");
_Static_assert(offsetof(struct rt_priv, pstack_base) == P_PSTACK_BASE, "asm offset");
_Static_assert(offsetof(struct rt_priv, pstack_size) == P_PSTACK_SIZE, "asm offset");
_Static_assert(offsetof(struct rt_priv, pstack_seg) == P_PSTACK_SEG, "asm offset");
_Static_assert(offsetof(struct rt_thread, tid) == T_TID, "asm offset");
_Static_assert(offsetof(struct rt_thread, depth) == T_DEPTH, "asm offset");
_Static_assert(RT_THREAD_SHIFT == 8 && RT_TP_HASH_SHIFT == 40 && RT_F_TID == 2 &&
		       RT_PSTACK_DEPTH == 4,
	       "constants written out in the assembly");

/* A hit skipped: its thread is RT_PSTACK_DEPTH probes deep (C counts it:
 * the counter's offset changes with the header). */
void rt_pstack_deep(void) RT_API RT_PRESERVING;
void rt_pstack_deep(void)
{
	__atomic_fetch_add(&rt_hdr()->deep_skipped, 1, __ATOMIC_RELAXED);
}

#define S(x) S_(x)
#define S_(x) #x
/* clang-format off */
__asm__(".text\n"
	".p2align 4\n"
	".globl rt_pstack_call\n"
	".hidden rt_pstack_call\n"
	"rt_pstack_call:\n"
	/* probes off (a static program before main: no %fs to read yet) */
	"\tcmpl $0, ubt_priv+" S(P_ENABLED) "(%rip)\n"
	"\tje .Lps_off\n"
	"\tpush %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n"
	/* the slot the thread pointer hashes to: rcx = index, rsi = slot */
	"\tmov %fs:0, %rax\n"
	"\ttest %rax, %rax\n" /* a Go thread's %fs:0: the slow path (rt.h) */
	"\tjz .Lps_slow\n"
	"\tmovabs $0x9e3779b97f4a7c15, %rcx\n"
	"\timul %rax, %rcx\n"
	"\tshr $40, %rcx\n"
	"\tmov ubt_shm+" S(H_NTHREADS) "(%rip), %edx\n"
	"\tdec %edx\n"
	"\tand %rdx, %rcx\n"
	"\tmov %rcx, %rsi\n"
	"\tshl $8, %rsi\n"
	"\tadd ubt_shm+" S(H_THREADS_OFF) "(%rip), %rsi\n"
	"\tlea ubt_shm(%rip), %rdx\n"
	"\tadd %rdx, %rsi\n"
	"\tcmp (%rsi), %rax\n"
	"\tjne .Lps_slow\n"
	"\ttestb $2, ubt_shm+" S(H_FLAGS) "(%rip)\n"
	"\tjz .Lps_have\n"
	"\tmovslq ubt_shm+" S(H_TID_OFF) "(%rip), %rdx\n"
	"\tmov %fs:(%rdx), %edx\n"
	"\tcmp " S(T_TID) "(%rsi), %edx\n"
	"\tjne .Lps_slow\n"
	".Lps_have:\n"
	"\tcmpq $0, ubt_priv+" S(P_PSTACK_BASE) "(%rip)\n"
	"\tje .Lps_skip\n"
	"\tmov " S(T_DEPTH) "(%rsi), %eax\n"
	"\tcmp $4, %eax\n"
	"\tjae .Lps_deep\n"
	"\tlea 1(%rax), %edx\n"
	"\tmov %edx, " S(T_DEPTH) "(%rsi)\n"
	/* [lo, hi) of slot rcx */
	"\tmov ubt_priv+" S(P_PSTACK_SIZE) "(%rip), %rdx\n"
	"\timul %rdx, %rcx\n"
	"\tadd ubt_priv+" S(P_PSTACK_BASE) "(%rip), %rcx\n"
	"\tadd %rcx, %rdx\n"
	/* on this stack already (a signal handler running on it): right below */
	"\tcmp %rcx, %rsp\n"
	"\tjb .Lps_top\n"
	"\tcmp %rdx, %rsp\n"
	"\tjae .Lps_top\n"
	"\tmov %rsp, %rdx\n"
	"\tjmp .Lps_switch\n"
	".Lps_top:\n"
	"\timul ubt_priv+" S(P_PSTACK_SEG) "(%rip), %rax\n"
	"\tsub %rax, %rdx\n"
	".Lps_switch:\n"
	"\tand $-16, %rdx\n"
	"\tlea 40(%rsp), %rax\n" /* F: above the return address */
	"\tmov %rsp, %rcx\n"
	"\tmov %rdx, %rsp\n"
	"\tpush %rsi\n" /* thread */
	"\tpush %rax\n" /* F */
	"\tmov (%rcx), %rsi\n\tmov 8(%rcx), %rdx\n\tmov 24(%rcx), %rax\n\tmov 16(%rcx), %rcx\n"
	"\tcall *%r11\n"
	"\tmov 8(%rsp), %r11\n"
	"\tmov (%rsp), %rsp\n"
	"\tdecl " S(T_DEPTH) "(%r11)\n"
	"\tlea -8(%rsp), %rsp\n"
	"\tret\n"
	/* off: a fork child's first hit turns them on (rt_fork_enable), then again */
	".Lps_off:\n"
	"\tpush %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n"
	"\tpush %rdi\n\tpush %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n"
	"\tpush %rbp\n\tmov %rsp, %rbp\n\tand $-16, %rsp\n"
	"\tcall rt_fork_enable\n"
	"\tmov %rbp, %rsp\n\tpop %rbp\n"
	"\ttest %eax, %eax\n"
	"\tpop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n\tpop %rdi\n"
	"\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n"
	"\tjnz rt_pstack_call\n"
	"\tret\n"
	/* C calls: %rsp aligned (rt_map_lookup_r11 calls from inside a handler) */
	".Lps_deep:\n"
	"\tpush %rbp\n\tmov %rsp, %rbp\n\tand $-16, %rsp\n"
	"\tcall rt_pstack_deep\n"
	"\tmov %rbp, %rsp\n\tpop %rbp\n"
	".Lps_skip:\n"
	"\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n"
	"\tret\n"
	/* the thread's first hit, a collision, a reused TCB: rt_thread_find in C */
	".Lps_slow:\n"
	"\tpush %rdi\n\tpush %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n"
	"\tpush %rbp\n\tmov %rsp, %rbp\n\tand $-16, %rsp\n"
	"\tcall rt_thread_find\n"
	"\tmov %rbp, %rsp\n\tpop %rbp\n"
	"\tpop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n\tpop %rdi\n"
	"\ttest %rax, %rax\n"
	"\tjz .Lps_skip\n"
	"\tmov %rax, %rsi\n"
	"\tlea ubt_shm(%rip), %rcx\n"
	"\tneg %rcx\n"
	"\tadd %rax, %rcx\n"
	"\tsub ubt_shm+" S(H_THREADS_OFF) "(%rip), %rcx\n"
	"\tshr $8, %rcx\n"
	"\tjmp .Lps_have\n");
/* clang-format on */
