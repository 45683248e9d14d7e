/*
 * tracee.h - controlling the target process through ptrace.
 *
 * Room rule (attach/target/, see target.h): ptrace and /proc, nothing of
 * probes.  This header stops, reads and releases the target; what changes
 * it (memory writes, remote system calls) is in tracee_write.h, which only
 * attach/inject/ and attach/features/ may include.
 *
 * Everything attach does to another process goes through here: stopping
 * every thread, reading and writing its memory, issuing system calls
 * inside it, starting a command so that probes are live before its main()
 * runs, and letting it go again.  Nothing here calls into the target's libc
 * or dynamic loader: remote system calls execute an existing `syscall`
 * instruction of the target (from the vDSO or libc) with the registers of a
 * stopped thread, which are restored afterwards.
 *
 * Errors: functions return 0 or -errno and print nothing; the caller turns
 * them into user-facing messages (tracee_strerror_hint() helps).
 */
#ifndef UBT_TRACEE_H
#define UBT_TRACEE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/user.h>

struct tracee_thread {
	pid_t tid;
	struct user_regs_struct regs; /* as read when the thread stopped */
	bool regs_dirty;              /* regs were changed; written back on release */
	int pending_sig;              /* signal that arrived while stopping; delivered on release */
	bool in_signal_stop;          /* still in that signal's delivery-stop (detach delivers it) */
	bool refault;		      /* that signal is the fault of the instruction at pc */
	bool gone;                    /* tracee_release: died while stopped, could not be detached */
};

/*
 * Where a remote system call stands.  ubt keeps this in memory shared with
 * its watchdog (watchdog.c): if ubt dies while a thread runs our syscall,
 * the thread is left spinning in the stub (`syscall; jmp .`, written into
 * bytes of an executable mapping that no code uses) and the watchdog puts
 * its registers and signal mask back, then the stub's bytes.
 */
struct tracee_rescue {
	volatile int active;          /* tid is running a remote syscall */
	pid_t tid;
	volatile uint32_t seq;        /* raised as each remote syscall begins */
	long nr;                      /* the last one begun, and its first argument */
	uint64_t a1;
	/* that call was made and returned result: set by tracee_syscall(), or
	 * found by tracee_rescue_apply() when the tracer died during the call */
	volatile int done;
	int64_t result;
	struct user_regs_struct regs; /* its registers before */
	uint64_t sigmask;             /* its signal mask before */
	uint64_t stub;                /* address of the stub */
	uint8_t stub_orig[4];         /* the bytes the stub replaced */
	volatile int stub_written;
};

/*
 * tracee_spawn(): the stop point (the loader's _dl_debug_state, or the
 * entry point) carries a stub while the command runs to it (tracee.c).
 * In the tracee, so in memory shared with the watchdog.
 */
#define ENTRY_STUB_LEN 10
struct tracee_entry {
	volatile int active; /* the stub may be at entry */
	uint64_t entry;
	uint8_t orig[ENTRY_STUB_LEN];
};

struct tracee {
	pid_t pid;
	int mem_fd;                   /* /proc/PID/mem, O_RDWR */
	int pidfd;                    /* from tracee_open: tells the exit, and its status */
	bool exited;                  /* tracee_wait_exit() saw the process end */
	int exit_status;              /* then: as from waitpid(), -1 if unknown */
	/*
	 * int3s whose SIGTRAP the tracer's own code in the process handles
	 * (ubt's int3 sites), or NULL.  A thread seen in such a SIGTRAP's
	 * delivery-stop goes straight back to the int3 without the signal:
	 * a signal held in a delivery-stop is lost if the tracer dies (the
	 * kernel detaches the thread without it), and the thread would then
	 * go on in the middle of an instruction.  At the int3 again it traps
	 * again, or runs the original instruction once that is restored.
	 */
	bool (*is_trap)(void *ctx, uint64_t addr);
	void *trap_ctx;
	bool stopped;                 /* every thread is stopped under ptrace */
	bool one;		      /* ...or only the one listed (tracee_stop_one) */
	bool is_child;                /* started by us with tracee_spawn() */
	struct tracee_thread *threads;
	int nthreads;
	struct tracee_rescue rescue;  /* remote syscall state; shared with the watchdog
				       * when struct tracee lives in shared memory */
	struct tracee_entry spawn;    /* tracee_spawn() in progress */
};

/*
 * Opens the process (checks it exists; opens /proc/PID/mem) without
 * stopping it.  -ESRCH if there is no such process.
 */
int tracee_open(struct tracee *t, pid_t pid);

/*
 * Starts argv[0] (searched in PATH) with argv, stopped before any
 * constructor runs: in the dynamic loader once every library is mapped
 * (its last start-up _dl_debug_state()), a static program at its ELF
 * entry point (tracee.c, spawn_stop_point).  The process is
 * left stopped as by tracee_stop_all().  t may already be in memory shared
 * with a watchdog: t->pid and t->spawn are set as soon as they are known.
 */
int tracee_spawn(struct tracee *t, char *const argv[]);

/*
 * Stops every thread with PTRACE_SEIZE + PTRACE_INTERRUPT, rescanning
 * /proc/PID/task until no new thread appears, and reads each thread's
 * registers.  Threads created while stopped are caught through
 * PTRACE_O_TRACECLONE.  -EPERM (with errno detail) when ptrace is refused.
 */
int tracee_stop_all(struct tracee *t);

/*
 * Stops one thread only, a sleeping one where there is one (else the
 * leader), for remote system calls while the others run on: enough to
 * map and fill memory the program does not use yet, never to patch its
 * code.  t->stopped is set, and t->one; tracee_release() lets it go.
 */
int tracee_stop_one(struct tracee *t);

/*
 * Writes back changed registers and detaches every thread; the process
 * runs on as if nothing happened.
 */
int tracee_release(struct tracee *t);

/* Closes fds; the process must be released. */
void tracee_close(struct tracee *t);

/* Memory of the target, through /proc/PID/mem (works on read-only text);
 * tracee_write() is in tracee_write.h. */
int tracee_read(struct tracee *t, uint64_t addr, void *buf, size_t len);

/*
 * After release: waits for the process to exit, up to timeout_ms (-1 =
 * forever).  Returns 1 if it exited, 0 on timeout.  Uses a pidfd, so it
 * works for -p targets.  *status: how it ended, as from waitpid(), for a
 * child of ours and, where the kernel tells (PIDFD_INFO_EXIT, Linux >=
 * 6.15), for any process; else -1.
 */
int tracee_wait_exit(struct tracee *t, int timeout_ms, int *status);

/* A hint for an errno from tracee_open/stop_all, or NULL. */
const char *tracee_strerror_hint(int err);

#endif
