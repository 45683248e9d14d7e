/*
 * tramp_ret.c - x86-64 call-style trampolines for return probes.
 *
 * Where it sits: attach (session.c) uses this instead of
 * arch_emit_trampoline() for a site that has return probes; the site's
 * patch bytes and pc mapping (arch_pc_*_copy, with the copy address
 * returned here) are the same as for entry-only sites.  The runtime half
 * is runtime/rt_ret.c; docs/ARCHITECTURE.md explains the design.
 *
 * Layout (every piece has a fixed size: calls are always 6 bytes, either
 * `nop; call rel32` or `call *lit(%rip)`):
 *
 *   0     push rdi rsi rdx rcx rax r8 r9 r10 r11    struct rt_regs at %rsp
 *         { mov %rsp,%rdi; call entry_handler_k }   for each entry handler
 *         mov %rsp,%rdi; lea stub(%rip),%rsi; call rt_ret_enter
 *         test %eax,%eax                            (pops keep the flags)
 *         pop r11 r10 r9 r8 rax rcx rdx rsi rdi
 *         jz body                                   not pushed: plain call
 *         lea 8(%rsp),%rsp                          the caller's address is saved
 *         call body                                 pushes stub where it was
 *   stub: lea site(%rip),%r11                       `func` for the handlers
 *         lea -8(%rsp),%rsp                         the old slot becomes regs->ret
 *         push ... (9)
 *         mov %rsp,%rdi; call rt_ret_leave          regs->ret = the caller's address
 *         { mov %rsp,%rdi; call return_handler_k }
 *         pop ... (9)
 *         ret                                       pairs with the caller's call
 *   body: displaced instructions, relocated; jmp site + orig_len
 *   pool: 64-bit call targets for calls out of rel32 reach
 *
 * Stack alignment: at entry %rsp % 16 == 8, so after nine pushes it is 0
 * at every call.  At stub %rsp % 16 == 0 (the body returned); lea -8 and
 * nine pushes make it 0 again.  Flags are dead at a function's entry and
 * after its return; %r11 is dead after a return, so stub may set it.
 */
#include <errno.h>
#include <string.h>

#include "x86.h"

#define SAVE_LEN 13
#define RESTORE_LEN 13
#define CALL6 6
#define HCALL (3 + CALL6) /* mov %rsp,%rdi + call */

/* offsets of the pieces, for n entry and m return handlers */
#define OFF_ENTER(n) (SAVE_LEN + HCALL * (size_t)(n))
#define OFF_LEA_STUB(n) (OFF_ENTER(n) + 3)
#define OFF_CALL_ENTER(n) (OFF_LEA_STUB(n) + 7)
#define OFF_JZ(n) (OFF_CALL_ENTER(n) + CALL6 + 2 + RESTORE_LEN)
#define OFF_CALL_BODY(n) (OFF_JZ(n) + 6 + 5)
#define OFF_STUB(n) (OFF_CALL_BODY(n) + 5)
#define OFF_LEAVE(n) (OFF_STUB(n) + 7 + 5 + SAVE_LEN)
#define OFF_BODY(n, m) (OFF_LEAVE(n) + HCALL * (1 + (size_t)(m)) + RESTORE_LEN + 1)

size_t arch_ret_trampoline_max(int nhandlers, int nrhandlers)
{
	if (nhandlers < 0)
		nhandlers = 0;
	if (nrhandlers < 0)
		nrhandlers = 0;
	return OFF_BODY(nhandlers, nrhandlers) + X86_RELOC_CODE_MAX + 7 +
	       8 * ((size_t)nhandlers + nrhandlers + 2 + X86_RELOC_LIT_MAX);
}

struct emitter {
	uint8_t *buf;
	uint64_t at;   /* target address of buf[0] */
	size_t pool;   /* next free literal slot (offset) */
	size_t cap;
	int err;
};

static void put_lit(struct emitter *e, size_t disp_off, size_t insn_end, uint64_t value)
{
	if (e->pool + 8 > e->cap) {
		e->err = -ENOSPC;
		return;
	}
	memcpy(e->buf + e->pool, &value, 8);
	x86_put32(e->buf + disp_off, (int32_t)(e->pool - insn_end));
	e->pool += 8;
}

/* a 6-byte call at offset p */
static void call6(struct emitter *e, size_t p, uint64_t target)
{
	uint8_t *c = e->buf + p;
	int32_t rel;

	if (x86_rel32(e->at + p + 6, target, &rel)) {
		c[0] = 0x90;
		c[1] = 0xe8;
		x86_put32(c + 2, rel);
	} else {
		c[0] = 0xff, c[1] = 0x15; /* call *lit(%rip) */
		put_lit(e, p + 2, p + 6, target);
	}
}

