/*
 * placement.c - where ubt's memory goes in the target (part of attach,
 * between planning in session.c and patching in patch.c).
 *
 * One memfd holds code then data.  The target maps the code part
 * read-execute at a free gap within rel32 reach of every probed site, and
 * the data part read-write right after it, so both trampolines (jmp/call
 * rel32) and probe code (RIP-relative ubt_shm) reach everything directly.
 * ubt maps the same memfd read-write, and writes code and headers through
 * that mapping.  The memfd is created by a remote memfd_create() in the
 * target and opened by ubt through /proc/PID/fd, so no file name is left
 * behind, and the memory outlives ubt if ubt dies.  ubt seals its size
 * (F_SEAL_SHRINK, F_SEAL_GROW) before mapping it: a process that got hold
 * of the file cannot truncate it under ubt's mapping, where ubt's next read
 * would take SIGBUS (DESIGN.md decision 10).  Sites out of reach of
 * the main code get trampoline islands of their own; BEGIN/END code gets
 * RWX memory in ubt near its view of the data.
 */
#include "attach/session.h"
#include "attach/target/target.h"
#include "elf/elfsym.h"
#include "util/util.h"
#include "attach/inject/session_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Sites in rel32 reach of one region: the first site not yet placed picks
 * the window, every other unplaced site whose window overlaps it joins
 * (their island is set to `island`).  Sites out of reach are left for an
 * island of their own (a program's functions and a library's are usually
 * more than 2 GiB apart).
 */
void att_group_sites(struct att_session *s, int island, uint64_t *lo, uint64_t *hi, uint64_t *ref)
{
	*lo = 0x10000, *hi = 0x7ffffffff000ull, *ref = 0;
	bool first = true;
	for (int i = 0; i < s->nsites; i++) {
		struct att_site *site = &s->sites[i];
		uint64_t l, h;
		if (site->island >= 0)
			continue;
		arch_near_window(site->func_addr, &l, &h);
		uint64_t nl = l > *lo ? l : *lo, nh = h < *hi ? h : *hi;
		if (nl >= nh || nh - nl < (1ull << 24)) /* no room left in reach of both */
			continue;
		*lo = nl, *hi = nh;
		if (first)
			*ref = site->func_addr;
		first = false;
		site->island = island;
	}
}

/* A free gap of `size` bytes in [lo, hi), nearest to ref. */
int att_find_gap(struct proc_map *maps, int n, uint64_t lo, uint64_t hi, uint64_t ref,
		 uint64_t size, uint64_t *addr)
{
	/* gaps between mappings, with a guard page on each side */
	uint64_t best = 0, best_dist = UINT64_MAX;
	for (int i = 0; i <= n; i++) {
		uint64_t start = i ? maps[i - 1].end + PAGE : 0x10000;
		uint64_t end = i < n ? maps[i].start - PAGE : 0x7ffffffff000ull;
		if (start < lo)
			start = ALIGN_UP(lo, PAGE);
		if (end > hi)
			end = hi & ~(PAGE - 1);
		if (end <= start || end - start < size)
			continue;
		/* the end of the gap nearest to ref */
		uint64_t cand = ref > start ? (end - size) : start;
		uint64_t dist = cand > ref ? cand - ref : ref - cand;
		if (dist < best_dist) {
			best = cand;
			best_dist = dist;
		}
	}
	if (!best)
		return -ENOMEM;
	*addr = best;
	return 0;
}

/* ---- shared memory ---------------------------------------------------- */

int att_rsys(struct att_session *s, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
	     uint64_t a5, uint64_t a6, int64_t *out)
{
	int ret = tracee_syscall(&s->t, nr, a1, a2, a3, a4, a5, a6, out);
	if (s->rsys_out)
		att_dump_rsys(s, nr, (const uint64_t[6]){a1, a2, a3, a4, a5, a6}, ret, ret ? 0 : *out);
	if (ret)
		return ret;
	return *out < 0 && *out > -4096 ? (int)*out : 0;
}

/* ---- mappings whose fate is always known (struct att_region) ---------- */

int att_region_map(struct att_session *s, struct att_region *rg, uint64_t addr, uint64_t len,
		   int prot, int flags, int64_t fd, uint64_t off)
{
	int64_t r;
	rg->addr = addr;
	rg->len = len;
	rg->seq = s->t.rescue.seq + 1; /* the number tracee_syscall() gives this call */
	__sync_synchronize();
	rg->state = ATT_RG_MAPPING;
	int ret = att_rsys(s, SYS_mmap, addr, len, prot, flags, (uint64_t)fd, off, &r);
	if (!ret && addr && (flags & MAP_FIXED_NOREPLACE) && (uint64_t)r != addr) {
		/* an old kernel took the hint as a hint: not where we need it */
		int64_t dummy;
		att_rsys(s, SYS_munmap, (uint64_t)r, len, 0, 0, 0, 0, &dummy);
		ret = -EEXIST;
	}
	if (!ret)
		rg->addr = (uint64_t)r;
	__sync_synchronize();
	rg->state = ret ? ATT_RG_NONE : ATT_RG_MAPPED;
	return ret;
}

