/*
 * targets.c - functions that test_exec.c probes for real, and the probe
 * handlers it installs.  Built -O2 without sanitizers and without SSE
 * (meson.build), so the prologues are the ones gcc gives real programs
 * and the handlers are what the trampoline expects (GPR-only).
 *
 * With gcc 12 -O2 the prologues exercise, in the trampoline:
 *   t_work       lea; add g_bias(%rip)   a rip-relative insn split by the 5 bytes
 *                (the prototype's measured function)
 *   t_fib        recursive through its own patched entry (g_fib_calls
 *                counts entries)
 *   t_sum8       8 arguments, 2 on the stack (the stack must look unprobed)
 *   t_rip_first  mov g_val(%rip),%eax
 *   t_wrap       add; jmp t_work          a relocated tail call (jmp rel32)
 * and, written in assembly so the bytes cannot drift with the compiler:
 *   t_jle_first  test; jle rel8; lea     a rel8 branch widened or made absolute
 *   t_call_first call t_ret41; add; ret  call rel32 emulated: the callee must
 *                                        see the original return address
 *   t_icall_reg  nop; nop; call *%r12    mid-function sites (spdk's msg_exec):
 *   t_icall_rip  nop; call *p(%rip)      an indirect call relocated as push +
 *                                        jmp, the callee sees the original
 *                                        return address
 */
#include <stdint.h>

#include "runtime/abi.h"
#include "targets.h"

int g_bias = 7;
int g_val = 5;
long g_fib_calls;
void *volatile g_seen_ret;
int (*volatile g_icall_fn)(void) = t_ret41;

__attribute__((noinline)) int t_work(int x) { return x * 3 + g_bias; }

/*
 * The recursion goes through a volatile pointer: called directly, gcc and
 * clang turn the second call into a loop (accumulator recursion
 * elimination), and g_fib_calls would count iterations that never enter
 * the function.  Each call still enters through the patched entry.
 */
static int (*volatile fib_self)(int) = t_fib;

__attribute__((noinline)) int t_fib(int n)
{
	g_fib_calls++;
	return n < 2 ? n : fib_self(n - 1) + fib_self(n - 2);
}

__attribute__((noinline)) long t_sum8(long a, long b, long c, long d, long e, long f, long g,
				      long h)
{
	return a + b * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8;
}

__attribute__((noinline)) int t_rip_first(void) { return g_val; }

__attribute__((noinline)) int t_wrap(int x) { return t_work(x + 1); }

__attribute__((noinline)) int t_ret41(void)
{
	g_seen_ret = __builtin_return_address(0);
	return 41;
}

/*
 * t_jle_first(x) = x > 0 ? x - 1 : 0
 *   85 ff        test %edi,%edi
 *   7e 04        jle  1f
 *   8d 47 ff     lea  -1(%rdi),%eax
 *   c3           ret
 * 1:31 c0        xor  %eax,%eax
 *   c3           ret
 *
 * t_call_first() = t_ret41() + 1
 *   e8 rel32     call t_ret41
 *   83 c0 01     add  $1,%eax
 *   c3           ret
 */
__asm__(".text\n"
	".globl t_jle_first\n"
	".type t_jle_first, @function\n"
	"t_jle_first:\n"
	"	test %edi,%edi\n"
	"	jle 1f\n"
	"	lea -1(%rdi),%eax\n"
	"	ret\n"
	"1:	xor %eax,%eax\n"
	"	ret\n"
	".size t_jle_first, .-t_jle_first\n"
	".globl t_call_first\n"
	".type t_call_first, @function\n"
	"t_call_first:\n"
	"	call t_ret41\n"
	"	add $1,%eax\n"
	"	ret\n"
	".size t_call_first, .-t_call_first\n");

/*
 * t_icall_reg(f) = f() + 1
 *   41 54          push %r12
 *   49 89 fc       mov  %rdi,%r12
 *   90             nop                  <- site (t_icall_reg+5)
 *   90             nop
 *   41 ff d4       call *%r12           the last displaced instruction
 *   83 c0 01       add  $1,%eax
 *   41 5c          pop  %r12
 *   c3             ret
 *
 * t_icall_rip() = g_icall_fn() + 1
 *   48 83 ec 08    sub  $8,%rsp
 *   90             nop                  <- site (t_icall_rip+4)
 *   ff 15 rel32    call *g_icall_fn(%rip)
 *   83 c0 01       add  $1,%eax
 *   48 83 c4 08    add  $8,%rsp
 *   c3             ret
 */
__asm__(".text\n"
	".globl t_icall_reg\n"
	".type t_icall_reg, @function\n"
	"t_icall_reg:\n"
	"	push %r12\n"
	"	mov %rdi,%r12\n"
	"	nop\n"
	"	nop\n"
	"	call *%r12\n"
	"	add $1,%eax\n"
	"	pop %r12\n"
	"	ret\n"
	".size t_icall_reg, .-t_icall_reg\n"
	".globl t_icall_rip\n"
	".type t_icall_rip, @function\n"
	"t_icall_rip:\n"
	"	sub $8,%rsp\n"
	"	nop\n"
	"	call *g_icall_fn(%rip)\n"
	"	add $1,%eax\n"
	"	add $8,%rsp\n"
	"	ret\n"
	".size t_icall_rip, .-t_icall_rip\n");

