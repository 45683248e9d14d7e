/*
 * syscall.c - the system-call sites of a function: every `syscall`
 * instruction (0f 05) and the number it runs, where the code says it
 * (issue 16; docs/ARCHITECTURE.md, "System-call tracepoints").
 *
 * Where it sits: resolve reads a function's bytes from the file (the
 * program, libc, every library) and asks for its sites; a site with a
 * known number gets only that call's probes, and its jump goes over the
 * `mov` alone so that the `syscall` stays in place for a thread the kernel
 * restarts there.  write() of Debian 12's libc.so.6 (glibc 2.36), whose
 * single-threaded path makes the call at once and whose other path makes
 * it again at write+0x48, between the cancellation calls:
 *
 *   write+0x00: 80 3d 91 32 0e 00 00   cmpb $0x0,__libc_single_threaded(%rip)
 *   write+0x07: 74 17                  je   write+0x20
 *   write+0x09: b8 01 00 00 00         mov  $0x1,%eax           <- site, nr 1
 *   write+0x0e: 0f 05                  syscall                  <- insn
 *   write+0x10: 48 3d 00 f0 ff ff      cmp  $0xfffffffffffff000,%rax
 *   write+0x16: 77 58                  ja   write+0x70
 *   write+0x18: c3                     ret
 *
 * syscall(2) loads the number from a register (`mov %rdi,%rax`): the site
 * is the `syscall` itself and the number is only known when it runs.
 * read's number is 0, loaded by `xor %eax,%eax` (2 bytes, too few for a
 * jump): the number is known, the site is the `syscall` itself again.
 *
 * The function is decoded from its first byte, one instruction after the
 * other, so that `0f 05` inside another instruction (an immediate, a
 * displacement) is not taken for a site; a byte that does not decode is
 * skipped, as a disassembler resynchronises after data.
 */
#include <errno.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "x86.h"

/* `xor %eax, %eax`: read's number, 0, in 2 bytes (too few for a jump). */
static bool xor_zero(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	return in->mnemonic == ZYDIS_MNEMONIC_XOR && in->operand_count_visible == 2 &&
	       ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[0].reg.value == ops[1].reg.value &&
	       (ops[0].reg.value == ZYDIS_REGISTER_EAX || ops[0].reg.value == ZYDIS_REGISTER_RAX);
}

/* `mov $imm, %eax` or `mov $imm, %rax`: the number it loads, else -1. */
static int mov_nr(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	if (in->mnemonic != ZYDIS_MNEMONIC_MOV || in->operand_count_visible != 2 ||
	    ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return -1;
	if (ops[0].reg.value != ZYDIS_REGISTER_EAX && ops[0].reg.value != ZYDIS_REGISTER_RAX)
		return -1;
	uint64_t v = ops[1].imm.value.u;
	if (ops[0].reg.value == ZYDIS_REGISTER_EAX)
		v &= 0xffffffffu;
	return v < 0x10000 ? (int)v : -1; /* a number, not an address */
}

int arch_syscall_sites(const uint8_t *code, size_t len, uint64_t addr, struct arch_sys_site *out,
		       int max)
{
	ZydisDecoder dec;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	int n = 0, prev_nr = -1;
	bool prev_zero = false;
	uint64_t prev_addr = 0;
	for (size_t off = 0; off < len;) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &in, ops))) {
			off++;
			prev_nr = -1;
			prev_zero = false;
			continue;
		}
		if (in.mnemonic == ZYDIS_MNEMONIC_SYSCALL) {
			if (n < max)
				out[n] = (struct arch_sys_site){
				    .insn = addr + off,
				    .site = prev_nr >= 0 ? prev_addr : addr + off,
				    .nr = prev_nr >= 0 ? prev_nr
					  : prev_zero  ? 0
						       : -1,
				};
			n++;
		}
		prev_zero = xor_zero(&in, ops);
		prev_nr = mov_nr(&in, ops);
		prev_addr = addr + off;
		off += in.length;
	}
	return n;
}