int att_region_unmap(struct att_session *s, struct att_region *rg)
{
	int64_t r;
	if (rg->state != ATT_RG_MAPPED)
		return 0;
	rg->seq = s->t.rescue.seq + 1;
	__sync_synchronize();
	rg->state = ATT_RG_UNMAPPING;
	int ret = att_rsys(s, SYS_munmap, rg->addr, rg->len, 0, 0, 0, 0, &r);
	__sync_synchronize();
	rg->state = ret ? ATT_RG_MAPPED : ATT_RG_NONE;
	return ret;
}

void att_region_settle(struct att_session *s, struct att_region *rg)
{
	const struct tracee_rescue *rs = &s->t.rescue;
	if (rg->state != ATT_RG_MAPPING && rg->state != ATT_RG_UNMAPPING)
		return;
	bool made = rs->seq == rg->seq && rs->done;
	if (rg->state == ATT_RG_MAPPING) {
		made = made && rs->nr == SYS_mmap && !(rs->result < 0 && rs->result > -4096);
		if (made)
			rg->addr = (uint64_t)rs->result;
		rg->state = made ? ATT_RG_MAPPED : ATT_RG_NONE;
	} else {
		made = made && rs->nr == SYS_munmap && rs->result == 0;
		rg->state = made ? ATT_RG_NONE : ATT_RG_MAPPED;
	}
}

/* ---- signal actions the runtime takes over ----------------------------- */

int att_sig_install(struct att_session *s, int sig, const struct rt_sigaction_k *act,
		    bool onstack_as_app, struct rt_sigaction_k *old, bool *installed)
{
	struct rt_sigaction_k buf[2] = {*act, {0}};
	uint64_t at;
	int64_t r;
	/* the application's action is read (and kept) before ours goes in: if
	 * ubt dies during the install, the watchdog knows what to put back */
	int ret = tracee_scratch(&s->t, buf, sizeof(buf), &at);
	if (!ret)
		ret = att_rsys(s, SYS_rt_sigaction, sig, 0, at + sizeof(buf[0]), 8, 0, 0, &r);
	if (!ret)
		ret = tracee_read(&s->t, at + sizeof(buf[0]), old, sizeof(*old));
	if (!ret && onstack_as_app && (old->flags & SA_ONSTACK)) {
		buf[0].flags |= SA_ONSTACK;
		ret = tracee_write(&s->t, at, &buf[0], sizeof(buf[0]));
	}
	if (ret)
		return ret;
	__sync_synchronize();
	*installed = true;
	ret = att_rsys(s, SYS_rt_sigaction, sig, at, 0, 8, 0, 0, &r);
	if (ret)
		*installed = false;
	return ret;
}

int att_sig_current(struct att_session *s, int sig, struct rt_sigaction_k *cur)
{
	uint64_t at;
	int64_t r;
	int ret = tracee_scratch(&s->t, cur, sizeof(*cur), &at);
	if (!ret)
		ret = att_rsys(s, SYS_rt_sigaction, sig, 0, at, 8, 0, 0, &r);
	if (!ret)
		ret = tracee_read(&s->t, at, cur, sizeof(*cur));
	return ret;
}

void att_sig_restore(struct att_session *s, int sig, uint64_t ours,
		     const struct rt_sigaction_k *old, bool *installed)
{
	struct rt_sigaction_k cur;
	uint64_t at;
	int64_t r;
	if (!*installed)
		return;
	/* an action the application set after ours is its own: leave it */
	if (!att_sig_current(s, sig, &cur) && cur.handler == ours &&
	    !tracee_scratch(&s->t, old, sizeof(*old), &at))
		att_rsys(s, SYS_rt_sigaction, sig, at, 0, 8, 0, 0, &r);
	*installed = false;
}

/*
 * The private page (struct rt_priv) right after the data part: anonymous,
 * private, wiped in a forked child, so a child's probes see enabled == 0.
 * `enabled` is set only once everything else is in place (att_arm).
 */
