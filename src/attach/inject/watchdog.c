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
#include "attach/attach.h"
#include "attach/target/tracee_write.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void watchdog_main(struct att_session *s, int rfd)
{
	char c = 0;
	ssize_t n;
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "ubt-watchdog", 0, 0, 0);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'D')
		_exit(0);
	/*
	 * ubt is gone.  The session is shared memory, so it says how far ubt
	 * got; every site with a trampoline may be patched, whatever ubt had
	 * recorded.  The thread list is ubt's (its heap): we trace nothing yet.
	 */
	s->t.threads = NULL;
	s->t.nthreads = 0;
	s->t.stopped = false;
	s->t.is_child = false; /* a -c target is ubt's child, not ours */
	if (tracee_stop_all(&s->t))
		_exit(1);
	tracee_rescue_apply(&s->t);
	for (int i = 0; i < s->nsites; i++)
		s->sites[i].patched = s->sites[i].tramp != 0;
	if (s->remote_mapped)
		att_detach(s);
	tracee_release(&s->t);
	_exit(0);
}

int att_watchdog_start(struct att_session *s)
{
	int fds[2];
	if (!s->has_target)
		return 0;
	if (pipe2(fds, O_CLOEXEC)) {
		diag_sys(NULL, "pipe: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(fds[0]);
		close(fds[1]);
		diag_sys(NULL, "fork (watchdog): %s", strerror(err));
		return -err;
	}
	if (pid == 0) {
		close(fds[1]);
		watchdog_main(s, fds[0]);
	}
	close(fds[0]);
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
