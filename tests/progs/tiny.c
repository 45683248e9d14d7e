/*
 * tiny.c - functions where a 5-byte jmp cannot be placed, so ubt must use
 * its int3 fallback (a SIGTRAP handler inside the target):
 *
 *   spin(n)   a loop whose head is at spin+2, inside the first 5 bytes:
 *               31 c0     xor  %eax,%eax
 *               01 f8  1: add  %edi,%eax      <- target of the jg
 *               ff cf     dec  %edi
 *               7f fa     jg   1b
 *               c3        ret
 *   tiny(x)   4 bytes (lea; ret) directly followed by another function,
 *             with no alignment fill to spill into.
 *
 *   prog_tiny_O2_pie N   calls both N times, prints `checksum <sum>`.
 * Written in assembly so the bytes do not depend on the compiler.
 */
#include <stdio.h>
#include <stdlib.h>

int spin(int n);
int tiny(int x);
int after_tiny(int x);

__asm__(".text\n"
	".globl spin\n.type spin,@function\n"
	"spin:\n"
	"\txor %eax,%eax\n"
	"1:\tadd %edi,%eax\n"
	"\tdec %edi\n"
	"\tjg 1b\n"
	"\tret\n"
	".size spin, .-spin\n"
	".globl tiny\n.type tiny,@function\n"
	"tiny:\n"
	"\tlea (%rdi,%rdi,2),%eax\n"
	"\tret\n"
	".size tiny, .-tiny\n"
	".globl after_tiny\n.type after_tiny,@function\n"
	"after_tiny:\n"
	"\tlea 1(%rdi),%eax\n"
	"\tret\n"
	".size after_tiny, .-after_tiny\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, sum = 0;
	for (long i = 0; i < n; i++)
		sum += spin((int)(i % 5)) + tiny((int)i) + after_tiny((int)i);
	printf("checksum %ld\n", sum);
	return 0;
}
