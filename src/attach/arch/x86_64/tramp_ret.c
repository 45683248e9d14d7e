/*
 * tramp_ret.c - x86-64 call-style trampolines for return probes.
 *
 * Where it sits: attach (session.c) uses this instead of
 * arch_emit_trampoline() for a site that has return probes; the site's
 * patch bytes and pc mapping (arch_pc_*_copy, with the copy address
 * returned here) are the same as for entry-only sites.  The runtime half
 * is runtime/thread/rt_ret.c; docs/ARCHITECTURE.md ("Return probes")
 * explains the design and why the push/pop are inline here.
 *
 * The common case, a shadow-stack push at entry and a pop at return, is
 * done by the trampoline itself (a few dozen instructions, no call); the
 * C functions rt_ret_enter/rt_ret_leave take every other case (first call
 * of a thread, a new thread on a reused TCB, frames left behind by
 * longjmp or a stack switch, a return whose entry is not on top, slots
 * handed to an unwinder, a full stack, a signal interrupting the C code).
 * Layout, with S = this thread's struct rt_ret_stack, found by hashing
 * the thread pointer exactly as rt_ret.c does (RT_TP_HASH_*):
 *
 *   T:      push %r11                          struct rt_entry_frame (abi.h)
 *           { call entry_handler_k }           preserve_most probe code
 *                                              [each call then nopl id(%rax): plan->call_ids]
 *           push %rax                          the return slot is at 16(%rsp)
 *           cmpl $0,ubt_priv.enabled(%rip); je nopush
 *           S = table + hash(%fs:0) * sizeof(S)      (rax = S, r11 scratch)
 *           S->tp == tp, [S->tid == %fs:tid_off], S->busy == 0,
 *           S->nrestored == 0, else slow
 *           S->top != 0: pushn
 *           e[0].sp = RT_RET_PENDING; S->top = 1
 *           e[0].ret = *slot; e[0].stub = stub; e[0].sp = slot
 *   pushed: pop rax r11
 *           lea 8(%rsp),%rsp; call body          [slot] now holds stub
 *   stub:   lea -8(%rsp),%rsp                    the old slot becomes frame.ret
 *           push r11 rax                         the slot is at 16(%rsp)
 *           S as above; S->busy == 0, else lslow
 *           S->top != 1: popn
 *           e[0].sp == slot and e[0].stub == stub (the entry's identity), else lslow
 *           *slot = e[0].ret; S->top = 0 (one store)
 *   lret:   lea site(%rip),%r11; push %r11       func: struct rt_ret_frame
 *           { call return_handler_k }
 *           lea 8(%rsp),%rsp; pop rax r11
 *           ret                                  pairs with the caller's call
 *   lslow:  push rcx rdx rsi rdi r8 r9 r10; rt_ret_leave(slot, stub); pop them;
 *           jmp lret
 *   slow:   push the same; rt_ret_enter(slot, stub); pop them
 *           test %eax,%eax; jnz pushed
 *   nopush: pop rax r11; jmp body                the call runs without return probe
 *   pushn:  push rcx rdx; top = S->top; e = &S->e[top]
 *           top >= RT_RET_DEPTH: slow
 *           e[-1].sp < slot (a frame left behind): slow
 *           e[-1].sp == slot: a tail call if *slot == e[-1].stub (a chain:
 *           the new entry's ret is that stub), else slow
 *           e->sp = RT_RET_PENDING; S->top = top + 1
 *           e->ret = *slot; e->stub = stub; e->sp = slot; pop rdx rcx; jmp pushed
 *   popn:   push rcx rdx; top = S->top; top > 0 && S->e[top-1] is {slot, stub},
 *           else lslow; *slot = e->ret; S->top = top - 1; pop rdx rcx; jmp lret
 *   body:   displaced instructions, relocated; jmp site + orig_len
 *   pool:   64-bit targets of calls out of rel32 reach, relocation literals
 *
 * The common case is a probed function that is not called (through other
 * probed functions) from itself: a push onto an empty stack and a pop back
 * to it, done with constant offsets, so no store's address or value depends
 * on the loaded `top` and successive calls do not chain through it.
 *
 * Registers: the handlers are probe code in abi.h's handler convention
 * (preserve_most: they keep everything but %r11), so the trampoline saves
 * only %r11 and %rax, the two registers its inline code uses; the deeper
 * paths save %rcx and %rdx, the C slow paths every other caller-saved one.
 *
 * Signals: a handler may run between any two instructions and enter or
 * leave probed functions itself, on the same shadow stack.  The push
 * marks its entry RT_RET_PENDING (above every stack address, so nobody
 * drops it or matches it) before raising top, and publishes the real
 * slot address last; the pop reads the entry before its one store of
 * top.  Either
 * way a handler that runs in between pushes and pops above a consistent
 * top.  The C paths set S->busy, which sends the inline paths to C too.
 *
 * Stack alignment: at entry %rsp % 16 == 8, so after push %r11 it is 0
 * at the handler calls; push %rax makes it 8, and the slow path's seven
 * pushes 0 again.  At stub %rsp % 16 == 0 (the body returned); lea -8
 * and two pushes make it 8, the push of func 0 at the handler calls (and
 * the slow path's seven pushes 0 at its call).  Flags are dead at a
 * function's entry and after its return.  Every other register is
 * restored, %r11 included: the ABI makes rcx, rsi, rdi, r8-r11 dead
 * after a return, but gcc's -fipa-ra lets a caller keep values in the
 * caller-saved registers its (same-unit) callee is known not to touch.
 * Handlers are built without SSE/x87, so xmm and st registers survive.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "runtime/abi.h"
#include "writer.h"

#define HCALL (6 + X86_CALL_ID_LEN) /* nop; call rel32, or call *lit(%rip); [nopl id] */
#define FIXED_MAX 768 /* every instruction below but the handler calls (632 today) */

