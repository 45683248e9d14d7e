/*
 * test_writer.c - the x86-64 code writer (src/attach/arch/x86_64/writer.c)
 * on its own: labels, the literal pool, the bounds and the dry run.
 *
 * The trampolines' bytes are checked in test_reloc.c and test_golden.c;
 * this file checks the writer's own promises, which those exercise only
 * where a real trampoline happens to need them: a rel8 that does not
 * reach, a buffer too small, a label never placed, and a dry run that
 * counts exactly what the real run writes.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "attach/arch/x86_64/writer.h"
#include "../check.h"

#define T 0x410000ull
#define FAR 0x7f0000000000ull

/* clang-format off */

/* Forward and backward rel8 and rel32 references, resolved by finish. */
static void test_labels(void)
{
	/*
	 * T+0   74 05            jz   T+7 (L1)
	 * T+2   e9 00 00 00 00   jmp  T+7 (L1)
	 * T+7   90               nop           L1
	 * T+8   eb fd            jmp  T+7 (L1)
	 * T+10  cc x 6           fill to 8
	 */
	static const uint8_t want[] = {0x74, 0x05, 0xe9, 0x00, 0x00, 0x00, 0x00, 0x90, 0xeb, 0xfd,
				       0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
	uint8_t buf[64];
	struct x86_writer w;
	size_t len = 0;

	x86w_init(&w, buf, sizeof(buf), T);
	x86w_rel8_label(&w, "\x74", 1, 1);
	x86w_rel32_label(&w, "\xe9", 1, 1);
	x86w_label(&w, 1);
	X86W_PUT(&w, "\x90");
	x86w_rel8_label(&w, "\xeb", 1, 1);
	CHECK_EQ(x86w_finish(&w, &len), 0, "finish");
	CHECK_BYTES(buf, len, want, sizeof(want), "labels");
}

/* Literals come after the code, 8-aligned, in the order referenced. */
static void test_pool(void)
{
	/*
	 * T+0   90 e8 fa ff 00 00      nop; call T+0x10000   (in reach)
	 * T+6   ff 15 0c 00 00 00      call *0x18(pool)      # FAR
	 * T+12  ff 25 0e 00 00 00      jmp  *0x20(pool)      # FAR+8
	 * T+18  cc x 6, FAR, FAR+8
	 */
	static const uint8_t want[] = {
		0x90, 0xe8, 0xfa, 0xff, 0x00, 0x00, 0xff, 0x15, 0x0c, 0x00, 0x00, 0x00,
		0xff, 0x25, 0x0e, 0x00, 0x00, 0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00,
		0x08, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00,
	};
	uint8_t buf[64];
	struct x86_writer w;
	size_t len = 0;

	x86w_init(&w, buf, sizeof(buf), T);
	x86w_call6(&w, T + 0x10000);
	x86w_call6(&w, FAR);
	x86w_jmp(&w, FAR + 8);
	CHECK_EQ(x86w_finish(&w, &len), 0, "finish");
	CHECK_BYTES(buf, len, want, sizeof(want), "pool");
}

/* clang-format on */

static void test_errors(void)
{
	uint8_t buf[300];
	struct x86_writer w;
	size_t len = 0;

	/* a rel8 over 200 bytes */
	x86w_init(&w, buf, sizeof(buf), T);
	x86w_rel8_label(&w, "\xeb", 1, 0);
	for (int i = 0; i < 200; i++)
		X86W_PUT(&w, "\x90");
	x86w_label(&w, 0);
	CHECK_EQ(x86w_finish(&w, &len), -ERANGE, "rel8 out of reach");

	/* a rel32 to an absolute address out of reach (lea FAR(%rip),%rax) */
	x86w_init(&w, buf, sizeof(buf), T);
	x86w_rel32_to(&w, "\x48\x8d\x05", 3, FAR);
	CHECK_EQ(x86w_finish(&w, &len), -ERANGE, "rel32 out of reach");

	/* a label referenced but never placed */
	x86w_init(&w, buf, sizeof(buf), T);
	x86w_rel32_label(&w, "\xe9", 1, 3);
	CHECK_EQ(x86w_finish(&w, &len), -EINVAL, "label never placed");

	/* past cap: nothing written beyond it, the length still counted */
	memset(buf, 0, sizeof(buf));
	x86w_init(&w, buf, 4, T);
	X86W_PUT(&w, "\x90\x90\x90");
	X86W_PUT(&w, "\x41\x53");
	CHECK_EQ(w.len, 5, "counted past cap");
	CHECK_EQ(buf[3], 0, "nothing written past what fits");
	CHECK_EQ(x86w_finish(&w, &len), -ENOSPC, "past cap");

	/* the literal pool does not fit */
	x86w_init(&w, buf, 12, T);
	x86w_call6(&w, FAR);
	CHECK_EQ(x86w_finish(&w, &len), -ENOSPC, "pool past cap");

	/* more literals than the pool holds */
	x86w_init(&w, NULL, 0, T);
	for (int i = 0; i <= X86W_LITS; i++)
		x86w_call6(&w, FAR);
	CHECK_EQ(w.err, -ENOSPC, "literal table full");
}

/* A dry run (buf NULL) counts what the real run writes, without error. */
static void test_dry_run(void)
{
	uint8_t buf[64];
	struct x86_writer dry, real;
	size_t dlen = 0, rlen = 0;

	x86w_init(&dry, NULL, 0, T);
	x86w_init(&real, buf, sizeof(buf), T);
	for (struct x86_writer *w = &dry; w; w = w == &dry ? &real : NULL) {
		x86w_call6(w, FAR);
		x86w_rel8_label(w, "\x75", 1, 2);
		x86w_u64(w, 0x1122334455667788ull);
		x86w_label(w, 2);
		x86w_jmp(w, T);
	}
	CHECK_EQ(x86w_finish(&dry, &dlen), 0, "dry finish");
	CHECK_EQ(x86w_finish(&real, &rlen), 0, "real finish");
	CHECK_EQ(dlen, rlen, "dry run length");
	CHECK_EQ(rlen, 32, "length: 6 + 2 + 8 + 5, fill to 24, one literal");
}

int main(void)
{
	test_labels();
	test_pool();
	test_errors();
	test_dry_run();
	return check_summary("arch-writer");
}
