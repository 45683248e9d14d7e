/*
 * ids.c - keeps the target's cached comm, uid and gid fresh: ubt's poll of
 * /proc/PID/task.
 *
 * Pipeline position: set up by the driver before arming, then called from
 * its trace loop (tools/ubt.c).  Each target thread caches its comm/uid/gid
 * (struct rt_ids in its thread slot, runtime/data/rt_builtin.c), tagged with the
 * header's ids_gen; this poll raises ids_gen when it sees that anything a
 * thread may have cached changed, and every thread re-reads at its next hit.
 *
 * What is read, per thread, only for what the script uses (enum rt_ids_use):
 *
 *   comm only     /proc/PID/task/TID/comm     "worker-3\n"
 *   uid or gid    /proc/PID/task/TID/status   "Name:\tworker-3\n ... Uid:\t0\t0\t0\t0\n
 *                                              Gid:\t0\t0\t0\t0\n ..." (Name, Uid, Gid lines)
 *
 * A thread's state is a 64-bit hash of those lines.  ids_gen is raised when
 * a known thread's hash changed (prctl(PR_SET_NAME), pthread_setname_np, a
 * write to .../comm, setuid() in any form) or a thread appeared since the
 * last poll (it may have cached a value and changed it before this poll
 * first saw it).  Files stay open (pread at offset 0 makes the kernel
 * generate them again) up to ATT_IDS_MAX_FDS threads; later threads are
 * opened on each poll.
 *
 * Cost: a pread of a /proc file is a few microseconds, so a poll costs
 * about threads x 3 us.  The next poll waits ATT_IDS_PERIOD_NS or 50 times
 * as long as this one took, whichever is longer: at most ~2 % of a CPU in
 * ubt, however many threads (a process with 1,000 threads is polled about
 * every 150 ms instead of 64 ms).
 */
#include "attach/attach.h"
#include "runtime/abi.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ATT_IDS_PERIOD_NS (64ull * 1000000ull)
#define ATT_IDS_MAX_FDS 512

struct att_ids_thread {
	pid_t tid;    /* 0: free */
	int fd;       /* open file, or -1 */
	uint64_t sum; /* hash of what the script reads */
	uint64_t seen; /* poll number it was last listed in */
};

struct att_ids {
	pid_t pid;
	uint32_t use; /* enum rt_ids_use */
	struct att_ids_thread *tab;
	uint32_t cap, n; /* open addressing on tid; cap a power of two */
	int nfds;
	uint64_t polls;
	uint64_t next_ns; /* CLOCK_MONOTONIC of the next poll */
};

static uint64_t ids_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ids_hash(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

/* Hash of the lines of status the script depends on: Name, Uid, Gid. */
static uint64_t ids_status_sum(const char *buf)
{
	static const char *const keys[] = {"Name:", "Uid:", "Gid:"};
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		size_t kl = strlen(keys[k]);
		for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			if (strncmp(l, keys[k], kl))
				continue;
			const char *e = strchr(l, '\n');
			h = ids_hash(h, l, e ? (size_t)(e - l) : strlen(l));
			break;
		}
	}
	return h;
}

static const char *ids_file(const struct att_ids *ids)
{
	return (ids->use & RT_IDS_CRED) ? "status" : "comm";
}