/* the return slot, above rax r11 (struct rt_ret_frame without func) */
#define SLOT 16
#define S_TP offsetof(struct rt_ret_stack, tp)
#define S_TID offsetof(struct rt_ret_stack, tid)
#define S_TOP offsetof(struct rt_ret_stack, top)
#define S_BUSY offsetof(struct rt_ret_stack, busy)
#define S_E offsetof(struct rt_ret_stack, e)
#define E_SIZE sizeof(struct rt_ret_entry)

_Static_assert(RT_TP_HASH_SHIFT > RT_RET_STACK_SHIFT, "one shift right in find_stack");
_Static_assert(offsetof(struct rt_ret_stack, nrestored) == S_BUSY + 4,
	       "busy and nrestored are tested with one cmpq");
_Static_assert(E_SIZE == 32, "entries are indexed with shl $5");
_Static_assert(offsetof(struct rt_ret_frame, ret) == 8 + SLOT &&
		       offsetof(struct rt_ret_frame, rax) == 8,
	       "the stub's pushes make struct rt_ret_frame");

enum label {
	L_SLOW,   /* entry: rt_ret_enter */
	L_NOPUSH, /* entry: no return probe for this call */
	L_PUSHED, /* entry: pushed, call the body */
	L_PUSHN,  /* entry: push onto a non-empty stack */
	L_PSLOW,  /* entry: from pushn to slow */
	L_PUSHOK, /* entry: pushn, the new entry fits on top */
	L_POPN,   /* return: pop from a stack deeper than one */
	L_QSLOW,  /* return: from popn to lslow */
	L_STUB,   /* the body returns here */
	L_LSLOW,  /* return: rt_ret_leave */
	L_LRET,   /* return: handlers */
	L_BODY,   /* the relocated copy */
	L_N
};
_Static_assert(L_N <= X86W_LABELS, "the writer holds every label");

/*
 * %r11 = the thread pointer, %rax = its struct rt_ret_stack (the same
 * hash as rt_ret.c), then `cmp %r11,tp(%rax); jne miss`.  The shift that
 * extracts the hash and the one that scales it by the stack's size
 * (2^RT_RET_STACK_SHIFT) are one shift.  Two registers only: the thread
 * pointer is loaded again for the comparison.  (Taking the table's
 * address from the literal pool instead measured slower.)
 */
