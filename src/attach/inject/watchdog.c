/*
 * watchdog.c - if ubt dies, the target is restored anyway.
 *
 * Before touching the target, ubt forks a small watchdog process (a copy
 * of itself).  The session lives in shared memory (att_session_new), so
 * the watchdog sees every step ubt takes: which sites have trampolines and
 * patch bytes, where ubt's memory is in the target, and a remote system
 * call in flight (struct tracee_rescue).  ubt keeps the write end of a pipe; the watchdog blocks
 * reading the other end.  After a normal detach ubt writes 'D' and waits
 * for the watchdog to exit.  If ubt dies first (SIGKILL, a crash), the
 * kernel closes the pipe, the read returns end-of-file, and the watchdog
 * does the detach ubt could not: it stops the target's threads, puts back
 * a thread ubt left inside a remote system call, turns the probes off,
 * restores every byte that still holds a patch, puts the
 * application's SIGTRAP action back, unmaps ubt's memory when no thread is
 * inside it, and lets the threads go.  Restoring only bytes that still
 * hold our patch makes that safe whatever point ubt had reached.
 *
 * The watchdog ignores SIGINT, SIGTERM and SIGHUP: Ctrl-C reaches the
 * whole process group, and ubt, not the watchdog, handles it.
 */
#include "attach/session.h"
#include "attach/target/target.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/*
 * The pipe reads end-of-file when ubt's files are closed, early in its
 * exit; its ptrace links to the target's threads go only at the end of
 * it (exit_ptrace(), just before its parent is notified).  Until then the
 * target cannot be seized: wait until ubt is gone for good (its pidfd
 * polls readable), or, without a pidfd, until no thread names it tracer.
 */
static void wait_released(struct att_session *s, int pidfd)
{
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		return;
	}
	for (int i = 0; i < 10000 && s->t.pid > 0 && proc_tracer_pid(s->t.pid, 0) == s->ubt_pid; i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

/*
 * A call in flight when ubt died: whether it was made is in the rescue
 * record (tracee_rescue_apply), and so is what it made.
 */
static void settle_inflight(struct att_session *s)
{
	const struct tracee_rescue *rs = &s->t.rescue;
	att_region_settle(s, &s->rg_code);
	att_region_settle(s, &s->rg_data);
	att_region_settle(s, &s->rg_priv);
	att_region_settle(s, &s->rg_rets);
	att_region_settle(s, &s->rg_pstack);
	if (s->rg_rets.state == ATT_RG_MAPPED)
		s->remote_rets = s->rg_rets.addr;
	for (int i = 0; i < s->nislands; i++)
		att_region_settle(s, &s->islands[i].rg);
	if (rs->done && rs->nr == SYS_memfd_create && rs->result >= 0 && s->remote_fd < 0)
		s->remote_fd = rs->result;
	att_close_remote_fd(s);
}

/* Does the detach ubt could not, on the process in s->t. */
static void restore(struct att_session *s)
{
	/* the thread list is ubt's (its heap): we trace nothing yet */
	s->t.threads = NULL;
	s->t.nthreads = 0;
	s->t.stopped = false;
	s->t.is_child = false; /* a -c target is ubt's child, not ours */
	s->t.pidfd = -1;        /* ubt's descriptor, not ours */
	if ((!s->remote_mapped && !s->t.spawn.active) || s->t.pid <= 0)
		return;
	/* ubt's descriptor was opened by it (or, for a -c command, before the
	 * exec): a fresh one for the process as it is now */
	if (s->t.mem_fd >= 0)
		close(s->t.mem_fd);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)s->t.pid);
	s->t.mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (s->t.mem_fd < 0)
		return;
	if (s->remote_mapped && s->remote_data) /* no fork child turns its probes on now */
		att_follow_forks(s, false);
	if (att_stop(s))
		return;
	tracee_rescue_apply(&s->t);
	tracee_spawn_rescue(&s->t); /* a -c command on its way to its entry point */
	if (!s->remote_mapped) {
		tracee_release(&s->t);
		return;
	}
	settle_inflight(s);
	/* every site with a trampoline may be patched, whatever ubt recorded */
	for (int i = 0; i < s->nsites; i++)
		s->sites[i].patched = s->sites[i].tramp != 0;
	att_detach_stopped(s, att_now_ns());
}

static void watchdog_main(struct att_session *s, int rfd, int pidfd, int ready)
{
	char c = 0;
	ssize_t n;
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "ubt-watchdog", 0, 0, 0);
	close(ready); /* set up: ubt may stop the target's threads now */
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'D')
		_exit(0);
	/*
	 * ubt is gone.  The session is shared memory, so it says how far ubt
	 * got.  s->t is the traced process, or a process forked from it that
	 * ubt was restoring (in_fork); then the others are left.
	 */
	wait_released(s, pidfd);
	restore(s);
	att_forks_restore(s);
	_exit(0);
}

int att_watchdog_start(struct att_session *s)
{
	int fds[2], ready[2];
	if (!s->has_target || s->watch_pid > 0)
		return 0;
	if (pipe2(fds, O_CLOEXEC)) {
		diag_sys(NULL, "pipe: %s", strerror(errno));
		return -errno;
	}
	if (pipe2(ready, O_CLOEXEC)) {
		int err = errno;
		close(fds[0]);
		close(fds[1]);
		diag_sys(NULL, "pipe: %s", strerror(err));
		return -err;
	}
	s->ubt_pid = getpid();
	int pidfd = (int)syscall(SYS_pidfd_open, s->ubt_pid, 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(fds[0]);
		close(fds[1]);
		close(ready[0]);
		close(ready[1]);
		if (pidfd >= 0)
			close(pidfd);
		diag_sys(NULL, "fork (watchdog): %s", strerror(err));
		return -err;
	}
	if (pid == 0) {
		close(fds[1]);
		close(ready[0]);
		watchdog_main(s, fds[0], pidfd, ready[1]);
	}
	close(fds[0]);
	close(ready[1]);
	if (pidfd >= 0)
		close(pidfd);
	/*
	 * Wait until the watchdog has set itself up (it closes its end of
	 * `ready`: EOF here, also if it died).  Its first steps after fork
	 * (copy-on-write faults of a process holding LLVM, signal actions)
	 * took ~5 ms of the one CPU the target's busy threads left, and ubt
	 * then stopped the target's threads while it waited for that CPU:
	 * the threads' stop grew from ~8 to ~13 ms (bench/spdk_iops.py).
	 */
	char c;
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	s->watch_fd = fds[1];
	s->watch_pid = pid;
	return 0;
}
void att_watchdog_stop(struct att_session *s)
{
	if (s->watch_pid <= 0)
		return;
	ssize_t n;
	do
		n = write(s->watch_fd, "D", 1);
	while (n < 0 && errno == EINTR);
	close(s->watch_fd);
	while (waitpid(s->watch_pid, NULL, 0) < 0 && errno == EINTR)
		;
	s->watch_pid = 0;
}