/* Reads the thread's file into a hash; -errno when it is gone. */
static int ids_read(struct att_ids *ids, struct att_ids_thread *t, uint64_t *sum)
{
	char buf[8192];
	int fd = t->fd;
	if (fd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", ids->pid, t->tid, ids_file(ids));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int err = n < 0 ? -errno : 0;
	if (t->fd < 0 && ids->nfds < ATT_IDS_MAX_FDS && n >= 0) {
		t->fd = fd;
		ids->nfds++;
	} else if (t->fd < 0) {
		close(fd);
	}
	if (n < 0)
		return err;
	buf[n] = 0;
	*sum = (ids->use & RT_IDS_CRED) ? ids_status_sum(buf)
					: ids_hash(0xcbf29ce484222325ull, buf, (size_t)n);
	return 0;
}

static struct att_ids_thread *ids_slot(struct att_ids *ids, pid_t tid)
{
	uint32_t i = ((uint32_t)tid * 0x9e3779b1u) & (ids->cap - 1);
	while (ids->tab[i].tid && ids->tab[i].tid != tid)
		i = (i + 1) & (ids->cap - 1);
	return &ids->tab[i];
}

static void ids_grow(struct att_ids *ids)
{
	struct att_ids_thread *old = ids->tab;
	uint32_t ocap = ids->cap;
	ids->cap = ocap ? ocap * 2 : 64;
	ids->tab = xcalloc(ids->cap, sizeof(*ids->tab));
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].tid)
			*ids_slot(ids, old[i].tid) = old[i];
	free(old);
}

/* Drops threads not listed in this poll: they exited. */
static void ids_sweep(struct att_ids *ids)
{
	struct att_ids_thread *old = ids->tab;
	uint32_t cap = ids->cap;
	ids->tab = xcalloc(cap, sizeof(*ids->tab));
	ids->n = 0;
	for (uint32_t i = 0; i < cap; i++) {
		if (!old[i].tid)
			continue;
		if (old[i].seen != ids->polls) {
			if (old[i].fd >= 0) {
				close(old[i].fd);
				ids->nfds--;
			}
			continue;
		}
		*ids_slot(ids, old[i].tid) = old[i];
		ids->n++;
	}
	free(old);
}

/* One pass over the threads; returns 1 if anything changed, 0, or -errno. */
static int ids_scan(struct att_ids *ids)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", ids->pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int changed = 0, gone = 0;
	ids->polls++;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		if (2 * (ids->n + 1) > ids->cap)
			ids_grow(ids);
		struct att_ids_thread *t = ids_slot(ids, tid);
		bool fresh = !t->tid;
		if (fresh) {
			t->tid = tid;
			t->fd = -1;
			ids->n++;
		}
		uint64_t sum;
		if (ids_read(ids, t, &sum) < 0) {
			gone++; /* exited meanwhile: the sweep drops it */
			continue;
		}
		t->seen = ids->polls;
		if ((fresh && ids->polls > 1) || (!fresh && sum != t->sum))
			changed = 1;
		t->sum = sum;
	}
	closedir(d);
	if (gone || ids->n > 0)
		ids_sweep(ids);
	return changed;
}

int att_ids_open(struct att_ids **out, pid_t pid, uint32_t use)
{
	struct att_ids *ids = xcalloc(1, sizeof(*ids));
	ids->pid = pid;
	ids->use = use;
	ids_grow(ids);
	int r = ids_scan(ids); /* the baseline: before any probe runs */
	if (r < 0) {
		att_ids_close(ids);
		return r;
	}
	ids->next_ns = ids_now() + ATT_IDS_PERIOD_NS;
	*out = ids;
	return 0;
}

int att_ids_poll(struct att_ids *ids, volatile uint64_t *gen)
{
	if (!ids)
		return 0;
	uint64_t t0 = ids_now();
	if (t0 < ids->next_ns)
		return 0;
	int r = ids_scan(ids);
	uint64_t t1 = ids_now();
	uint64_t wait = (t1 - t0) * 50;
	ids->next_ns = t1 + (wait > ATT_IDS_PERIOD_NS ? wait : ATT_IDS_PERIOD_NS);
	if (r > 0)
		__atomic_add_fetch(gen, 1, __ATOMIC_RELEASE);
	return r < 0 ? r : 0;
}

void att_ids_close(struct att_ids *ids)
{
	if (!ids)
		return;
	for (uint32_t i = 0; i < ids->cap; i++)
		if (ids->tab[i].tid && ids->tab[i].fd >= 0)
			close(ids->tab[i].fd);
	free(ids->tab);
	free(ids);
}
