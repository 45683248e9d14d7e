/*
 * symdl.c - libubtdl.so: loaded by prog_sym_* with dlopen() only when asked
 * (`dlopen` argument), for the tests of probes on a library loaded after
 * ubt attached.
 */
#include "symlib.h"

#include <unistd.h>

volatile int sym_dl_sink;

__attribute__((noinline)) int sym_dl_func(int x)
{
	sym_dl_sink += x;
	return x * 5;
}

/*
 * dl_cgoto(op, y): a computed goto through a table of absolute label
 * addresses, which the loader relocates only after the RT_CONSISTENT
 * event at which ubt arms the library's probes (tests/e2e/lib.test).
 * Written in assembly so that its offsets are fixed: dl_cgoto+16 is a
 * nop, and dl_cgoto+17, inside a jump patched there, is the table's
 * entry 2.  op 1: y + 3 (through the nop), 2: y + 3, 3: 5y, else y ^ 1.
 */
__asm__(".text\n"
	".globl dl_cgoto\n"
	".type dl_cgoto, @function\n"
	".p2align 4\n"
	"dl_cgoto:\n"
	"\tlea dl_cgoto_tbl(%rip), %rax\n" /* +0, 7 bytes */
	"\tmovzbl %dil, %edi\n"		    /* +7, 4 bytes */
	"\tjmp *(%rax,%rdi,8)\n"	    /* +11, 3 bytes */
	"\txchg %ax, %ax\n"		    /* +14, 2 bytes */
	"dl_cgoto_1:\n"
	"\tnop\n" /* +16 */
	"dl_cgoto_2:\n"
	"\tlea 3(%rsi), %rax\n" /* +17 */
	"\tret\n"
	"dl_cgoto_3:\n"
	"\tlea (%rsi,%rsi,4), %rax\n"
	"\tret\n"
	"dl_cgoto_def:\n"
	"\tmov %rsi, %rax\n"
	"\txor $1, %rax\n"
	"\tret\n"
	".size dl_cgoto, .-dl_cgoto\n"
	".section .data.rel.ro,\"aw\"\n"
	".p2align 3\n"
	"dl_cgoto_tbl:\n"
	"\t.quad dl_cgoto_def, dl_cgoto_1, dl_cgoto_2, dl_cgoto_3\n"
	"\t.rept 252\n"
	"\t.quad dl_cgoto_def\n"
	"\t.endr\n"
	".text\n");

/*
 * dl_getpid(): getpid(2) through the library's own `syscall` instruction
 * (`mov $39,%eax; syscall`): a system-call site outside libc that exists
 * only once the library is loaded (tests/e2e/syscalls.test).
 */
__attribute__((noinline)) long dl_getpid(void)
{
	long r;
	__asm__ volatile("mov $39, %%eax\n\tsyscall" : "=a"(r) : : "rcx", "r11", "memory");
	return r;
}

/* the same through libc's getpid (here, so that prog_sym's PLT stays as
 * the tests of its addresses know it) */
long dl_libc_getpid(void)
{
	return (long)getpid();
}
