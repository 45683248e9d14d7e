/*
 * tracee.c - controlling the target process through ptrace (attach stage).
 *
 * Attach (src/attach) stops the target here before it maps the runtime and
 * patches probe sites, and lets it go again afterwards; `ubt -c CMD` starts
 * the command here, stopped before any constructor runs (spawn_stop_point).
 * The rules:
 *
 *  - Nothing here calls into the target's libc or dynamic loader.  A remote
 *    system call points a stopped thread at an existing `syscall`
 *    instruction (from the vDSO, else libc), single-steps it and restores
 *    the thread's registers.  orig_rax is set to -1 for the step so that the
 *    kernel's restart logic does not rewind RIP; the thread's own
 *    interrupted syscall (say clock_nanosleep, rax = -ERESTART_RESTARTBLOCK)
 *    restarts from the restored registers when the thread is released.
 *
 *  - Threads are stopped with PTRACE_SEIZE + PTRACE_INTERRUPT, never with
 *    SIGSTOP, so the target sees no job-control stop.  A signal that shows
 *    up while we wait for a thread to stop is not lost: the thread is left
 *    in that signal-delivery-stop and PTRACE_DETACH delivers the signal,
 *    with its original siginfo, on release (or, if a remote syscall had to
 *    resume the thread meanwhile, it is sent again with tgkill).
 *
 *  - Never PTRACE_O_EXITKILL: a `-c` child must outlive a crashed ubt.
 *
 * Memory goes through /proc/PID/mem, which can write read-only text while
 * we are the process's tracer.
 */
#include "attach/target/target.h"
#include "attach/target/tracee.h"
#include "attach/target/tracee_internal.h"
#include "attach/target/tracee_write.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int tracee_open(struct tracee *t, pid_t pid)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->mem_fd = -1;
	t->pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	if (pid <= 0)
		return -ESRCH;
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	t->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (t->mem_fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return 0;
}

/* Reads or writes all of [addr, addr + len) through /proc/PID/mem. */
static int mem_io(struct tracee *t, uint64_t addr, void *buf, size_t len, bool write)
{
	char *p = buf;
	while (len) {
		ssize_t n = write ? pwrite(t->mem_fd, p, len, (off_t)addr)
				  : pread(t->mem_fd, p, len, (off_t)addr);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		addr += n;
		len -= n;
	}
	return 0;
}

int tracee_read(struct tracee *t, uint64_t addr, void *buf, size_t len)
{
	return mem_io(t, addr, buf, len, false);
}

int tracee_write(struct tracee *t, uint64_t addr, const void *buf, size_t len)
{
	return mem_io(t, addr, (void *)buf, len, true);
}