static void find_stack(struct x86_writer *e, const struct arch_ret_spec *spec, enum label miss)
{
	X86W_PUT(e, "\x64\x48\x8b\x04\x25\x00\x00\x00\x00"); /* mov %fs:0,%rax */
	/* 0 (a Go thread: rt.h rt_thread_pointer) would match a free stack */
	X86W_PUT(e, "\x48\x85\xc0");			     /* test %rax,%rax */
	x86w_rel32_label(e, "\x0f\x84", 2, miss);	     /* jz miss */
	X86W_PUT(e, "\x49\xbb");			     /* movabs $RT_TP_HASH_MUL,%r11 */
	x86w_u64(e, RT_TP_HASH_MUL);
	X86W_PUT(e, "\x4c\x0f\xaf\xd8"); /* imul %rax,%r11 */
	X86W_PUT(e, "\x49\xc1\xeb");	 /* shr $(HASH_SHIFT - STACK_SHIFT),%r11 */
	x86w_u8(e, RT_TP_HASH_SHIFT - RT_RET_STACK_SHIFT);
	X86W_PUT(e, "\x41\x81\xe3"); /* and $mask << STACK_SHIFT,%r11d */
	x86w_u32(e, (spec->nstacks - 1) << RT_RET_STACK_SHIFT);
	X86W_PUT(e, "\x48\xb8"); /* movabs $stacks,%rax */
	x86w_u64(e, spec->stacks);
	X86W_PUT(e, "\x4c\x01\xd8");			     /* add %r11,%rax */
	X86W_PUT(e, "\x64\x4c\x8b\x1c\x25\x00\x00\x00\x00"); /* mov %fs:0,%r11 */
	X86W_PUT(e, "\x4c\x3b\x58");			     /* cmp tp(%rax),%r11 */
	x86w_u8(e, S_TP);
	x86w_rel32_label(e, "\x0f\x85", 2, miss); /* jne miss */
}

/* if (!ubt_priv.enabled) goto l */
static void if_disabled(struct x86_writer *e, uint64_t enabled, enum label l)
{
	int32_t rel = 0;

	if (!x86_rel32(x86w_pc(e) + 7, enabled, &rel)) {
		X86W_PUT(e, "\x49\xbb"); /* movabs $enabled,%r11 */
		x86w_u64(e, enabled);
		X86W_PUT(e, "\x41\x83\x3b\x00"); /* cmpl $0,(%r11) */
	} else {
		X86W_PUT(e, "\x83\x3d"); /* cmpl $0,enabled(%rip) */
		x86w_u32(e, (uint32_t)rel);
		X86W_PUT(e, "\x00");
	}
	x86w_rel32_label(e, "\x0f\x84", 2, l); /* je l */
}

/* the caller-saved registers the inline code leaves alone, around a C call */
#define C_SAVED 56 /* bytes of the pushes below */

/*
 * fn(slot, stub), fn being rt_ret_enter or rt_ret_leave, keeping the
 * caller-saved registers the inline code leaves alone.  %rsp % 16 == 8
 * before (after push %r11 and push %rax), so the seven pushes make it 0.
 */
static void call_c(struct x86_writer *e, uint64_t fn, uint64_t stub)
{
	/* push rcx rdx rsi rdi r8 r9 r10 */
	X86W_PUT(e, "\x51\x52\x56\x57\x41\x50\x41\x51\x41\x52");
	X86W_PUT(e, "\x48\x8d\x7c\x24"); /* lea SLOT+C_SAVED(%rsp),%rdi */
	x86w_u8(e, SLOT + C_SAVED);
	x86w_rel32_to(e, "\x48\x8d\x35", 3, stub); /* lea stub(%rip),%rsi */
	x86w_call6(e, fn);
	/* pop r10 r9 r8 rdi rsi rdx rcx */
	X86W_PUT(e, "\x41\x5a\x41\x59\x41\x58\x5f\x5e\x5a\x59");
}

