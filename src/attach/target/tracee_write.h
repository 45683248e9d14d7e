/*
 * tracee_write.h - the part of the target room that changes the target:
 * writing its memory, system calls made inside it, registers put back.
 *
 * Room rule: only attach/inject/ and attach/features/ (and tracee.c, which
 * implements it) include this header; every change they make to the target
 * is undone by detach or by the watchdog.  tests/layers/check.py fails when
 * any other file includes it or calls these functions.  Reading the target
 * (tracee.h) is open to target/ itself and to inject/ and features/.
 */
#ifndef UBT_TRACEE_WRITE_H
#define UBT_TRACEE_WRITE_H

#include "attach/target/tracee.h"

int tracee_write(struct tracee *t, uint64_t addr, const void *buf, size_t len);

/*
 * Puts thread i's registers (t->threads[i].regs, changed by the caller)
 * back now rather than at release: a pc moved out of bytes about to be
 * patched must be in place before they are, or a ubt killed in between
 * leaves the kernel to release the thread into the middle of a jump.
 */
int tracee_put_regs(struct tracee *t, int i);

/*
 * Executes system call nr with up to 6 arguments in the first stopped
 * thread, returning the kernel's result (which may be -errno) in *ret.
 * The thread runs a 4-byte stub `syscall; jmp .` placed where no code of
 * the process is (past the end of an executable segment, inside its last
 * page), stopped at the syscall's entry and exit with PTRACE_SYSCALL: no
 * single-step, so a thread whose tracer dies mid-call spins in the stub
 * instead of taking a fatal SIGTRAP or running on with our registers.
 * The thread's registers are restored afterwards, so an interrupted
 * syscall of its own restarts correctly.  Requires tracee_stop_all().
 */
int tracee_syscall(struct tracee *t, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		   uint64_t a5, uint64_t a6, int64_t *ret);

/*
 * For a process whose previous tracer died: puts back a thread it left
 * inside a remote syscall (per t->rescue) and the stub's bytes.  Requires
 * tracee_stop_all().  Sets t->rescue.done and .result when that call was
 * made (the thread went on and finished it after its tracer died), so the
 * caller can account for what it created or removed.
 */
void tracee_rescue_apply(struct tracee *t);

/*
 * For a command whose tracer died while it ran to its stop point
 * (tracee_spawn): puts the stop point's bytes and a thread stopped in the stub
 * back.  Requires tracee_stop_all().
 */
void tracee_spawn_rescue(struct tracee *t);

/*
 * Copies len bytes to a scratch area below the stopped thread's stack (below
 * the red zone) and returns its address, for remote syscall arguments such
 * as path strings.  Valid until the next tracee_scratch() or release.
 */
int tracee_scratch(struct tracee *t, const void *data, size_t len, uint64_t *addr);

#endif
