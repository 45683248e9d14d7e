/*
 * hostids.c - the host's thread ids for a target in another pid namespace.
 *
 * A process started by `unshare --pid --fork` or in a container sees its
 * own pid namespace: its threads are 1, 2, 3 there, while ps on the host,
 * and bpftrace, call them 16206, 16224, 16225.  `pid` is the host's
 * already (ubt writes it into the header); `tid` comes from the thread's
 * TCB or gettid, which give the namespace's.  Only a procfs of an
 * ancestor namespace names the thread the host's way (its "thread-self"
 * link reads "16206/task/16224"), so ubt puts a descriptor of its own
 * /proc into the target, and each thread reads that link once, at its
 * first `tid` (runtime/thread/rt_thread.c, rt_host_tid), keeping the
 * answer in its slot.
 *
 * Getting a descriptor into another process takes its cooperation, which
 * remote system calls give: the target makes a socket pair, ubt takes one
 * end (pidfd_getfd), sends its /proc over it (SCM_RIGHTS), the target
 * receives it and closes both ends:
 *
 *   target: socketpair(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC, 0, [5, 6])
 *   ubt:    pidfd_getfd(pidfd, 6) = 9;  sendmsg(9, {SCM_RIGHTS: open("/proc")})
 *   target: recvmsg(5, {SCM_RIGHTS: 7}, MSG_CMSG_CLOEXEC);  close(5);  close(6)
 *
 * Only with UBT_HOST_TIDS=1: while ubt is attached, that descriptor lets
 * anything in the target's namespace that may read the target's
 * descriptors (its root, a process of its user) list the host's processes
 * and read what /proc shows of those its user may trace (command lines,
 * environments), which a container must not give away unasked.  Without
 * it ubt warns and `tid` is the namespace's.
 *
 * Descriptor 7 stays open (close-on-exec) while ubt is attached; detach,
 * the watchdog and the detach of forked children close it (unmap), after
 * checking that the number still names ubt's procfs.  If any step fails,
 * ubt warns and `tid` stays the namespace's.
 */
#include "attach/features/features.h"
#include "attach/inject/session_internal.h"
#include "attach/session.h"
#include "attach/target/tracee_write.h"
#include "runtime/abi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* recvmsg's arguments, built in the target's scratch memory at `at` */
struct remote_msg {
	struct msghdr mh;
	struct iovec iov;
	uint64_t byte;
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} cm;
};

static int remote_msg_at(uint64_t at, struct remote_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->iov.iov_base = (void *)(uintptr_t)(at + offsetof(struct remote_msg, byte));
	m->iov.iov_len = 1;
	m->mh.msg_iov = (struct iovec *)(uintptr_t)(at + offsetof(struct remote_msg, iov));
	m->mh.msg_iovlen = 1;
	m->mh.msg_control = (void *)(uintptr_t)(at + offsetof(struct remote_msg, cm));
	m->mh.msg_controllen = sizeof(m->cm.space);
	return 0;
}

static int send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} cm;
	char byte = 'p';
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cm.space,
			    .msg_controllen = sizeof(cm.space)};
	memset(&cm, 0, sizeof(cm));
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

/* Receives, in the target, what ubt sent on its socket sock; *fd: the descriptor. */
static int remote_recv_fd(struct att_session *s, int64_t sock, int64_t *fd)
{
	struct remote_msg m;
	uint64_t at;
	int64_t r;
	int ret = tracee_scratch(&s->t, &(struct remote_msg){0}, sizeof(m), &at);
	if (!ret)
		ret = remote_msg_at(at, &m);
	if (!ret)
		ret = tracee_write(&s->t, at, &m, sizeof(m));
	if (!ret)
		ret = att_rsys(s, SYS_recvmsg, (uint64_t)sock, at, MSG_CMSG_CLOEXEC, 0, 0, 0, &r);
	if (!ret && r != 1)
		ret = r < 0 ? (int)r : -EIO;
	if (!ret)
		ret = tracee_read(&s->t, at, &m, sizeof(m));
	if (ret)
		return ret;
	m.mh.msg_control = m.cm.space; /* ubt's copy, for the macros */
	struct cmsghdr *c = CMSG_FIRSTHDR(&m.mh);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EIO;
	int v;
	memcpy(&v, CMSG_DATA(c), sizeof(v));
	*fd = v;
	return 0;
}

/* ubt's /proc, passed into the target; its number there in *fd. */
static int pass_proc(struct att_session *s, int proc, int64_t *fd)
{
	int32_t sv[2] = {-1, -1};
	uint64_t at;
	int64_t r;
	int ret = tracee_scratch(&s->t, sv, sizeof(sv), &at);
	if (!ret)
		ret = att_rsys(s, SYS_socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, at, 0, 0,
			       &r);
	if (!ret && r)
		ret = (int)r;
	if (!ret)
		ret = tracee_read(&s->t, at, sv, sizeof(sv));
	if (ret)
		return ret;
	int mine = (int)syscall(SYS_pidfd_getfd, s->t.pidfd, sv[1], 0);
	ret = mine < 0 ? -errno : send_fd(mine, proc);
	if (mine >= 0)
		close(mine);
	if (!ret)
		ret = remote_recv_fd(s, sv[0], fd);
	att_rsys(s, SYS_close, (uint64_t)sv[0], 0, 0, 0, 0, 0, &r);
	att_rsys(s, SYS_close, (uint64_t)sv[1], 0, 0, 0, 0, 0, &r);
	return ret;
}

int att_hostids_map(struct att_session *s, struct rt_shm_header *h)
{
	h->host_proc_fd = -1;
	if (!s->facts.pidns) {
		if (att_other_pidns(s->t.pid))
			fprintf(
			    stderr,
			    "WARNING: pid %d runs in another pid namespace: tid is its "
			    "namespace's, not the host's as bpftrace prints it; UBT_HOST_TIDS=1 "
			    "gives the host's by handing the process ubt's /proc while ubt is "
			    "attached, through which anything in its namespace can read the "
			    "host's processes (docs/safety.md)\n",
			    s->t.pid);
		return 0;
	}
	struct stat st;
	int64_t fd = -1;
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = proc < 0 || fstat(proc, &st) ? -errno : pass_proc(s, proc, &fd);
	if (proc >= 0)
		close(proc);
	if (ret) {
		fprintf(stderr,
			"WARNING: pid %d runs in another pid namespace, and ubt could not give "
			"it the host's /proc (%s): tid will be its namespace's, not the host's\n",
			s->t.pid, strerror(-ret));
		return 0;
	}
	s->host_proc_fd = fd;
	s->host_proc_dev = st.st_dev;
	h->host_proc_fd = (int32_t)fd;
	h->host_proc_dev = st.st_dev;
	h->flags |= RT_F_PIDNS;
	return 0;
}

/* Closes the descriptor in the target if that number is still ubt's procfs
 * (the program may have closed it and opened another file under it). */
void att_hostids_unmap(struct att_session *s)
{
	if (s->host_proc_fd < 0)
		return;
	char path[64], link[PATH_MAX];
	struct stat st;
	int64_t r;
	snprintf(path, sizeof(path), "/proc/%d/fd/%lld", (int)s->t.pid, (long long)s->host_proc_fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n > 0 && (link[n] = 0, !strcmp(link, "/proc")) && !stat(path, &st) &&
	    st.st_dev == s->host_proc_dev)
		att_rsys(s, SYS_close, (uint64_t)s->host_proc_fd, 0, 0, 0, 0, 0, &r);
}
