/*
 * facts.c - what probe code needs to know about the process it runs in,
 * found without stopping it:
 *
 *   rseq     glibc >= 2.35 registers a struct rseq for every thread at
 *            %fs:__rseq_offset; ld.so exports __rseq_offset/__rseq_size.
 *            __rseq_size == 0 means registration is off (a tunable, or
 *            another library owns rseq): probes then use shared slots.
 *   tid      the kernel tid is cached in the thread control block; ubt
 *            finds its offset in its own TCB, and uses it for a target
 *            whose ld.so is the same file as ubt's (same glibc build).
 *            Otherwise probes ask the kernel (gettid), which is slower.
 */
#include "attach/session.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t thread_pointer(void)
{
	uint64_t tp;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

static int scan_tcb_for_tid(int from)
{
	const uint32_t *tcb = (const uint32_t *)thread_pointer();
	uint32_t tid = (uint32_t)gettid();
	for (int i = from / 4; i < 0x1000 / 4; i++)
		if (tcb[i] == tid)
			return i * 4;
	return -1;
}

static void *check_thread(void *arg)
{
	int off = *(int *)arg;
	const uint32_t *tcb = (const uint32_t *)thread_pointer();
	*(int *)arg = tcb[off / 4] == (uint32_t)gettid() ? off : -1;
	return NULL;
}

/* Offset of the tid in our own TCB, confirmed in a second thread. */
static int own_tid_off(void)
{
	static int cached = -2;
	if (cached != -2)
		return cached;
	cached = -1;
	for (int off = scan_tcb_for_tid(0); off >= 0; off = scan_tcb_for_tid(off + 4)) {
		pthread_t th;
		int probe = off;
		if (pthread_create(&th, NULL, check_thread, &probe))
			break;
		pthread_join(th, NULL);
		if (probe == off) {
			cached = off;
			break;
		}
	}
	return cached;
}

/* The ld.so mapped in pid (0 = ourselves): its path, device and inode. */
static bool find_ldso(pid_t pid, struct proc_map *out_map, char **path)
{
	struct proc_map *maps;
	int n;
	if (proc_maps_read(pid ? pid : getpid(), &maps, &n))
		return false;
	bool found = false;
	for (int i = 0; i < n && !found; i++) {
		const char *base = strrchr(maps[i].path, '/');
		if (base && !strncmp(base + 1, "ld-linux", 8)) {
			*out_map = maps[i];
			*path = xstrdup(maps[i].path);
			found = true;
		}
	}
	proc_maps_free(maps, n);
	return found;
}

static bool read_target_rseq(struct att_session *s, int64_t *off)
{
	struct proc_map m;
	char *path;
	if (!find_ldso(s->t.pid, &m, &path))
		return false;
	char *p = xasprintf("/proc/%d/root%s", s->t.pid, path);
	struct ef_file f;
	bool ok = false;
	if (!ef_open(&f, p)) {
		struct proc_map *maps;
		int n;
		uint64_t bias;
		struct ef_symbol so, sz;
		if (!proc_maps_read(s->t.pid, &maps, &n)) {
			if (!proc_load_bias(maps, n, &f, &bias) &&
			    !ef_find_symbol(&f, "__rseq_offset", &so) &&
			    !ef_find_symbol(&f, "__rseq_size", &sz)) {
				uint32_t size = 0;
				ok = !tracee_read(&s->t, bias + so.value, off, sizeof(*off)) &&
				     !tracee_read(&s->t, bias + sz.value, &size, sizeof(size)) &&
				     size > 0;
				free(so.name);
				free(sz.name);
			}
			proc_maps_free(maps, n);
		}
		ef_close(&f);
	}
	free(p);
	free(path);
	return ok;
}

static bool same_ldso(pid_t pid)
{
	struct proc_map a, b;
	char *pa, *pb;
	if (!find_ldso(pid, &a, &pa))
		return false;
	if (!find_ldso(0, &b, &pb)) {
		free(pa);
		return false;
	}
	free(pa);
	free(pb);
	return a.dev == b.dev && a.ino == b.ino;
}

/* The kernel fills struct rseq's node_id (Linux 6.3+ says so in the auxv,
 * the same for every process). */
static bool rseq_has_node(void)
{
	return getauxval(27 /* AT_RSEQ_FEATURE_SIZE */) >= RT_RSEQ_NODE_ID + 4;
}

/*
 * pid lives in another pid namespace than ubt (a container, `unshare
 * --pid`): its threads' own ids are not the ones bpftrace prints.  Told
 * by the namespaces' inodes, as /proc/PID/ns/pid links show them.
 */
bool att_host_tids_wanted(void)
{
	const char *v = getenv("UBT_HOST_TIDS");
	return v && strcmp(v, "0");
}

bool att_other_pidns(pid_t pid)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &a) || stat("/proc/self/ns/pid", &b))
		return false;
	return a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

void att_facts(struct att_session *s, bool host, struct cg_facts *facts)
{
	memset(facts, 0, sizeof(*facts));
	facts->rseq_node = rseq_has_node();
	if (!host) {
		facts->usdt = s->usdt;
		facts->nusdt = s->nusdt;
	}
	if (host || !s->has_target) {
		facts->has_rseq = __rseq_size > 0;
		facts->rseq_off = __rseq_offset;
		int off = own_tid_off();
		facts->has_tid = off >= 0;
		facts->tid_off = off;
		return;
	}
	facts->has_rseq = read_target_rseq(s, &facts->rseq_off);
	/* host tids only when asked: they hand the target ubt's /proc
	 * (features/hostids.c, docs/safety.md) */
	facts->pidns = att_other_pidns(s->t.pid) && att_host_tids_wanted();
	if (same_ldso(s->t.pid)) {
		int off = own_tid_off();
		facts->has_tid = off >= 0;
		facts->tid_off = off;
	}
}
