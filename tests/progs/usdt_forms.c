/*
 * usdt_forms.c - USDT operands of every form GNU as and clang accept, for
 * tests/e2e/usdt_forms.test.  <sys/sdt.h> lets the compiler choose the
 * operands; here the notes are written by hand (the same bytes sdt.h
 * emits) so that each form appears whatever the optimisation level, and
 * the registers they name hold known values at the nop.
 *
 *   usdt_forms N     fires ubtf:syms and ubtf:index N times (i = 0..N-1)
 *
 * ubtf:syms   -4@40+stats_g(%rip)   stats_g.a = 100 + i   (offset, then symbol)
 *             -4@stats_g+44(%rip)   stats_g.b = -(200 + i) (symbol, then offset)
 *             8@-8+stats_g+56(%rip) stats_g.c = 300 + i   (negative offset)
 *             -8@$-5                -5
 *             -4@%r12d 2@%r13w      -7 - i, 0x1234 + i    (register widths)
 *             1@%r14b -1@%r14b      255, -1
 *             1@%ah                 0x42
 * ubtf:index  8@8(%rbx,%rcx,8)      tab[3] = 13 + i       (scaled index)
 *             8@(,%rdx,8)           tab[0] = 10           (index, no base)
 *             8@tab(,%rcx,8)        tab[2] = 12           (symbol + index)
 *             8@16+tab(%rsi)        tab[3]                (symbol + base)
 *             8@%fs:tls_v@tpoff     tls_v = 500 + i       (segment, TLS)
 *             8@%fs:0               the thread pointer    (segment)
 *             8@$tab                &tab                  (an address)
 *             8@%xmm0               not readable: only a script reading arg7 fails
 * ubtf:regs   -8@$-5 -4@%r12d 2@%r13w 1@%r14b -1@%r14b 8@8(%rbx,%rcx,8)
 *             the forms bpftrace 0.17 reads too (its parser stops at the
 *             first operand it cannot parse, so the others are apart)
 *
 * It prints `tp=HEX tab=HEX` first, so a test can check the last two.
 */
#include <stdio.h>
#include <stdlib.h>

struct stats {
	int pad[10];
	int a; /* 40 */
	int b; /* 44 */
	long c; /* 48 */
};

struct stats stats_g;
long tab[8] = {10, 11, 12, 13, 14, 15, 16, 17};
__thread long tls_v;

/* A stapsdt note for the nop at 990, as <sys/sdt.h> writes it. */
#define UBT_NOTE(name, args)                                                    \
	"990: nop\n"                                                            \
	".pushsection .note.stapsdt,\"?\",\"note\"\n"                           \
	".balign 4\n"                                                           \
	".4byte 992f-991f, 994f-993f, 3\n"                                      \
	"991: .asciz \"stapsdt\"\n"                                             \
	"992: .balign 4\n"                                                      \
	"993: .8byte 990b\n"                                                    \
	".8byte _.stapsdt.base\n"                                               \
	".8byte 0\n"                                                            \
	".asciz \"ubtf\"\n"                                                     \
	".asciz \"" name "\"\n"                                                 \
	".asciz \"" args "\"\n"                                                 \
	"994: .balign 4\n"                                                      \
	".popsection\n"                                                         \
	".ifndef _.stapsdt.base\n"                                              \
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
	".weak _.stapsdt.base\n"                                                \
	".hidden _.stapsdt.base\n"                                              \
	"_.stapsdt.base: .space 1\n"                                            \
	".size _.stapsdt.base, 1\n"                                             \
	".popsection\n"                                                         \
	".endif\n"

static __attribute__((noinline)) void fire(long i)
{
	stats_g.a = (int)(100 + i);
	stats_g.b = (int)-(200 + i);
	stats_g.c = 300 + i;
	tab[3] = 13 + i;
	tls_v = 500 + i;
	register long r12 __asm__("r12") = -7 - i;
	register long r13 __asm__("r13") = 0x10000 + 0x1234 + i;
	register long r14 __asm__("r14") = 0x1ff;
	__asm__ volatile(UBT_NOTE("syms", "-4@40+stats_g(%%rip) -4@stats_g+44(%%rip) "
					  "8@-8+stats_g+56(%%rip) -8@$-5 -4@%%r12d 2@%%r13w "
					  "1@%%r14b -1@%%r14b 1@%%ah")
			 :
			 : "r"(r12), "r"(r13), "r"(r14), "a"(0x4200 + i)
			 : "memory");
	__asm__ volatile(UBT_NOTE("index", "8@8(%%rbx,%%rcx,8) 8@(,%%rdx,8) 8@tab(,%%rcx,8) "
					   "8@16+tab(%%rsi) 8@%%fs:tls_v@tpoff 8@%%fs:0 8@$tab "
					   "8@%%xmm0")
			 :
			 : "b"(tab), "c"(2L), "d"((long)tab / 8), "S"(8L)
			 : "memory");
	__asm__ volatile(UBT_NOTE("regs", "-8@$-5 -4@%%r12d 2@%%r13w 1@%%r14b -1@%%r14b "
					  "8@8(%%rbx,%%rcx,8)")
			 :
			 : "r"(r12), "r"(r13), "r"(r14), "b"(tab), "c"(2L)
			 : "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	printf("tp=%lx tab=%lx\n", (unsigned long)__builtin_thread_pointer(), (unsigned long)tab);
	fflush(stdout);
	for (long i = 0; i < n; i++)
		fire(i);
	return 0;
}