static int find_thread(struct tracee *t, pid_t tid)
{
	for (int i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return i;
	return -1;
}

int tracee_add_thread(struct tracee *t, pid_t tid)
{
	int i = find_thread(t, tid);
	if (i >= 0)
		return i;
	t->threads = xrealloc(t->threads, (t->nthreads + 1) * sizeof(*t->threads));
	memset(&t->threads[t->nthreads], 0, sizeof(*t->threads));
	t->threads[t->nthreads].tid = tid;
	return t->nthreads++;
}

void tracee_remove_thread(struct tracee *t, int i)
{
	memmove(&t->threads[i], &t->threads[i + 1], (t->nthreads - i - 1) * sizeof(*t->threads));
	t->nthreads--;
}

/*
 * Waits until thread i is in a ptrace-stop.  Any stop will do, not only the
 * PTRACE_EVENT_STOP we asked for: the kernel drops a pending
 * PTRACE_INTERRUPT when the thread enters another trap first (ptrace_stop()
 * "any trap clears pending STOP trap"), so resuming it from there would let
 * it run on unstopped.  So a clone event is a stop too (the new thread is
 * added; it starts with its own PTRACE_EVENT_STOP, waited for by the
 * caller's loop), and a signal-delivery-stop is kept with its signal
 * recorded, to be delivered by PTRACE_DETACH on release.
 */
static bool back_to_trap(struct tracee *t, pid_t tid);

/* The thread is gone or a zombie (it may never report to its tracer then). */
static bool thread_dead(pid_t pid, pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * waitpid() for one traced thread that never blocks for good: a thread of
 * a process that is dying (killed, or crashing in another thread) may
 * stay a zombie without ever reporting to us, and a tracer must not hang
 * on it (the watchdog would then never restore anything).
 */
static pid_t wait_thread(pid_t pid, pid_t tid, int *st)
{
	long us = 5;
	for (;;) {
		pid_t r = waitpid(tid, st, __WALL | WNOHANG);
		if (r != 0)
			return r;
		if (thread_dead(pid, tid)) {
			errno = ECHILD;
			return -1;
		}
		struct timespec ts = {0, us * 1000};
		nanosleep(&ts, NULL);
		us = us < 1000 ? us * 2 : us;
	}
}

int tracee_wait_stop(struct tracee *t, int i)
{
	pid_t tid = t->threads[i].tid;
	for (;;) {
		int st;
		pid_t r = wait_thread(t->pid, tid, &st);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == ECHILD ? WS_GONE : -errno;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return WS_GONE;
		if (!WIFSTOPPED(st))
			continue;
		int event = st >> 16;
		if (event == PTRACE_EVENT_CLONE) {
			unsigned long msg = 0;
			if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
				tracee_add_thread(t, (pid_t)msg);
		} else if (event == 0 && WSTOPSIG(st) == SIGTRAP && back_to_trap(t, tid)) {
			continue; /* it stops again, at the int3, without the signal */
		} else if (event == 0) {
			siginfo_t si;
			int sig = WSTOPSIG(st);
			t->threads[i].pending_sig = sig;
			t->threads[i].in_signal_stop = true;
			t->threads[i].refault =
			    (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) &&
			    ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 && si.si_code > 0;
		}
		return WS_STOPPED;
	}
}

/*
 * tid is in a SIGTRAP delivery-stop.  If the trap is one of the tracer's
 * int3s (t->is_trap), the thread is put back on the int3 first (the
 * registers now hold that: if we die from here on, the lost signal costs
 * nothing), then leaves the stop without the signal: a trap stop asked
 * for now comes first when it goes on, so it stops again at once, before
 * any instruction of its own.  true if done (the caller waits again).
 */
static bool back_to_trap(struct tracee *t, pid_t tid)
{
	struct user_regs_struct r;
	if (!t->is_trap || ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
		return false;
	if (t->is_trap(t->trap_ctx, r.rip - 1)) {
		r.rip--;
		if (ptrace(PTRACE_SETREGS, tid, NULL, &r) < 0)
			return false;
	} else if (!t->is_trap(t->trap_ctx, r.rip)) { /* (on it already: take_queued_trap) */
		return false;
	}
	return ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == 0 &&
	       ptrace(PTRACE_CONT, tid, NULL, NULL) == 0;
}

/* "State:\tZ" or a tracer of its own decides what an EPERM from SEIZE means. */
static int thread_status(pid_t pid, pid_t tid, bool *zombie, pid_t *tracer)
{
	char state[2] = ""; /* "State:\tZ (zombie)" */
	int err = proc_status_text(pid, tid, "State", state, sizeof(state));
	if (err)
		return err;
	*zombie = state[0] == 'Z' || state[0] == 'X';
	*tracer = proc_tracer_pid(pid, tid);
	return 0;
}

/* Seizes tid and asks it to stop; the caller waits. 1 = skip (exited). */
static int seize_thread(struct tracee *t, pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACECLONE) < 0) {
		int err = errno;
		bool zombie = false;
		pid_t tracer = 0;
		if (err == ESRCH)
			return 1;
		if (err != EPERM || thread_status(t->pid, tid, &zombie, &tracer) < 0)
			return err == EPERM && kill(tid, 0) < 0 ? 1 : -err;
		if (zombie && tracer == getpid()) {
			/* one of ours that reap_gone() gave up on (it took more
			 * than its 100 ms to die, on a loaded machine): only its
			 * tracer can reap it, and until then it stays listed */
			int st;
			waitpid(tid, &st, __WALL | WNOHANG);
		}
		if (zombie)
			return 1; /* an exited thread group leader stays listed */
		if (tracer != getpid())
			return -EPERM;
		/* Already ours (auto-attached clone): interrupt it like the others. */
	}
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 && errno != ESRCH)
		return -errno;
	tracee_add_thread(t, tid);
	return 0;
}

