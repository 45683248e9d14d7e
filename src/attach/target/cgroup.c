/*
 * cgroup.c - the `cgroup` builtin's value: the cgroup v2 id of the target.
 *
 * Pipeline position: after att_open(), before arming; the driver writes
 * the id into the shared header (rt_shm_header.cgroup_id) and probe code
 * loads it.  bpftrace's bpf_get_current_cgroup_id() is the kernfs id of
 * the task's cgroup in the default (v2) hierarchy, which is the inode
 * number of its directory in the cgroup2 mount:
 *
 *   /proc/PID/cgroup      0::/user.slice/session-1.scope
 *   /proc/self/mountinfo  ... /sys/fs/cgroup/unified ... - cgroup2 cgroup2 rw
 *   stat("/sys/fs/cgroup/unified/user.slice/session-1.scope").st_ino
 *
 * Read once: a process moved to another cgroup while traced keeps the id
 * it had at attach (docs/compat.md).
 */
#include "attach/attach.h"
#include "runtime/abi.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The cgroup2 mount point in ubt's mount namespace, malloc'ed, or NULL. */
static char *cgroup2_mount(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], *found = NULL;
	while (f && !found && fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint options... - fstype source opts */
		char *dash = strstr(line, " - ");
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		char *p = line;
		for (int i = 0; i < 4 && p; i++)
			p = strchr(p + 1, ' ');
		if (!p)
			continue;
		char *end = strchr(p + 1, ' ');
		if (end)
			found = xstrndup(p + 1, (size_t)(end - p - 1));
	}
	if (f)
		fclose(f);
	return found;
}

uint64_t att_cgroup_id(pid_t pid)
{
	char path[64], line[4096];
	uint64_t id = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	FILE *f = fopen(path, "r");
	char *mnt = cgroup2_mount();
	while (f && mnt && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		char *dir = xasprintf("%s%s", mnt, line + 3);
		struct stat st;
		if (!stat(dir, &st))
			id = (uint64_t)st.st_ino;
		free(dir);
		break;
	}
	if (f)
		fclose(f);
	free(mnt);
	return id;
}

/*
 * A target in another user namespace than ubt's: its uid_map and gid_map
 * ("first lower count" lines: ids first.. in it are the host's lower..),
 * for the runtime to give uid and gid as the host sees them, as bpftrace
 * does (rt_builtin.c).  Nothing when the namespace is ubt's.
 */
void att_user_idmaps(pid_t pid, struct rt_shm_header *h)
{
	struct stat mine, its;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat("/proc/self/ns/user", &mine) || stat(path, &its) ||
	    (mine.st_ino == its.st_ino && mine.st_dev == its.st_dev))
		return;
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, k ? "gid_map" : "uid_map");
		FILE *f = fopen(path, "re");
		unsigned first, lower, count;
		uint32_t n = 0;
		while (f && fscanf(f, "%u %u %u", &first, &lower, &count) == 3) {
			if (n < RT_IDMAP_MAX)
				h->idmap[k][n] = (struct rt_idmap){first, lower, count};
			n++;
		}
		if (f)
			fclose(f);
		/* the kernel allows 340 lines; the header has room for a few */
		if (n > RT_IDMAP_MAX)
			fprintf(stderr,
				"WARNING: pid %d: its user namespace's %s has %u lines; ubt keeps "
				"the first %d: %s of the others read as 65534\n",
				(int)pid, k ? "gid_map" : "uid_map", n, RT_IDMAP_MAX,
				k ? "gids" : "uids");
		h->idmap_n[k] = n < RT_IDMAP_MAX ? n : RT_IDMAP_MAX;
	}
}