static void emit_entry(struct x86_writer *e, const struct arch_site_plan *plan,
		       const struct arch_ret_spec *spec, uint64_t stub)
{
	X86W_PUT(e, "\x41\x53"); /* push %r11: struct rt_entry_frame for the handlers */
	for (int i = 0; i < spec->nhandlers; i++)
		x86w_call_handler(e, spec->handlers[i], plan->call_ids, plan->call_id[i]);
	X86W_PUT(e, "\x50"); /* push %rax: the return slot is now at SLOT(%rsp) */
	if_disabled(e, spec->enabled, L_NOPUSH);
	find_stack(e, spec, L_SLOW);
	if (spec->has_tid) {
		X86W_PUT(e, "\x64\x44\x8b\x1c\x25"); /* mov %fs:tid_off,%r11d */
		x86w_u32(e, (uint32_t)spec->tid_off);
		X86W_PUT(e, "\x44\x3b\x58"); /* cmp tid(%rax),%r11d */
		x86w_u8(e, S_TID);
		x86w_rel32_label(e, "\x0f\x85", 2, L_SLOW);
	}
	X86W_PUT(e, "\x48\x83\x78"); /* cmpq $0,busy(%rax): busy and nrestored */
	x86w_put(e, (uint8_t[]){S_BUSY, 0}, 2);
	x86w_rel32_label(e, "\x0f\x85", 2, L_SLOW);
	X86W_PUT(e, "\x83\x78"); /* cmpl $0,top(%rax) */
	x86w_put(e, (uint8_t[]){S_TOP, 0}, 2);
	x86w_rel32_label(e, "\x0f\x85", 2, L_PUSHN); /* jne pushn */
	/* an empty stack: e[0], every address and value but the slot's constant */
	X86W_PUT(e, "\x48\xc7\x80"); /* movq $RT_RET_PENDING,e[0].sp(%rax) */
	x86w_u32(e, (uint32_t)S_E);
	x86w_u32(e, 0xffffffff);
	X86W_PUT(e, "\xc7\x40"); /* movl $1,top(%rax) */
	x86w_u8(e, S_TOP);
	x86w_u32(e, 1);
	X86W_PUT(e, "\x4c\x8b\x5c\x24"); /* mov SLOT(%rsp),%r11 */
	x86w_u8(e, SLOT);
	X86W_PUT(e, "\x4c\x89\x98"); /* mov %r11,e[0].ret(%rax) */
	x86w_u32(e, (uint32_t)(S_E + offsetof(struct rt_ret_entry, ret)));
	x86w_rel32_to(e, "\x4c\x8d\x1d", 3, stub); /* lea stub(%rip),%r11 */
	X86W_PUT(e, "\x4c\x89\x98");		   /* mov %r11,e[0].stub(%rax) */
	x86w_u32(e, (uint32_t)(S_E + offsetof(struct rt_ret_entry, stub)));
	X86W_PUT(e, "\x4c\x8d\x5c\x24"); /* lea SLOT(%rsp),%r11 */
	x86w_u8(e, SLOT);
	X86W_PUT(e, "\x4c\x89\x98"); /* mov %r11,e[0].sp(%rax): published */
	x86w_u32(e, (uint32_t)S_E);
	x86w_label(e, L_PUSHED);
	X86W_PUT(e, "\x58\x41\x5b");		/* pop %rax; pop %r11 */
	X86W_PUT(e, "\x48\x8d\x64\x24\x08");	/* lea 8(%rsp),%rsp */
	x86w_rel32_label(e, "\xe8", 1, L_BODY); /* call body */
}