static int map_remote_priv(struct att_session *s, uint64_t at)
{
	int64_t r;
	int ret = att_region_map(s, &s->rg_priv, at, PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (!ret)
		ret = att_rsys(s, SYS_madvise, at, PAGE, MADV_WIPEONFORK, 0, 0, 0, &r);
	if (!ret) {
		struct rt_priv p = {.size = sizeof(p), .enabled = 0, .pid = (uint32_t)s->t.pid};
		s->remote_priv = at;
		ret = tracee_write(&s->t, at, &p, sizeof(p));
	}
	return ret;
}

/* Closes the memfd's descriptor in the target, if it is still open. */
void att_close_remote_fd(struct att_session *s)
{
	int64_t r;
	if (s->remote_fd < 0)
		return;
	/* the number may be the program's own again if ubt died after the
	 * close: only a descriptor of our memfd is closed */
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%lld", (int)s->t.pid, (long long)s->remote_fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	struct stat st;
	if (n > 0 && (link[n] = 0, !strncmp(link, "/memfd:ubt", 10)) && !stat(path, &st) &&
	    (!s->memfd_ino || st.st_ino == s->memfd_ino))
		att_rsys(s, SYS_close, (uint64_t)s->remote_fd, 0, 0, 0, 0, 0, &r);
	s->remote_fd = -1;
}

/* The memfd keeps its size for good; -EIO if it is not `total` bytes by then. */
static int seal_size(int fd, uint64_t total)
{
	struct stat st;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) || fstat(fd, &st))
		return -errno;
	return (uint64_t)st.st_size == total ? 0 : -EIO;
}

/*
 * Code, data and the private page at a free range in [lo, hi) nearest ref,
 * from the process's mappings as they are now.  The other threads run
 * meanwhile (att_install stops one), so the range may be taken between
 * the look and the mmap (MAP_FIXED_NOREPLACE: -EEXIST): what was mapped
 * goes and the next look picks another, a few times.
 */
static int map_near(struct att_session *s, int64_t fd, uint64_t lo, uint64_t hi, uint64_t ref)
{
	int ret = -EEXIST;
	for (int tries = 0; tries < 8 && ret == -EEXIST; tries++) {
		struct proc_map *maps = NULL;
		int nmaps = 0;
		uint64_t at;
		if ((ret = proc_maps_read(s->t.pid, &maps, &nmaps)))
			break;
		ret =
		    att_find_gap(maps, nmaps, lo, hi, ref, s->code_size + s->data_size + PAGE, &at);
		proc_maps_free(maps, nmaps);
		if (ret) {
			diag_sys(NULL, "pid %d: no free address range near the probed code",
				 s->t.pid);
			return ret;
		}
		s->remote_code = at;
		s->remote_data = at + s->code_size;
		ret = att_region_map(s, &s->rg_code, at, s->code_size, PROT_READ | PROT_EXEC,
				     MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (!ret)
			ret = att_region_map(s, &s->rg_data, s->remote_data, s->data_size,
					     PROT_READ | PROT_WRITE,
					     MAP_SHARED | MAP_FIXED_NOREPLACE, fd, s->code_size);
		if (!ret)
			ret = map_remote_priv(s, s->remote_data + s->data_size);
		if (ret == -EEXIST) {
			att_region_unmap(s, &s->rg_code);
			att_region_unmap(s, &s->rg_data);
		}
	}
	return ret;
}

int att_map_remote(struct att_session *s, uint64_t lo, uint64_t hi, uint64_t ref)
{
	uint64_t total = s->code_size + s->data_size, name;
	int64_t fd = -1, r;
	int ret = tracee_scratch(&s->t, "ubt", 4, &name);
	s->remote_mapped = true; /* from here on, detach (or the watchdog) has work */
	/* (if we die during the call, the watchdog finds the descriptor in the
	 * rescue record: att_settle_inflight) */
	if (!ret)
		ret = att_rsys(s, SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING, 0, 0, 0,
			       0, &fd);
	if (!ret)
		s->remote_fd = fd;
	if (ret) {
		uint64_t seccomp = 0; /* 0 none, 1 strict, 2 filter */
		if (ret == -EPERM && !proc_status_u64(s->t.pid, 0, "Seccomp", 10, &seccomp) &&
		    seccomp > 0)
			diag_sys("the process runs under a seccomp filter (Seccomp in "
				 "/proc/PID/status) that refuses a system call ubt needs to place "
				 "its code; it cannot be traced this way",
				 "pid %d: memfd_create in the target: %s", s->t.pid, strerror(-ret));
		else
			att_sys_error(s, ret, "memfd_create in the target");
		return ret;
	}
	ret = att_rsys(s, SYS_ftruncate, fd, total, 0, 0, 0, 0, &r);
	if (!ret) {
		/* ubt's own view, and the memfd's identity for finding forks later */
		char *path = xasprintf("/proc/%d/fd/%lld", s->t.pid, (long long)fd);
		int lfd = open(path, O_RDWR | O_CLOEXEC);
		free(path);
		struct stat st;
		if (lfd < 0 || fstat(lfd, &st)) {
			ret = -errno;
		} else if ((ret = seal_size(lfd, total))) {
			close(lfd);
		} else {
			s->memfd_dev = st.st_dev;
			s->memfd_ino = st.st_ino;
			void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
			ret = p == MAP_FAILED ? -errno : 0;
			if (!ret)
				s->local = p;
		}
		if (lfd >= 0)
			close(lfd);
	}
	if (!ret)
		ret = map_near(s, fd, lo, hi, ref);
	att_close_remote_fd(s);
	if (ret)
		att_sys_error(s, ret, "mapping shared memory in the target");
	return ret;
}

int att_map_local_only(struct att_session *s)
{
	int fd = memfd_create("ubt", MFD_CLOEXEC);
	uint64_t total = s->code_size + s->data_size;
	if (fd < 0 || ftruncate(fd, total)) {
		diag_sys(NULL, "memfd_create: %s", strerror(errno));
		return -errno;
	}
	void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		diag_sys(NULL, "mmap: %s", strerror(errno));
		return -errno;
	}
	s->local = p;
	return 0;
}