/* One pass over /proc/PID/task; *added counts the threads newly seized. */
static int seize_new_threads(struct tracee *t, int *added)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	DIR *d = opendir(path);
	*added = 0;
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	int err = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		pid_t tid = atoi(de->d_name);
		if (find_thread(t, tid) >= 0)
			continue;
		int r = seize_thread(t, tid);
		if (r < 0) {
			err = r;
			break;
		}
		if (r == 0)
			(*added)++;
	}
	closedir(d);
	return err;
}

/*
 * Waits for threads [first, nthreads) to stop; clones found meanwhile are
 * appended.  The thread group leader comes last: when the process dies
 * (a target killed by a fault while ubt seized its threads), the kernel
 * reports the leader's exit only after every other thread was reaped, and
 * those are traced zombies that only this loop reaps.  Waiting for the
 * leader first would wait for ever.
 */
static int wait_all_from(struct tracee *t, int first)
{
	for (int leader = 0; leader < 2; leader++)
		for (int i = first; i < t->nthreads; i++) {
			if ((t->threads[i].tid == t->pid) != leader)
				continue;
			int r = tracee_wait_stop(t, i);
			if (r < 0)
				return r;
			if (r == WS_GONE)
				tracee_remove_thread(t, i--);
		}
	return 0;
}

/*
 * An int3 executed just before PTRACE_INTERRUPT took effect leaves its
 * SIGTRAP queued: the kernel takes the interrupt's trap stop before it
 * dequeues signals (get_signal()).  Released like that, the thread would
 * take the SIGTRAP later, when the handler that expected it (ubt's
 * runtime) may be gone, and die of it.  So a thread just past one of the
 * tracer's int3s (t->is_trap) with an int3's SIGTRAP (si_code SI_KERNEL)
 * in its own queue is put back on the int3 and resumed until it dequeues
 * the signal (synchronous signals come first), which tracee_wait_stop() then
 * cancels (back_to_trap).  No user code runs meanwhile.
 */
static void take_queued_trap(struct tracee *t, int i)
{
	struct __ptrace_peeksiginfo_args a = {.off = 0, .flags = 0, .nr = 8};
	siginfo_t q[8];
	struct user_regs_struct r;
	pid_t tid = t->threads[i].tid;
	int n = (int)ptrace(PTRACE_PEEKSIGINFO, tid, &a, q);
	bool trap = false;
	for (int k = 0; k < n && !trap; k++)
		trap = q[k].si_signo == SIGTRAP && q[k].si_code == SI_KERNEL;
	if (!trap || ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
		return;
	/* (another int3's SIGTRAP stays queued, for its own handler) */
	if (!t->is_trap || !t->is_trap(t->trap_ctx, r.rip - 1))
		return;
	/* back on the int3 before it goes on, so that the delivery-stop never
	 * holds the thread past the int3 (its signal would be lost, and the
	 * thread with it, if we died there) */
	r.rip--;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r) == 0 && ptrace(PTRACE_CONT, tid, NULL, NULL) == 0)
		tracee_wait_stop(t, i);
}

int tracee_read_all_regs(struct tracee *t)
{
	for (int i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		if (ptrace(PTRACE_GETREGS, th->tid, NULL, &th->regs) < 0) {
			if (errno != ESRCH)
				return -errno;
			tracee_remove_thread(t, i--);
		}
	}
	return t->nthreads ? 0 : -ESRCH;
}