static void emit_stub(struct x86_writer *e, const struct arch_site_plan *plan,
		      const struct arch_ret_spec *spec, uint64_t stub)
{
	uint64_t site = plan->site;
	x86w_label(e, L_STUB);
	X86W_PUT(e, "\x48\x8d\x64\x24\xf8"); /* lea -8(%rsp),%rsp: the old slot, frame.ret */
	X86W_PUT(e, "\x41\x53\x50");	     /* push %r11; push %rax: the slot is at SLOT(%rsp) */
	find_stack(e, spec, L_LSLOW);
	X86W_PUT(e, "\x83\x78"); /* cmpl $0,busy(%rax) */
	x86w_put(e, (uint8_t[]){S_BUSY, 0}, 2);
	x86w_rel32_label(e, "\x0f\x85", 2, L_LSLOW);
	X86W_PUT(e, "\x83\x78"); /* cmpl $1,top(%rax) */
	x86w_put(e, (uint8_t[]){S_TOP, 1}, 2);
	x86w_rel32_label(e, "\x0f\x85", 2, L_POPN); /* jne popn */
	X86W_PUT(e, "\x4c\x8d\x5c\x24");	    /* lea SLOT(%rsp),%r11 */
	x86w_u8(e, SLOT);
	X86W_PUT(e, "\x4c\x3b\x98"); /* cmp e[0].sp(%rax),%r11 */
	x86w_u32(e, (uint32_t)S_E);
	x86w_rel32_label(e, "\x0f\x85", 2, L_LSLOW);
	x86w_rel32_to(e, "\x4c\x8d\x1d", 3,
		      stub);	     /* lea stub(%rip),%r11: the identity's other half */
	X86W_PUT(e, "\x4c\x3b\x98"); /* cmp e[0].stub(%rax),%r11 */
	x86w_u32(e, (uint32_t)(S_E + offsetof(struct rt_ret_entry, stub)));
	x86w_rel32_label(e, "\x0f\x85", 2, L_LSLOW);
	X86W_PUT(e, "\x4c\x8b\x98"); /* mov e[0].ret(%rax),%r11 */
	x86w_u32(e, (uint32_t)(S_E + offsetof(struct rt_ret_entry, ret)));
	X86W_PUT(e, "\x4c\x89\x5c\x24"); /* mov %r11,SLOT(%rsp) */
	x86w_u8(e, SLOT);
	X86W_PUT(e, "\xc7\x40"); /* movl $0,top(%rax): popped */
	x86w_u8(e, S_TOP);
	x86w_u32(e, 0);
	x86w_label(e, L_LRET);
	if (spec->nrhandlers) {
		x86w_rel32_to(e, "\x4c\x8d\x1d", 3, site); /* lea site(%rip),%r11 */
		X86W_PUT(e, "\x41\x53"); /* push %r11: func; struct rt_ret_frame */
		for (int i = 0; i < spec->nrhandlers; i++)
			x86w_call_handler(e, spec->rhandlers[i], plan->call_ids,
					  plan->ret_call_id[i]);
		X86W_PUT(e, "\x48\x8d\x64\x24\x08"); /* lea 8(%rsp),%rsp */
	}
	X86W_PUT(e, "\x58\x41\x5b"); /* pop %rax; pop %r11 */
	X86W_PUT(e, "\xc3");	     /* ret: pairs with the caller's call */
}

static void emit_slow(struct x86_writer *e, const struct arch_ret_spec *spec, uint64_t stub)
{
	x86w_label(e, L_LSLOW);
	call_c(e, spec->leave, stub);
	x86w_rel32_label(e, "\xe9", 1, L_LRET);
	x86w_label(e, L_SLOW);
	call_c(e, spec->enter, stub);
	X86W_PUT(e, "\x85\xc0"); /* test %eax,%eax */
	x86w_rel32_label(e, "\x0f\x85", 2, L_PUSHED);
	x86w_label(e, L_NOPUSH);
	X86W_PUT(e, "\x58\x41\x5b"); /* pop %rax; pop %r11 */
	x86w_rel32_label(e, "\xe9", 1, L_BODY);
}

/*
 * Pushes onto a non-empty stack and pops from one deeper than one entry:
 * the index then comes from `top`.  Out of line, because the depth-one
 * case above keeps every store's address and value independent of the
 * loaded top (only a predicted branch depends on it), so that one call's
 * pop and the next call's push form no chain of store-to-load forwards
 * through `top` (about 2 ns each on the development VM).  In: %rax = S;
 * %rcx and %rdx are saved here (the slot is then at SLOT + 16).
 */
