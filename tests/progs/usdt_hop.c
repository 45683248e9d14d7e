/*
 * usdt_hop.c - e2e target of USDT locations whose jump needs a hop, a
 * 5-byte jmp written into alignment fill nothing executes (struct
 * arch_hop; tests/e2e/usdt_hop.test).
 *
 *   prog_usdt_hop_O2_pie N [ROUNDS]
 *
 * Calls hop_loop(N) ROUNDS times (default 1): i runs from 0 to N - 1 and
 * `ubth:even` (arg0 = i) fires for every even i; prints `sum S` (N per
 * call).  Then calls hop_short(i) for i in 0..N-1: `ubth:odd` (arg0 = i)
 * fires for every odd i; prints `short S` (the sum of i, plus 7 for each
 * even i).  Then calls hop_pair(i) for i in 0..N-1: `ubth:pair_a` fires
 * for every odd i, `ubth:pair_b` for every i; prints `pair S` (the sum of
 * i + 1), and exits 0.
 *
 * hop_loop's `jnz` is a rel8 into the 5 bytes a jump at the location
 * covers: too short to reach the trampoline, it is rewritten to a hop in
 * the fill after the `ret`, which jumps to the `lea`'s copy:
 *    0: xor %eax,%eax
 *    2: jmp 13 (rel8)
 *    4: test $1,%al
 *    6: jnz 9 (rel8)            <- the branch into the patched bytes
 *    8: nop                     <- usdt ubth:even, 8@%rax
 *    9: lea 1(%rax),%rax
 *   13: cmp %rdi,%rax
 *   16: jl 4 (rel8)
 *   18: ret
 *   19: 5 bytes of nops         fill: after a ret, no branch lands there
 *
 * hop_short's location is a `nop; jmp` before code only its `je` reaches
 * (libstdc++'s __cxa_rethrow, postgres' lwlock__condacquire): a 5-byte
 * jump would cover the `add`; a 2-byte `jmp rel8` to a hop in the fill
 * after the function covers the nop and the jmp only:
 *    0: mov %rdi,%rax
 *    3: test $1,%al
 *    5: je 10 (rel8)
 *    7: nop                     <- usdt ubth:odd, 8@%rax
 *    8: jmp 14 (rel8)
 *   10: add $7,%rax             reached only by the je
 *   14: ret
 * It starts 8 bytes past a 16-byte boundary, so the alignment fill up to
 * hop_short_next, which no symbol owns, is 9 bytes.
 */
#include <stdio.h>
#include <stdlib.h>

long hop_loop(long n);
long hop_short(long x);

/* a stapsdt note for the location at label L of provider ubth */
#define NOTE(L, NAME)                                                                              \
	".pushsection .note.stapsdt,\"?\",\"note\"\n"                                              \
	".balign 4\n"                                                                              \
	".4byte 992f-991f, 994f-993f, 3\n"                                                         \
	"991: .asciz \"stapsdt\"\n"                                                                \
	"992: .balign 4\n"                                                                         \
	"993: .8byte " L "\n"                                                                      \
	".8byte _.stapsdt.base\n"                                                                  \
	".8byte 0\n"                                                                               \
	".asciz \"ubth\"\n"                                                                        \
	".asciz \"" NAME "\"\n"                                                                    \
	".asciz \"8@%rax\"\n"                                                                      \
	"994: .balign 4\n"                                                                         \
	".popsection\n"

__asm__(".text\n"
	".globl hop_loop\n"
	".type hop_loop,@function\n"
	".p2align 4\n"
	"hop_loop:\n"
	"xor %eax,%eax\n"
	"jmp 3f\n"
	"1: test $1,%al\n"
	"jnz 2f\n"
	"990: nop\n"
	"2: lea 1(%rax),%rax\n"
	"3: cmp %rdi,%rax\n"
	"jl 1b\n"
	"ret\n"
	".nops 5\n"
	".size hop_loop,.-hop_loop\n" NOTE(
	    "990b", "even") ".ifndef _.stapsdt.base\n"
			    ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
			    ".weak _.stapsdt.base\n"
			    ".hidden _.stapsdt.base\n"
			    "_.stapsdt.base: .space 1\n"
			    ".size _.stapsdt.base, 1\n"
			    ".popsection\n"
			    ".endif\n");

__asm__(".text\n"
	".globl hop_short\n"
	".type hop_short,@function\n"
	".p2align 4\n"
	".nops 8\n"
	"hop_short:\n"
	"mov %rdi,%rax\n"
	"test $1,%al\n"
	"je 2f\n"
	"990: nop\n"
	"jmp 3f\n"
	"2: add $7,%rax\n"
	"3: ret\n"
	".size hop_short,.-hop_short\n"
	".p2align 4\n"
	".globl hop_short_next\n"
	".type hop_short_next,@function\n"
	"hop_short_next:\n"
	"ret\n"
	".size hop_short_next,.-hop_short_next\n" NOTE("990b", "odd"));

/*
 * hop_pair: `if (x & 1) PROBE_A; PROBE_B;` as compilers emit it: the je
 * skips A's nop and lands on B's, which A's jump covers (locations in a
 * row share one jump).  B's handlers run in that jump's trampoline before
 * the copies, so a branch to B must not be redirected to B's copy (it
 * would skip them): A takes a breakpoint, B its own jump.
 *    0: mov %rdi,%rax
 *    3: test $1,%al
 *    5: je 8 (rel8)             <- to B
 *    7: nop                     <- usdt ubth:pair_a (odd x)
 *    8: nop                     <- usdt ubth:pair_b (every x)
 *    9: lea 1(%rax),%rax
 *   13: ret
 */
long hop_pair(long x);

__asm__(".text\n"
	".globl hop_pair\n"
	".type hop_pair,@function\n"
	".p2align 4\n"
	"hop_pair:\n"
	"mov %rdi,%rax\n"
	"test $1,%al\n"
	"je 981f\n"
	"980: nop\n"
	"981: nop\n"
	"lea 1(%rax),%rax\n"
	"ret\n"
	".nops 5\n"
	".size hop_pair,.-hop_pair\n" NOTE("980b", "pair_a") NOTE("981b", "pair_b"));

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, rounds = argc > 2 ? atol(argv[2]) : 1, sum = 0;

	for (long r = 0; r < rounds; r++)
		sum += hop_loop(n);
	printf("sum %ld\n", sum);
	long s = 0;
	for (long i = 0; i < n; i++)
		s += hop_short(i);
	printf("short %ld\n", s);
	long p = 0;
	for (long i = 0; i < n; i++)
		p += hop_pair(i);
	printf("pair %ld\n", p);
	return 0;
}