/*
 * A few blocking calls end with EINTR when their thread is stopped, even
 * without a signal (signal(7), "Interruption of system call and library
 * functions by stop signals"): epoll_wait(2) and epoll_pwait(2),
 * sigwaitinfo(2) and sigtimedwait(2), semop(2) and semtimedop(2), and the
 * kernel AIO and io_uring waits (io_getevents, io_uring_enter with
 * IORING_ENTER_GETEVENTS) that SPDK and qemu block in.  Our
 * PTRACE_INTERRUPT is such a stop, so attaching or detaching would make a
 * program's `epoll_wait(ep, ev, n, -1)` or `sigwaitinfo` return EINTR,
 * which kernel bpftrace never causes, and a program that takes EINTR for
 * "a signal came" would act on a signal that never came.
 *
 * The thread is stopped before the kernel handles its pending work, with
 * the call's -EINTR in rax and its number in orig_rax.  For a wait without
 * a timeout, rax becomes -ERESTARTNOHAND, the code poll(2) and pause(2)
 * return: if a signal with a handler is delivered when the thread goes on,
 * the kernel turns it into EINTR, exactly as without us; otherwise it
 * makes the same call again with the same arguments, which for a wait
 * without a timeout is the same wait.  A wait with a timeout keeps its
 * EINTR: made again, it would wait longer than asked (docs/safety.md).
 */
#define ERESTARTNOHAND 514

static bool stop_ended_wait(const struct user_regs_struct *r)
{
	if ((int64_t)r->rax != -EINTR)
		return false;
	switch ((long)r->orig_rax) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
		return (int)r->r10 < 0; /* timeout in ms; negative: none */
	case SYS_epoll_pwait2:
	case SYS_semtimedop:
		return r->r10 == 0; /* struct timespec *; NULL: none */
	case SYS_rt_sigtimedwait:
		return r->rdx == 0;
	case SYS_semop:
		return true;
	case SYS_io_getevents:
	case SYS_io_pgetevents:
		return r->r8 == 0; /* struct timespec *; NULL: none */
	case SYS_io_uring_enter:
		/* waiting for completions, submitting nothing (a restart would
		 * submit what another thread queued meanwhile), no timeout
		 * (IORING_ENTER_EXT_ARG may carry one) */
		return r->rsi == 0 && (r->r10 & IORING_ENTER_GETEVENTS) &&
		       !(r->r10 & IORING_ENTER_EXT_ARG);
	default:
		return false;
	}
}

static void keep_waits_waiting(struct tracee *t)
{
	for (int i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		if (!stop_ended_wait(&th->regs))
			continue;
		th->regs.rax = (uint64_t)-ERESTARTNOHAND;
		/* now, not on release: if ubt dies before, the call still restarts */
		tracee_put_regs(t, i);
	}
}

/* The threads in the list are stopped: their registers read, their waits kept. */
static int stopped_now(struct tracee *t, int err)
{
	for (int i = 0; !err && i < t->nthreads; i++)
		if (!t->threads[i].in_signal_stop)
			take_queued_trap(t, i);
	if (!err)
		err = tracee_read_all_regs(t);
	t->stopped = true; /* after an error too: every thread listed is stopped */
	if (err) {
		tracee_release(t);
		return err;
	}
	keep_waits_waiting(t);
	return 0;
}

int tracee_stop_all(struct tracee *t)
{
	if (t->stopped)
		return t->one ? -EBUSY : 0;
	int err = 0;
	for (;;) {
		int first = t->nthreads, added;
		err = seize_new_threads(t, &added);
		/* Even after an error: a seized thread must be stopped to be detached. */
		int werr = wait_all_from(t, first);
		if (!err)
			err = werr;
		if (err || (added == 0 && t->nthreads == first))
			break;
	}
	return stopped_now(t, err);
}

/*
 * Is thread tid in a wait that a stop ends with EINTR when it has a
 * timeout (stop_ended_wait: without one it is restarted)?  From
 * /proc/PID/task/TID/syscall: "232 0x3 ..." while in epoll_wait.
 */
static bool in_timed_wait(pid_t pid, pid_t tid)
{
	char path[80], buf[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool got = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	long nr = got ? strtol(buf, NULL, 10) : -1;
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
	case SYS_rt_sigtimedwait:
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_io_getevents:
	case SYS_io_pgetevents:
	case SYS_io_uring_enter:
		return true;
	default:
		return false;
	}
}