static void emit_general(struct x86_writer *e, uint64_t stub)
{
	x86w_label(e, L_PUSHN);
	X86W_PUT(e, "\x51\x52"); /* push %rcx; push %rdx */
	X86W_PUT(e, "\x8b\x48"); /* mov top(%rax),%ecx */
	x86w_u8(e, S_TOP);
	X86W_PUT(e, "\x48\x8d\x54\x24"); /* lea SLOT+16(%rsp),%rdx: the slot */
	x86w_u8(e, SLOT + 16);
	X86W_PUT(e, "\x49\x89\xcb");	 /* mov %rcx,%r11 */
	X86W_PUT(e, "\x49\xc1\xe3\x05"); /* shl $5,%r11: top * sizeof(entry) */
	X86W_PUT(e, "\x83\xf9");	 /* cmp $RT_RET_DEPTH,%ecx */
	x86w_u8(e, RT_RET_DEPTH);
	x86w_rel8_label(e, "\x73", 1, L_PSLOW); /* jae pslow */
	X86W_PUT(e, "\x4a\x39\x94\x18");	/* cmp %rdx,e[-1].sp(%rax,%r11) */
	x86w_u32(e, (uint32_t)(S_E - E_SIZE));
	x86w_rel8_label(e, "\x77", 1, L_PUSHOK); /* ja pushok: the frame below is the caller's */
	x86w_rel8_label(e, "\x75", 1,
			L_PSLOW); /* jne pslow: below this slot, that frame was abandoned */
	/* the same slot: a tail call if it holds that entry's stub (a chain) */
	X86W_PUT(e, "\x48\x8b\x4c\x24"); /* mov SLOT+16(%rsp),%rcx */
	x86w_u8(e, SLOT + 16);
	X86W_PUT(e, "\x4a\x3b\x8c\x18"); /* cmp e[-1].stub(%rax,%r11),%rcx */
	x86w_u32(e, (uint32_t)(S_E - E_SIZE + offsetof(struct rt_ret_entry, stub)));
	x86w_rel8_label(e, "\x75", 1, L_PSLOW); /* jne pslow */
	X86W_PUT(e, "\x8b\x48");		/* mov top(%rax),%ecx: again */
	x86w_u8(e, S_TOP);
	x86w_label(e, L_PUSHOK);
	X86W_PUT(e, "\x4e\x8d\x9c\x18"); /* lea e(%rax,%r11),%r11 */
	x86w_u32(e, (uint32_t)S_E);
	X86W_PUT(e, "\x49\xc7\x03\xff\xff\xff\xff"); /* movq $RT_RET_PENDING,(%r11) */
	X86W_PUT(e, "\xff\xc1");		     /* inc %ecx */
	X86W_PUT(e, "\x89\x48");		     /* mov %ecx,top(%rax) */
	x86w_u8(e, S_TOP);
	X86W_PUT(e, "\x48\x8b\x4c\x24"); /* mov SLOT+16(%rsp),%rcx */
	x86w_u8(e, SLOT + 16);
	X86W_PUT(e, "\x49\x89\x4b\x08");	   /* mov %rcx,8(%r11): e->ret */
	x86w_rel32_to(e, "\x48\x8d\x0d", 3, stub); /* lea stub(%rip),%rcx */
	X86W_PUT(e, "\x49\x89\x4b\x10");	   /* mov %rcx,16(%r11): e->stub */
	X86W_PUT(e, "\x49\x89\x13");		   /* mov %rdx,(%r11): e->sp, published */
	X86W_PUT(e, "\x5a\x59");		   /* pop %rdx; pop %rcx */
	x86w_rel32_label(e, "\xe9", 1, L_PUSHED);
	x86w_label(e, L_PSLOW);
	X86W_PUT(e, "\x5a\x59"); /* pop %rdx; pop %rcx */
	x86w_rel32_label(e, "\xe9", 1, L_SLOW);

	x86w_label(e, L_POPN);
	X86W_PUT(e, "\x51\x52"); /* push %rcx; push %rdx */
	X86W_PUT(e, "\x8b\x48"); /* mov top(%rax),%ecx */
	x86w_u8(e, S_TOP);
	X86W_PUT(e, "\x85\xc9");		/* test %ecx,%ecx */
	x86w_rel8_label(e, "\x74", 1, L_QSLOW); /* jz qslow */
	X86W_PUT(e, "\x49\x89\xcb");		/* mov %rcx,%r11 */
	X86W_PUT(e, "\x49\xc1\xe3\x05");	/* shl $5,%r11 */
	X86W_PUT(e, "\x48\x8d\x54\x24");	/* lea SLOT+16(%rsp),%rdx */
	x86w_u8(e, SLOT + 16);
	X86W_PUT(e, "\x4a\x39\x94\x18"); /* cmp %rdx,e[-1].sp(%rax,%r11) */
	x86w_u32(e, (uint32_t)(S_E - E_SIZE));
	x86w_rel8_label(e, "\x75", 1, L_QSLOW);	   /* jne qslow */
	x86w_rel32_to(e, "\x48\x8d\x15", 3, stub); /* lea stub(%rip),%rdx */
	X86W_PUT(e, "\x4a\x3b\x94\x18");	   /* cmp e[-1].stub(%rax,%r11),%rdx */
	x86w_u32(e, (uint32_t)(S_E - E_SIZE + offsetof(struct rt_ret_entry, stub)));
	x86w_rel8_label(e, "\x75", 1, L_QSLOW); /* jne qslow */
	X86W_PUT(e, "\x4a\x8b\x94\x18");	/* mov e[-1].ret(%rax,%r11),%rdx */
	x86w_u32(e, (uint32_t)(S_E - E_SIZE + offsetof(struct rt_ret_entry, ret)));
	X86W_PUT(e, "\x48\x89\x54\x24"); /* mov %rdx,SLOT+16(%rsp) */
	x86w_u8(e, SLOT + 16);
	X86W_PUT(e, "\xff\xc9"); /* dec %ecx */
	X86W_PUT(e, "\x89\x48"); /* mov %ecx,top(%rax): popped */
	x86w_u8(e, S_TOP);
	X86W_PUT(e, "\x5a\x59"); /* pop %rdx; pop %rcx */
	x86w_rel32_label(e, "\xe9", 1, L_LRET);
	x86w_label(e, L_QSLOW);
	X86W_PUT(e, "\x5a\x59"); /* pop %rdx; pop %rcx */
	x86w_rel32_label(e, "\xe9", 1, L_LSLOW);
}