/* mov %rsp,%rdi; call target */
static void hcall(struct emitter *e, size_t p, uint64_t target)
{
	e->buf[p] = 0x48, e->buf[p + 1] = 0x89, e->buf[p + 2] = 0xe7;
	call6(e, p + 3, target);
}

/* a rel32 field at p (instruction ending at end) pointing to target */
static void rel32_at(struct emitter *e, size_t p, size_t end, uint64_t target)
{
	int32_t rel;

	if (!x86_rel32(e->at + end, target, &rel))
		e->err = -ERANGE;
	else
		x86_put32(e->buf + p, rel);
}

int arch_emit_ret_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr,
			     const struct arch_ret_spec *spec, uint8_t *buf, size_t cap,
			     size_t *len, uint64_t *copy_addr)
{
	int n = spec->nhandlers, m = spec->nrhandlers, i, rc;
	size_t p, body = OFF_BODY(n, m);
	uint64_t stub = tramp_addr + OFF_STUB(n);
	struct x86_reloc r;
	struct emitter e;

	if (n < 0 || m < 0 || (n && !spec->handlers) || (m && !spec->rhandlers))
		return -EINVAL;
	if (plan->kind != ARCH_PATCH_JMP)
		return -ENOTSUP; /* return probes need the jmp: see session.c */
	rc = x86_relocate(plan, tramp_addr + body, &r);
	if (rc < 0)
		return rc;
	if (body + r.len > cap)
		return -ENOSPC;
	memset(buf, 0xcc, cap < arch_ret_trampoline_max(n, m) ? cap : arch_ret_trampoline_max(n, m));
	e = (struct emitter){buf, tramp_addr, (body + r.len + 7) & ~(size_t)7, cap, 0};

	memcpy(buf, x86_save_regs, SAVE_LEN);
	for (i = 0; i < n; i++)
		hcall(&e, SAVE_LEN + HCALL * i, spec->handlers[i]);
	p = OFF_ENTER(n);
	buf[p] = 0x48, buf[p + 1] = 0x89, buf[p + 2] = 0xe7; /* mov %rsp,%rdi */
	p = OFF_LEA_STUB(n);
	buf[p] = 0x48, buf[p + 1] = 0x8d, buf[p + 2] = 0x35; /* lea stub(%rip),%rsi */
	rel32_at(&e, p + 3, p + 7, stub);
	call6(&e, OFF_CALL_ENTER(n), spec->enter);
	p = OFF_CALL_ENTER(n) + CALL6;
	buf[p] = 0x85, buf[p + 1] = 0xc0; /* test %eax,%eax */
	memcpy(buf + p + 2, x86_restore_regs, RESTORE_LEN);
	p = OFF_JZ(n);
	buf[p] = 0x0f, buf[p + 1] = 0x84; /* jz body */
	rel32_at(&e, p + 2, p + 6, tramp_addr + body);
	p += 6;
	memcpy(buf + p, "\x48\x8d\x64\x24\x08", 5); /* lea 8(%rsp),%rsp */
	p = OFF_CALL_BODY(n);
	buf[p] = 0xe8; /* call body */
	rel32_at(&e, p + 1, p + 5, tramp_addr + body);

	p = OFF_STUB(n);
	buf[p] = 0x4c, buf[p + 1] = 0x8d, buf[p + 2] = 0x1d; /* lea site(%rip),%r11 */
	rel32_at(&e, p + 3, p + 7, plan->site);
	memcpy(buf + p + 7, "\x48\x8d\x64\x24\xf8", 5); /* lea -8(%rsp),%rsp */
	memcpy(buf + p + 12, x86_save_regs, SAVE_LEN);
	hcall(&e, OFF_LEAVE(n), spec->leave);
	for (i = 0; i < m; i++)
		hcall(&e, OFF_LEAVE(n) + HCALL * (1 + i), spec->rhandlers[i]);
	p = OFF_LEAVE(n) + HCALL * (1 + (size_t)m);
	memcpy(buf + p, x86_restore_regs, RESTORE_LEN);
	buf[p + RESTORE_LEN] = 0xc3; /* ret */

	memcpy(buf + body, r.code, r.len);
	for (i = 0; i < r.nlit; i++)
		put_lit(&e, body + r.lit[i].disp_off, body + r.lit[i].insn_end, r.lit[i].value);
	if (e.err)
		return e.err;
	*len = e.pool;
	*copy_addr = tramp_addr + body;
	return 0;
}
