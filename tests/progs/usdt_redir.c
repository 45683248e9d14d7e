/*
 * usdt_redir.c - e2e target of a USDT location that another branch enters
 * one byte in (tests/e2e/usdt_redir.test): the loop's `jnz` (a rel32)
 * skips the probe's `nop` and lands on the instruction after it, inside
 * the 5 bytes a jump at the location would cover.  ubt rewrites that
 * branch's rel32 to the instruction's copy in the trampoline
 * (struct arch_redirect) instead of falling back to a breakpoint.
 *
 *   prog_usdt_redir_O2_pie N [ROUNDS]
 *
 * Calls redir_loop(N) ROUNDS times (default 1): i runs from 0 to N - 1 and
 * the probe `ubtr:even` (arg0 = i) fires for every even i.  Prints
 * `sum S` (the sum of the return values, N per call).  Then calls
 * at_end(i & 1) for i in 0..N-1 and prints `end E` (the sum of what it
 * returned: 8 for each odd i), and exits 0.
 *
 * at_end's location is 2 bytes before the next function, so its jump
 * starts at the `add` before it (plan.mid_at), and its `jz` (a rel32)
 * branches to the location itself, inside that jump: redirected, the
 * branch must still run the location's handlers (`ubtr:end` fires for
 * every call, arg0 = x or x + 7):
 *    0: mov %rdi,%rax
 *    3: test %rax,%rax
 *    6: jz 16 (rel32)           <- the branch to the location
 *   12: add $7,%rax
 *   16: nop                     <- usdt ubtr:end, 8@%rax
 *   17: ret                     at_end_next follows at once
 *
 * redir_loop's bytes, fixed by hand so the tests can name offsets:
 *    0: xor %eax,%eax
 *    2: jmp 20 (rel32)
 *    7: test $1,%al
 *    9: jnz 16 (rel32)          <- the branch into the patched bytes
 *   15: nop                     <- usdt ubtr:even, 8@%rax
 *   16: lea 1(%rax),%rax
 *   20: cmp %rdi,%rax
 *   23: jl 7 (rel8)
 *   25: ret
 */
#include <stdio.h>
#include <stdlib.h>

long redir_loop(long n);
long at_end(long x);

__asm__(".text\n"
	".globl redir_loop\n"
	".type redir_loop,@function\n"
	".p2align 4\n"
	"redir_loop:\n"
	"xor %eax,%eax\n"
	"{disp32} jmp 3f\n"
	"1: test $1,%al\n"
	"{disp32} jnz 2f\n"
	"990: nop\n"
	"2: lea 1(%rax),%rax\n"
	"3: cmp %rdi,%rax\n"
	"jl 1b\n"
	"ret\n"
	".size redir_loop,.-redir_loop\n"
	".pushsection .note.stapsdt,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 992f-991f, 994f-993f, 3\n"
	"991: .asciz \"stapsdt\"\n"
	"992: .balign 4\n"
	"993: .8byte 990b\n"
	".8byte _.stapsdt.base\n"
	".8byte 0\n"
	".asciz \"ubtr\"\n"
	".asciz \"even\"\n"
	".asciz \"8@%rax\"\n"
	"994: .balign 4\n"
	".popsection\n"
	".ifndef _.stapsdt.base\n"
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n"
	".endif\n");

__asm__(".text\n"
	".globl at_end\n"
	".type at_end,@function\n"
	".p2align 4\n"
	"at_end:\n"
	"mov %rdi,%rax\n"
	"test %rax,%rax\n"
	"{disp32} jz 1f\n"
	"add $7,%rax\n"
	"1: nop\n"
	"ret\n"
	".size at_end,.-at_end\n"
	".globl at_end_next\n"
	".type at_end_next,@function\n"
	"at_end_next:\n"
	"ret\n"
	".size at_end_next,.-at_end_next\n"
	".pushsection .note.stapsdt,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 992f-991f, 994f-993f, 3\n"
	"991: .asciz \"stapsdt\"\n"
	"992: .balign 4\n"
	"993: .8byte 1b\n"
	".8byte _.stapsdt.base\n"
	".8byte 0\n"
	".asciz \"ubtr\"\n"
	".asciz \"end\"\n"
	".asciz \"8@%rax\"\n"
	"994: .balign 4\n"
	".popsection\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, rounds = argc > 2 ? atol(argv[2]) : 1, sum = 0;

	for (long r = 0; r < rounds; r++)
		sum += redir_loop(n);
	printf("sum %ld\n", sum);
	long end = 0;
	for (long i = 0; i < n; i++)
		end += at_end(i & 1);
	printf("end %ld\n", end);
	return 0;
}