static size_t code_max(int nhandlers, int nrhandlers)
{
	return FIXED_MAX + HCALL * ((size_t)nhandlers + (size_t)nrhandlers);
}

size_t arch_ret_trampoline_max(int nhandlers, int nrhandlers)
{
	if (nhandlers < 0)
		nhandlers = 0;
	if (nrhandlers < 0)
		nrhandlers = 0;
	return code_max(nhandlers, nrhandlers) + X86_RELOC_CODE_MAX + 7 +
	       8 * ((size_t)nhandlers + nrhandlers + 2 + X86_RELOC_LIT_MAX);
}

int arch_emit_ret_trampoline(const struct arch_site_plan *plan, uint64_t tramp_addr,
			     const struct arch_ret_spec *spec, uint8_t *buf, size_t cap,
			     size_t *len, uint64_t *copy_addr)
{
	int n = spec->nhandlers, m = spec->nrhandlers, rc;
	size_t max = arch_ret_trampoline_max(n, m);
	struct x86_writer em, *e = &em;
	uint64_t stub;

	if (n < 0 || m < 0 || (n && !spec->handlers) || (m && !spec->rhandlers) ||
	    !spec->nstacks || (spec->nstacks & (spec->nstacks - 1)) || !spec->stacks)
		return -EINVAL;
	if (plan->kind != ARCH_PATCH_JMP)
		return -ENOTSUP; /* return probes need the jmp: see session.c */
	memset(buf, 0xcc, cap < max ? cap : max);
	/* The stub's address is needed before it is emitted: one dry run.
	 * Instruction sizes do not depend on the stub's address. */
	x86w_init(e, NULL, 0, tramp_addr);
	emit_entry(e, plan, spec, tramp_addr);
	stub = x86w_pc(e);
	x86w_init(e, buf, cap < max ? cap : max, tramp_addr);
	emit_entry(e, plan, spec, stub);
	if (x86w_pc(e) != stub)
		return -EIO;
	emit_stub(e, plan, spec, stub);
	emit_slow(e, spec, stub);
	emit_general(e, stub);
	x86w_label(e, L_BODY);
	if (e->err)
		return e->err;
	*copy_addr = x86w_pc(e);
	rc = x86_relocate(plan, e, NULL);
	return rc < 0 ? rc : x86w_finish(e, len);
}