static bool listed_tid(const pid_t *v, int n, pid_t tid)
{
	for (int i = 0; i < n; i++)
		if (v[i] == tid)
			return true;
	return false;
}

/*
 * The thread tracee_stop_one() takes: a sleeping one costs the program
 * nothing while it stands (a busy one is a reactor losing its CPU), unless
 * its wait would end with EINTR (a timed epoll_wait: one more than the
 * attach's own stop gives it); the leader among those, else the first;
 * else the leader, else any; never one in skip[] (another tracer's).
 */
static pid_t quiet_thread(struct tracee *t, const pid_t *skip, int nskip)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	DIR *d = opendir(path);
	pid_t sleeping = 0, other = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		pid_t tid = atoi(de->d_name);
		char state[2] = "";
		if (listed_tid(skip, nskip, tid) ||
		    proc_status_text(t->pid, tid, "State", state, sizeof(state)) ||
		    state[0] == 'Z' || state[0] == 'X')
			continue;
		if (state[0] == 'S' && (!sleeping || tid == t->pid) && !in_timed_wait(t->pid, tid))
			sleeping = tid;
		if (!other || tid == t->pid)
			other = tid;
	}
	if (d)
		closedir(d);
	return sleeping ? sleeping : other;
}

int tracee_stop_one(struct tracee *t)
{
	if (t->stopped)
		return -EBUSY;
	int err = -ESRCH, nskip = 0;
	pid_t skip[8];
	/* (a clone it was making joins the list, stopped too: harmless) */
	for (int tries = 0; tries < 8 && !t->nthreads; tries++) {
		pid_t tid = quiet_thread(t, skip, nskip);
		int r = tid ? seize_thread(t, tid) : err;
		if (r == 1) /* exited meanwhile: another */
			continue;
		if (r == -EPERM && tid && nskip < (int)ARRAY_SIZE(skip)) {
			/* another tracer's, or not ours to trace: another */
			skip[nskip++] = tid;
			err = r;
			continue;
		}
		err = r < 0 ? r : wait_all_from(t, 0);
		if (err || !tid)
			break;
	}
	if (!err && !t->nthreads)
		err = -ESRCH;
	t->one = true;
	return stopped_now(t, err);
}

static void remove_stub(struct tracee *t);

/*
 * Threads that could not be detached because they died while stopped (a
 * fatal signal delivered by the release of another thread, a SIGKILL):
 * each is a zombie that only its tracer can reap, and until it is reaped
 * the process never ends, its pidfd never fires and ubt waited for ever
 * (a target crashing while ubt held its threads).  Reaped here, waiting at
 * most 100 ms for each to finish dying; not the leader of ubt's own child,
 * whose exit status tracee_wait_exit() collects.
 */
