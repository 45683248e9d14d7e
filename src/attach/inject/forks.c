/*
 * forks.c - processes forked while ubt was attached (part of detach, also
 * run by the watchdog).
 *
 * fork() copies the traced process's memory: the child keeps our patched
 * jumps and int3s, ubt's code and data (the memfd is MAP_SHARED, so the
 * same pages), the private page (wiped, so its probes are off), the
 * return probes' shadow stacks, the probe stacks, and our signal handlers.  Left alone it
 * would pay for every trampoline for its whole life: a PostgreSQL backend
 * forked while ubt traced the postmaster paid 3.5 us more per query.  So
 * detach restores each such process exactly like the traced one
 * (att_detach_stopped): same sites, same regions, same handlers, taken
 * from the session as it was armed (struct att_armed).
 *
 * They are found by what they inherited, never by name: every process in
 * /proc that started after arm and maps our memfd (its device and inode in
 * /proc/PID/maps).  That finds children, grandchildren and orphans whose
 * parent exited.  A vfork child still sharing the traced process's memory
 * is skipped (restoring the traced process restored it).  The scan repeats
 * until it finds nothing new, since a child may fork again meanwhile.
 *
 *   /proc/4242/maps:
 *   55d0c0a00000-55d0c0a03000 r-xs 00000000 00:01 118   /memfd:ubt (deleted)
 *                                           ^^^^^ ^^^ memfd_dev, memfd_ino
 */
#include "attach/session.h"
#include "attach/target/target.h"
#include "elf/elfsym.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define KCMP_VM 1 /* linux/kcmp.h */

static uint64_t boot_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	if (hz <= 0)
		hz = 100;
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) / (1000000000ull / hz);
}

void att_forks_begin(struct att_session *s)
{
	s->armed_ticks = boot_ticks();
	s->main_pid = s->t.pid;
}

void att_forks_armed(struct att_session *s)
{
	struct att_armed *a = &s->armed;
	a->trap = s->trap_installed;
	a->segv = s->segv_installed;
	a->bus = s->bus_installed;
	a->prof = s->prof_installed;
	a->code = s->rg_code;
	a->data = s->rg_data;
	a->priv = s->rg_priv;
	a->rets = s->rg_rets;
	a->pstack = s->rg_pstack;
	for (int i = 0; i < s->nislands; i++)
		a->islands[i] = s->islands[i].rg;
	for (int i = 0; i < s->nsemas; i++)
		s->semas[i].taken = s->semas[i].held;
	__sync_synchronize();
	a->valid = true;
}


/* pid maps our memfd (and is not the traced process's vfork child). */
static bool maps_our_memfd(const struct att_session *s, pid_t pid)
{
	bool found = proc_maps_file(pid, s->memfd_dev, s->memfd_ino);
	if (found && s->main_pid > 0 &&
	    syscall(SYS_kcmp, pid, s->main_pid, KCMP_VM, 0, 0) == 0)
		return false; /* same memory as the traced process: done with it */
	return found;
}