/* Anonymous RWX memory for BEGIN/END code within rel32 reach of our data. */
int att_map_host_code(struct att_session *s, size_t size)
{
	uint64_t data = (uint64_t)att_data(s);
	s->host_code_size = ALIGN_UP(size, PAGE) + PAGE; /* + the private page */
	for (uint64_t at = (data - s->code_size - s->host_code_size - PAGE) & ~(PAGE - 1);
	     data - at < (1ull << 30); at -= 1ull << 20) {
		void *p = mmap((void *)at, s->host_code_size, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED) {
			s->host_code = p;
			s->host_priv = (struct rt_priv *)((uint8_t *)p + s->host_code_size - PAGE);
			s->host_priv->size = sizeof(struct rt_priv);
			s->host_priv->enabled = 1;
			s->host_priv->pid = (uint32_t)getpid();
			return 0;
		}
	}
	diag_sys(NULL, "no room for BEGIN/END code near shared memory");
	return -ENOMEM;
}

size_t att_tramp_max(const struct att_site *site)
{
	if (site->mid)
		return ALIGN_UP(arch_trampoline_mid_max(site->nhandlers), 64);
	if (site->nrhandlers)
		return ALIGN_UP(arch_ret_trampoline_max(site->nhandlers, site->nrhandlers), 64);
	return ALIGN_UP(arch_trampoline_max(site->nhandlers), 64);
}

/* Trampoline bytes of the sites placed in island i (0: the main code). */
size_t att_tramp_bytes(const struct att_session *s, int island)
{
	size_t n = 0;
	for (int i = 0; i < s->nsites; i++)
		if (s->sites[i].island == island)
			n += att_tramp_max(&s->sites[i]);
	return n;
}

/* Maps an island for every group of sites out of reach of the main code. */
int att_map_islands(struct att_session *s, struct proc_map **maps, int *nmaps)
{
	int taken = 0; /* ranges another thread mapped between our look and our mmap */
	for (;;) {
		uint64_t lo, hi, ref, at;
		int idx = s->nislands + 1;
		bool left = false;
		for (int i = 0; i < s->nsites; i++)
			left |= s->sites[i].island < 0;
		if (!left)
			return 0;
		if (s->nislands == (int)ARRAY_SIZE(s->islands)) {
			diag_sys(NULL, "pid %d: probed code too far apart", s->t.pid);
			return -E2BIG;
		}
		att_group_sites(s, idx, &lo, &hi, &ref);
		uint64_t size = ALIGN_UP(att_tramp_bytes(s, idx), PAGE);
		int ret = att_find_gap(*maps, *nmaps, lo, hi, ref, size, &at);
		struct att_island *is = &s->islands[s->nislands];
		memset(is, 0, sizeof(*is));
		is->addr = at;
		is->size = size;
		s->nislands++; /* its region says whether it is mapped */
		if (!ret)
			ret = att_region_map(s, &is->rg, at, size, PROT_READ | PROT_EXEC,
					     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (ret == -EEXIST && taken++ < 8) {
			s->nislands--; /* look again, for the same group */
			for (int i = 0; i < s->nsites; i++)
				if (s->sites[i].island == idx)
					s->sites[i].island = -1;
			proc_maps_free(*maps, *nmaps);
			*maps = NULL;
			if ((ret = proc_maps_read(s->t.pid, maps, nmaps)))
				return ret;
			continue;
		}
		if (ret) {
			diag_sys(NULL, "pid %d: no room for trampolines near 0x%llx", s->t.pid,
				 (unsigned long long)ref);
			return ret;
		}
		proc_maps_free(*maps, *nmaps);
		*maps = NULL;
		if ((ret = proc_maps_read(s->t.pid, maps, nmaps)))
			return ret;
	}
}