/* Handlers: called by the trampoline as handler(struct rt_regs *). */
volatile uint64_t h_hits, h_arg0, h_arg0_sum, h_stack7, h_stack8, h_ret, h_misaligned;
volatile uint64_t h_order;

void h_count(struct rt_regs *r)
{
	const uint64_t *sp = &r->ret; /* the probed function's stack pointer at entry */

	h_hits++;
	h_arg0 = r->rdi;
	h_arg0_sum += r->rdi;
	h_ret = sp[0];
	h_stack7 = sp[1];
	h_stack8 = sp[2];
	if ((uintptr_t)r % 16) /* the trampoline's %rsp before `call handler` */
		h_misaligned++;
}

/*
 * The same in the convention of probe code (runtime/abi.h: preserve_most,
 * arguments in their registers, struct rt_entry_frame above the return
 * address), by hand: it may clobber only %r11 and the flags, and does
 * clobber %r11, which the trampoline must give back.
 */
__asm__(".text\n"
	".globl h_pm_count\n"
	".type h_pm_count,@function\n"
	"h_pm_count:\n"
	"	incq h_hits(%rip)\n"
	"	movq %rdi,h_arg0(%rip)\n"
	"	addq %rdi,h_arg0_sum(%rip)\n"
	"	movq 16(%rsp),%r11\n" /* frame.ret */
	"	movq %r11,h_ret(%rip)\n"
	"	movq 24(%rsp),%r11\n"
	"	movq %r11,h_stack7(%rip)\n"
	"	movq 32(%rsp),%r11\n"
	"	movq %r11,h_stack8(%rip)\n"
	"	leaq 8(%rsp),%r11\n" /* the trampoline's %rsp at the call */
	"	testb $15,%r11b\n"
	"	jz 1f\n"
	"	incq h_misaligned(%rip)\n"
	"1:	movq $-1,%r11\n"
	"	ret\n"
	".size h_pm_count, .-h_pm_count\n");

/* Second in a chain: records that it ran after h_first, then changes arg0. */
void h_first(struct rt_regs *r) { h_order = h_order * 10 + 1; }

void h_add100(struct rt_regs *r)
{
	h_order = h_order * 10 + 2;
	r->rdi += 100;
}

/*
 * t_syscall(nr, a) = syscall(2)'s shape: the number only in %rax, the
 * `syscall` after a register move (no `mov $NR` a jump can go over), so a
 * system-call site's patch covers the `syscall` and the cmp after it
 * (attach/resolve/syscalls.c):
 *   48 89 f8            mov  %rdi,%rax
 *   48 89 f7            mov  %rsi,%rdi
 *   0f 05               syscall            <- site (t_syscall+6)
 *   48 3d 01 f0 ff ff   cmp  $-4095,%rax
 *   73 01               jae  1f
 *   c3                  ret
 *   48 83 c8 ff      1: or   $-1,%rax
 *   c3                  ret
 * h_sys_in / h_sys_out: probe-code handlers (abi.h) that record the saved
 * %rax of the struct rt_regs_mid at F (the number before the call, its
 * result after it).
 */
__asm__(".text\n"
	".globl t_syscall\n"
	".type t_syscall, @function\n"
	"t_syscall:\n"
	"	mov %rdi,%rax\n"
	"	mov %rsi,%rdi\n"
	"	syscall\n"
	"	cmp $-4095,%rax\n"
	"	jae 1f\n"
	"	ret\n"
	"1:	or $-1,%rax\n"
	"	ret\n"
	".size t_syscall, .-t_syscall\n"
	".globl h_sys_in\n"
	".type h_sys_in, @function\n"
	"h_sys_in:\n"
	"	movq 8(%rsp),%r11\n"
	"	movq 32(%r11),%r11\n" /* offsetof(struct rt_regs_mid, rax) */
	"	movq %r11,h_sys_nr(%rip)\n"
	"	incq h_sys_enters(%rip)\n"
	"	ret\n"
	".size h_sys_in, .-h_sys_in\n"
	".globl h_sys_out\n"
	".type h_sys_out, @function\n"
	"h_sys_out:\n"
	"	movq 8(%rsp),%r11\n"
	"	movq 32(%r11),%r11\n"
	"	movq %r11,h_sys_ret(%rip)\n"
	"	incq h_sys_exits(%rip)\n"
	"	ret\n"
	".size h_sys_out, .-h_sys_out\n");
_Static_assert(__builtin_offsetof(struct rt_regs_mid, rax) == 32, "h_sys_in reads rax at 32");
volatile uint64_t h_sys_nr, h_sys_ret, h_sys_enters, h_sys_exits;