static bool listed(const pid_t *v, int n, pid_t pid)
{
	for (int i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* Appends to *v the processes with our memfd not in *v yet; the number added. */
static int find_forks(const struct att_session *s, pid_t **v, int *n)
{
	DIR *d = opendir("/proc");
	int added = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid_t pid = atoi(e->d_name);
		if (pid == s->main_pid || pid == getpid() || pid == s->ubt_pid ||
		    listed(*v, *n, pid) || proc_stat_u64(pid, 22) < s->armed_ticks /* start time */ ||
		    !maps_our_memfd(s, pid))
			continue;
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = pid;
		added++;
	}
	if (d)
		closedir(d);
	return added;
}

/*
 * A region the child inherited is still there (it may have unmapped it).
 * An anonymous one may show as several mappings in a row: the probe
 * stacks' guard pages (rt_pstack.c) split theirs.
 */
static void check_region(struct att_region *rg, const struct proc_map *maps, int n,
			 const struct att_session *s, bool memfd)
{
	bool there = false;
	uint64_t upto = rg->addr; /* anonymous: covered from rg->addr to here */
	if (rg->state != ATT_RG_MAPPED)
		return;
	for (int i = 0; i < n && !there; i++) {
		const struct proc_map *m = &maps[i];
		if (memfd)
			there = m->start == rg->addr && m->ino == s->memfd_ino &&
				m->dev == s->memfd_dev;
		else if (m->start <= upto && upto < m->end && !m->path[0] && m->ino == 0)
			upto = m->end;
	}
	if (!memfd)
		there = upto >= rg->addr + rg->len;
	if (!there)
		rg->state = ATT_RG_NONE;
}

/* The per-process part of the session, as a process forked while armed has it. */
static void load_armed(struct att_session *s, const struct proc_map *maps, int n)
{
	const struct att_armed *a = &s->armed;
	s->trap_installed = a->trap;
	s->segv_installed = a->segv;
	s->bus_installed = a->bus;
	s->prof_installed = a->prof;
	s->nprof_timers = 0; /* timers are not inherited: fork gives none */
	s->rg_code = a->code;
	s->rg_data = a->data;
	s->rg_priv = a->priv;
	s->rg_rets = a->rets;
	s->rg_pstack = a->pstack;
	check_region(&s->rg_code, maps, n, s, true);
	check_region(&s->rg_data, maps, n, s, true);
	check_region(&s->rg_priv, maps, n, s, false);
	check_region(&s->rg_rets, maps, n, s, false);
	check_region(&s->rg_pstack, maps, n, s, false);
	s->remote_rets = s->rg_rets.state == ATT_RG_MAPPED ? s->rg_rets.addr : 0;
	for (int i = 0; i < s->nislands; i++) {
		s->islands[i].rg = a->islands[i];
		check_region(&s->islands[i].rg, maps, n, s, false);
	}
	s->remote_mapped = true;
	s->remote_fd = -1;
	for (int i = 0; i < s->nsemas; i++)
		s->semas[i].held = s->semas[i].taken;
	for (int i = 0; i < s->nsites; i++)
		s->sites[i].patched = s->sites[i].tramp != 0;
}

/* The part of the session load_armed() changes, to put back afterwards. */
struct proc_part {
	bool remote_mapped, trap, segv, bus, prof;
	struct att_region code, data, priv, rets, pstack, islands[8];
	uint64_t remote_rets;
	int64_t remote_fd;
	int nprof_timers;
};

static void save_part(const struct att_session *s, struct proc_part *p)
{
	*p = (struct proc_part){s->remote_mapped, s->trap_installed, s->segv_installed,
				s->bus_installed, s->prof_installed, s->rg_code, s->rg_data,
				s->rg_priv, s->rg_rets, s->rg_pstack, {{0}}, s->remote_rets, s->remote_fd,
				s->nprof_timers};
	for (int i = 0; i < s->nislands; i++)
		p->islands[i] = s->islands[i].rg;
}

static void load_part(struct att_session *s, const struct proc_part *p)
{
	s->remote_mapped = p->remote_mapped;
	s->trap_installed = p->trap;
	s->segv_installed = p->segv;
	s->bus_installed = p->bus;
	s->prof_installed = p->prof;
	s->rg_code = p->code;
	s->rg_data = p->data;
	s->rg_priv = p->priv;
	s->rg_rets = p->rets;
	s->rg_pstack = p->pstack;
	for (int i = 0; i < s->nislands; i++)
		s->islands[i].rg = p->islands[i];
	s->remote_rets = p->remote_rets;
	s->remote_fd = p->remote_fd;
	s->nprof_timers = p->nprof_timers;
}

/*
 * Restores one forked process.  The session's tracee and per-process part
 * become the child's for the time (all in the shared session, so the
 * watchdog can finish the job if ubt dies meanwhile: in_fork says so).
 */
static void restore_one(struct att_session *s, pid_t pid)
{
	struct tracee parent = s->t;
	struct proc_part part;
	struct proc_map *maps = NULL;
	int nmaps = 0;
	bool *patched = xcalloc(s->nsites + 1, sizeof(bool)), *held = xcalloc(s->nsemas + 1, 1);
	for (int i = 0; i < s->nsites; i++)
		patched[i] = s->sites[i].patched;
	for (int i = 0; i < s->nsemas; i++)
		held[i] = s->semas[i].held;
	save_part(s, &part);
	s->in_fork = true;
	__sync_synchronize();
	if (tracee_open(&s->t, pid) == 0 && att_stop(s) == 0) {
		if (proc_maps_read(pid, &maps, &nmaps) == 0) {
			load_armed(s, maps, nmaps);
			att_detach_stopped(s, att_now_ns());
		} else {
			tracee_release(&s->t);
		}
	}
	proc_maps_free(maps, nmaps);
	tracee_close(&s->t);
	s->t = parent;
	__sync_synchronize();
	s->in_fork = false;
	load_part(s, &part);
	for (int i = 0; i < s->nsites; i++)
		s->sites[i].patched = patched[i];
	for (int i = 0; i < s->nsemas; i++)
		s->semas[i].held = held[i];
	free(patched);
	free(held);
}

void att_forks_restore(struct att_session *s)
{
	pid_t *done = NULL;
	int n = 0;
	if (!s->armed.valid || !s->memfd_ino)
		return;
	/* a child may fork while we work on another: look until nothing is new */
	int first = 0;
	while (n < 100000 && find_forks(s, &done, &n)) {
		for (int i = first; i < n; i++)
			restore_one(s, done[i]);
		first = n;
	}
	free(done);
}

/*
 * A vfork or posix_spawn child runs in the parent's memory, on the
 * calling thread's TCB, until it execs or exits: probes fire there, and
 * `pid` and `tid` must be the child's, as bpftrace's are.  ubt's own
 * entry probes on these functions mark the calling thread (rt_on_vfork);
 * where they cannot go in, the child reports its parent's ids (a
 * warning says so only when the script asks for them).
 */
int att_vfork_plan(struct att_session *s, struct proc_map *maps, int nmaps)
{
	static const char *const syms[] = {"vfork", "posix_spawn", "posix_spawnp"};
	const struct proc_map *libc = proc_find_libc(maps, nmaps);
	struct ef_file f;
	uint64_t bias;
	if (!libc || att_open_mapped(s, libc, maps, nmaps, &f, &bias))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		int r = att_add_internal_func(s, &f, bias, syms[i], "rt_on_vfork");
		if (r && r != -EEXIST && r != -ENOENT)
			fprintf(stderr, "WARNING: cannot probe %s in libc (%s): probes in its "
					"children report the parent's pid and tid\n",
				syms[i], strerror(-r));
	}
	ef_close(&f);
	return 0;
}
