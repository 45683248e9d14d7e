/*
 * tracee_internal.h - what tracee.c shares with spawn.c: the thread list
 * of a struct tracee and waiting for a thread's ptrace-stop.  Private to
 * attach/target/.
 */
#ifndef UBT_ATTACH_TARGET_TRACEE_INTERNAL_H
#define UBT_ATTACH_TARGET_TRACEE_INTERNAL_H

#include "attach/target/tracee.h"

/* What waiting for one thread's stop found. */
enum {
	WS_STOPPED, /* in a ptrace-stop, registers readable */
	WS_GONE,    /* the thread exited */
};

/* The index of thread tid in t->threads, added if new. */
int tracee_add_thread(struct tracee *t, pid_t tid);
void tracee_remove_thread(struct tracee *t, int i);
/* Waits until thread i is in a ptrace-stop: WS_STOPPED, WS_GONE or -errno. */
int tracee_wait_stop(struct tracee *t, int i);
/* Every thread's registers into t->threads[].regs (gone threads removed): 0 or -errno. */
int tracee_read_all_regs(struct tracee *t);

#endif
