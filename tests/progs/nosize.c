/*
 * nosize.c - a function whose symbol has no size (hand-written assembly
 * without `.size`, like some of libc's), but which has an .eh_frame entry
 * (.cfi_startproc / .cfi_endproc): ubt takes its bounds from .eh_frame
 * (src/elf/bounds.c) and so can run the whole-function branch check.
 *
 *   spin_nosize(n)   a loop whose head is at +2, inside the first 5 bytes:
 *                      31 c0     xor  %eax,%eax
 *                      01 f8  1: add  %edi,%eax      <- target of the jg
 *                      ff cf     dec  %edi
 *                      7f fa     jg   1b
 *                      c3        ret
 *
 * A jump over its first 5 bytes would send the jg into the middle of it;
 * the check sees the jg and takes a breakpoint instead.  Without bounds
 * (size unknown) no branch could be checked.
 *
 *   prog_nosize_O2_pie N   calls it with 0..4 N times, prints `sum <sum>`.
 */
#include <stdio.h>
#include <stdlib.h>

int spin_nosize(int n);

__asm__(".text\n"
	".globl spin_nosize\n.type spin_nosize,@function\n"
	"spin_nosize:\n"
	"\t.cfi_startproc\n"
	"\txor %eax,%eax\n"
	"1:\tadd %edi,%eax\n"
	"\tdec %edi\n"
	"\tjg 1b\n"
	"\tret\n"
	"\t.cfi_endproc\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, sum = 0;
	for (long i = 0; i < n; i++)
		sum += spin_nosize((int)(i % 5));
	printf("sum %ld\n", sum);
	return 0;
}