static void reap_gone(struct tracee *t)
{
	for (int i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		if (!th->gone || (t->is_child && th->tid == t->pid))
			continue;
		int st;
		for (int k = 0; k < 100; k++) {
			pid_t r = waitpid(th->tid, &st, __WALL | WNOHANG);
			if (r != 0 && !(r < 0 && errno == EINTR))
				break;
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
}

int tracee_put_regs(struct tracee *t, int i)
{
	struct tracee_thread *th = &t->threads[i];
	if (ptrace(PTRACE_SETREGS, th->tid, NULL, &th->regs) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}

int tracee_release(struct tracee *t)
{
	if (t->stopped)
		remove_stub(t);
	int err = 0;
	for (int i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		if (th->regs_dirty && ptrace(PTRACE_SETREGS, th->tid, NULL, &th->regs) < 0 &&
		    errno != ESRCH && !err)
			err = -errno;
		long sig = th->in_signal_stop ? th->pending_sig : 0;
		th->gone = false;
		if (ptrace(PTRACE_DETACH, th->tid, NULL, (void *)sig) < 0) {
			if (errno != ESRCH && !err)
				err = -errno;
			th->gone = errno == ESRCH;
		}
		if (th->pending_sig && !th->in_signal_stop)
			syscall(SYS_tgkill, t->pid, th->tid, th->pending_sig);
	}
	reap_gone(t);
	free(t->threads);
	t->threads = NULL;
	t->nthreads = 0;
	t->stopped = false;
	t->one = false;
	return err;
}

void tracee_close(struct tracee *t)
{
	if (t->stopped)
		tracee_release(t);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->mem_fd = t->pidfd = -1;
	free(t->threads);
	t->threads = NULL;
	t->nthreads = 0;
}

/*
 * The thread used for remote syscalls and scratch memory: the first one not
 * holding a signal in its delivery-stop (resuming that one would drop the
 * signal's siginfo), else the first.
 */
static struct tracee_thread *work_thread(struct tracee *t)
{
	if (!t->stopped || t->nthreads == 0)
		return NULL;
	for (int i = 0; i < t->nthreads; i++)
		if (!t->threads[i].in_signal_stop)
			return &t->threads[i];
	return &t->threads[0];
}

/*
 * The stub `syscall; jmp .` goes where no code of the process lies: past
 * the end of an executable PT_LOAD segment, in the rest of its last page
 * (mapped executable because mappings are whole pages, never reached by
 * the program's own control flow).  The main executable first, then any
 * executable file mapping.
 */
static const uint8_t stub_code[4] = {0x0f, 0x05, 0xeb, 0xfe};

static int stub_in_file(struct tracee *t, const struct proc_map *maps, int n,
			const struct proc_map *m, uint64_t *addr)
{
	struct ef_file f;
	char *path = xasprintf("/proc/%d/root%s", (int)t->pid, m->path);
	int err = ef_open(&f, path);
	free(path);
	if (err)
		return err;
	uint64_t bias;
	err = proc_load_bias(maps, n, &f, &bias);
	size_t nph = 0;
	if (!err && elf_getphdrnum(f.elf, &nph))
		err = -EINVAL;
	for (size_t i = 0; !err && i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f.elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		uint64_t end = ALIGN_UP(bias + ph.p_vaddr + ph.p_memsz, 4ull);
		uint64_t page_end = ALIGN_UP(end, 4096ull);
		if (page_end - end >= sizeof(stub_code) && end >= m->start && end + 4 <= m->end) {
			*addr = end;
			ef_close(&f);
			return 0;
		}
	}
	ef_close(&f);
	return err ? err : -ENOSPC;
}

static int find_stub_site(struct tracee *t, uint64_t *addr)
{
	struct proc_map *maps;
	int n, err = proc_maps_read(t->pid, &maps, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (int i = 0; i < n && err; i++)
		if (maps[i].perms[2] == 'x' && maps[i].path[0] == '/')
			err = stub_in_file(t, maps, n, &maps[i], addr);
	proc_maps_free(maps, n);
	return err;
}

/* Writes the stub once per stop; tracee_release() takes it out again. */
static int ensure_stub(struct tracee *t)
{
	struct tracee_rescue *r = &t->rescue;
	if (r->stub_written)
		return 0;
	int err = r->stub ? 0 : find_stub_site(t, &r->stub);
	if (!err)
		err = tracee_read(t, r->stub, r->stub_orig, sizeof(r->stub_orig));
	if (err)
		return err;
	r->stub_written = 1; /* before the write: the watchdog may restore at any point */
	__sync_synchronize();
	return tracee_write(t, r->stub, stub_code, sizeof(stub_code));
}

static void remove_stub(struct tracee *t)
{
	struct tracee_rescue *r = &t->rescue;
	if (!r->stub_written)
		return;
	uint8_t now[4];
	if (!tracee_read(t, r->stub, now, sizeof(now)) && !memcmp(now, stub_code, sizeof(now)))
		tracee_write(t, r->stub, r->stub_orig, sizeof(r->stub_orig));
	r->stub_written = 0;
}

/*
 * Resumes th with PTRACE_SYSCALL until the exit of the syscall it is about
 * to make (from the stub), and returns its registers there.  Signals are
 * blocked meanwhile (see tracee_syscall), so another stop is rare; one
 * that comes is kept for release.
 */
static int run_syscall(struct tracee *t, struct tracee_thread *th, struct user_regs_struct *out)
{
	int stops = 0;
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACESYSGOOD;
	if (ptrace(PTRACE_SETOPTIONS, th->tid, NULL, (void *)opts) < 0)
		return -errno;
	int err = 0;
	while (!err && stops < 2) {
		if (ptrace(PTRACE_SYSCALL, th->tid, NULL, NULL) < 0) {
			err = -errno;
			break;
		}
		/* Its signal, if any, is now resent on release; not a fault of
		 * its instruction, which runs again then and faults again with
		 * the kernel's siginfo (resent by tgkill it would carry ours: a
		 * program's SIGSEGV handler saw no fault address of its own). */
		if (th->in_signal_stop && th->refault)
			th->pending_sig = 0;
		th->in_signal_stop = false;
		int st;
		pid_t r;
		do
			r = wait_thread(t->pid, th->tid, &st);
		while (r < 0 && errno == EINTR);
		if (r < 0) {
			err = -errno;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			err = -ESRCH;
			break;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), event = st >> 16;
		if (sig == (SIGTRAP | 0x80)) {
			stops++;
			continue;
		}
		if (event == 0) { /* a signal (plain SIGTRAP too: syscall stops have 0x80) */
			/* Keep it: held for release, or queued again right away. */
			if (th->pending_sig == 0)
				th->pending_sig = sig;
			else
				syscall(SYS_tgkill, t->pid, th->tid, sig);
		}
	}
	if (!err && ptrace(PTRACE_GETREGS, th->tid, NULL, out) < 0)
		err = -errno;
	opts = PTRACE_O_TRACECLONE;
	if (ptrace(PTRACE_SETOPTIONS, th->tid, NULL, (void *)opts) < 0 && !err)
		err = -errno;
	return err;
}

/*
 * While the thread runs our syscall, every signal but SIGTRAP is blocked
 * with PTRACE_SETSIGMASK: a signal arriving then would otherwise stop the
 * thread in a signal-delivery-stop before the syscall.  Blocked, it stays
 * queued and is delivered after release.  Before anything changes, the
 * thread's registers and mask go to t->rescue (see struct tracee_rescue).
 */
int tracee_syscall(struct tracee *t, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		   uint64_t a5, uint64_t a6, int64_t *ret)
{
	struct tracee_thread *th = work_thread(t);
	struct tracee_rescue *rs = &t->rescue;
	if (!th)
		return -EINVAL;
	int err = ensure_stub(t);
	if (err)
		return err;
	uint64_t old_mask, mask = ~(1ULL << (SIGTRAP - 1));
	if (ptrace(PTRACE_GETSIGMASK, th->tid, (void *)sizeof(old_mask), &old_mask) < 0)
		return -errno;
	rs->done = 0;
	__sync_synchronize();
	rs->seq++;
	rs->tid = th->tid;
	rs->nr = nr;
	rs->a1 = a1;
	rs->regs = th->regs;
	rs->sigmask = old_mask;
	__sync_synchronize();
	rs->active = 1;
	if (ptrace(PTRACE_SETSIGMASK, th->tid, (void *)sizeof(mask), &mask) < 0) {
		rs->active = 0;
		return -errno;
	}
	struct user_regs_struct r = th->regs, out;
	r.rip = rs->stub;
	r.rax = nr;
	r.orig_rax = -1;
	r.rdi = a1;
	r.rsi = a2;
	r.rdx = a3;
	r.r10 = a4;
	r.r8 = a5;
	r.r9 = a6;
	if (ptrace(PTRACE_SETREGS, th->tid, NULL, &r) < 0)
		err = -errno;
	if (!err)
		err = run_syscall(t, th, &out);
	if (!err) { /* made: what it returned counts even if we die before the end */
		rs->result = (int64_t)out.rax;
		__sync_synchronize();
		rs->done = 1;
	}
	if (ptrace(PTRACE_SETREGS, th->tid, NULL, &th->regs) < 0 && !err)
		err = -errno;
	if (ptrace(PTRACE_SETSIGMASK, th->tid, (void *)sizeof(old_mask), &old_mask) < 0 && !err)
		err = -errno;
	rs->active = 0; /* the thread has its own registers again (or is gone) */
	if (err)
		return err;
	*ret = (int64_t)out.rax;
	return 0;
}

void tracee_rescue_apply(struct tracee *t)
{
	struct tracee_rescue *rs = &t->rescue;
	if (rs->active) {
		for (int i = 0; i < t->nthreads; i++) {
			struct tracee_thread *th = &t->threads[i];
			if (th->tid != rs->tid)
				continue;
			/* spinning on the stub's `jmp .`: the syscall ran (whatever
			 * stop ubt died in, the released thread finished it) */
			if (!rs->done && rs->stub && th->regs.rip == rs->stub + 2) {
				rs->done = 1;
				rs->result = (int64_t)th->regs.rax;
			}
			th->regs = rs->regs;
			th->regs_dirty = true;
			ptrace(PTRACE_SETSIGMASK, th->tid, (void *)sizeof(rs->sigmask), &rs->sigmask);
		}
		rs->active = 0;
	}
	remove_stub(t);
}

int tracee_scratch(struct tracee *t, const void *data, size_t len, uint64_t *addr)
{
	struct tracee_thread *th = work_thread(t);
	if (!th)
		return -EINVAL;
	/* 128 bytes of red zone, plus room in case the thread is in a leaf's prologue. */
	uint64_t a = (th->regs.rsp - 128 - 256 - len) & ~(uint64_t)15;
	int err = tracee_write(t, a, data, len);
	if (err)
		return err;
	*addr = a;
	return 0;
}

/*
 * struct pidfd_info of PIDFD_GET_INFO (Linux >= 6.13; exit_code, the wait
 * status, with PIDFD_INFO_EXIT since 6.15), not in older headers.
 */
struct pidfd_info_v0 {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define UBT_PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info_v0)
#define UBT_PIDFD_INFO_EXIT (1ull << 3)

/*
 * How the process ended, as waitpid() says it, or -1 when nobody can tell.
 * Not our child: a zombie shows it as the last field of /proc/PID/stat
 * (exit_code); once its parent reaped it, the pidfd (Linux >= 6.15).
 */
static int exit_status(struct tracee *t, int pidfd)
{
	int st = -1;
	if (t->is_child) {
		pid_t r;
		do
			r = waitpid(t->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		return r == t->pid ? st : -1;
	}
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->pid);
	if (pidfd >= 0 && !read_file(path, &text, &len)) {
		char *p = strrchr(text, ')'), *last = strrchr(text, ' ');
		if (p && p[1] == ' ' && p[2] == 'Z' && last)
			st = atoi(last + 1);
		free(text);
		if (st != -1)
			return st;
	}
	struct pidfd_info_v0 info = {.mask = UBT_PIDFD_INFO_EXIT};
	if (pidfd >= 0 && ioctl(pidfd, UBT_PIDFD_GET_INFO, &info) == 0 &&
	    (info.mask & UBT_PIDFD_INFO_EXIT))
		st = info.exit_code;
	return st;
}

int tracee_wait_exit(struct tracee *t, int timeout_ms, int *status)
{
	int pidfd = t->pidfd;
	if (t->exited)
		goto out;
	if (pidfd < 0) /* (the pidfd of tracee_open, kept for the exit status) */
		pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (pidfd < 0 && errno != ESRCH)
		return -errno;
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		int r;
		do
			r = poll(&p, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		int err = r < 0 ? -errno : 0;
		if (r <= 0) {
			if (pidfd != t->pidfd)
				close(pidfd);
			return err;
		}
	}
	t->exit_status = exit_status(t, pidfd);
	t->exited = true;
	if (pidfd >= 0 && pidfd != t->pidfd)
		close(pidfd);
out:
	if (status)
		*status = t->exit_status;
	return 1;
}

const char *tracee_strerror_hint(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
	case EACCES:
		return "run as root, or as the process owner with kernel.yama.ptrace_scope=0 "
		       "(a process already traced by a debugger cannot be traced)";
	case ESRCH:
		return "no such process: check the pid (the process may have exited)";
	case ENOENT:
		return "command not found: give a path, or put it in PATH";
	default:
		return NULL;
	}
}
