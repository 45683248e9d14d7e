/*
 * cgpath.c - cgroup_path(id[, filter]) values as text: the cgroup whose
 * directory has inode `id`, in every cgroup hierarchy mounted here whose
 * name matches the filter, as bpftrace 0.17 prints it:
 *
 *   unified:/system.slice/ssh.service,memory:/system.slice,pids:/
 *
 * Pipeline position: output, called by values.c when a TY_CGPATH value is
 * printed.  The hierarchies come from /proc/mounts (device `cgroup2`: the
 * v2 hierarchy, named "unified"; device `cgroup`: a v1 hierarchy, named
 * after its mount directory, e.g. "memory" for /sys/fs/cgroup/memory);
 * "unified" comes first, the others in name order, hierarchies where no
 * directory has the inode are left out.  The id of the root of a
 * hierarchy is its mount point's inode ("/").  ubt resolves in its own
 * mount namespace, as bpftrace does.
 *
 * Finding a directory walks the hierarchy (at most CG_DEPTH_MAX levels
 * deep); the answer is remembered per (id, hierarchy) and checked with
 * one stat() before it is used again, as bpftrace's cache is.
 */
#include "output.h"
#include "output_internal.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { CG_DEPTH_MAX = 64, CG_ROOTS_MAX = 32, CG_CACHE = 64 };

struct cg_root {
	char name[64];
	char path[512];
};

/* The hierarchies mounted here; unified first, then by name. */
static int cg_roots(struct cg_root *out, int max)
{
	FILE *f = fopen("/proc/mounts", "r");
	char line[1024];
	int n = 0;
	while (f && n < max && fgets(line, sizeof(line), f)) {
		char dev[64], dir[512];
		if (sscanf(line, "%63s %511s", dev, dir) != 2)
			continue;
		if (!strcmp(dev, "cgroup2")) {
			snprintf(out[n].name, sizeof(out[n].name), "unified");
		} else if (!strcmp(dev, "cgroup")) {
			const char *base = strrchr(dir, '/');
			snprintf(out[n].name, sizeof(out[n].name), "%.63s", base ? base + 1 : dir);
		} else {
			continue;
		}
		snprintf(out[n].path, sizeof(out[n].path), "%s", dir);
		n++;
	}
	if (f)
		fclose(f);
	for (int i = 1; i < n; i++) /* insertion sort: a handful of entries */
		for (int j = i; j > 0; j--) {
			bool ju = !strcmp(out[j].name, "unified"), pu = !strcmp(out[j - 1].name, "unified");
			if (pu || (!ju && strcmp(out[j - 1].name, out[j].name) <= 0))
				break;
			struct cg_root t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* The directory under dir (depth levels below the root) whose inode is
 * ino, into path (which holds dir on entry); false if none. */
static bool cg_find(char *path, size_t cap, uint64_t ino, int depth)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool found = false;
	size_t len = strlen(path);
	while (d && !found && (e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    len + 1 + strlen(e->d_name) + 1 > cap)
			continue;
		snprintf(path + len, cap - len, "/%s", e->d_name);
		if (lstat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		found = st.st_ino == ino || (depth < CG_DEPTH_MAX && cg_find(path, cap, ino, depth + 1));
	}
	if (d)
		closedir(d);
	if (!found)
		path[len] = 0;
	return found;
}

static struct {
	uint64_t ino;
	char *full; /* the directory found, malloc'ed */
} cache[CG_CACHE];
static unsigned cache_next;

/* The path of cgroup `ino` in the hierarchy at root ("/" for the root),
 * into out; false if it has none there. */
static bool cg_path_in(const struct cg_root *r, uint64_t ino, char *out, size_t cap)
{
	struct stat st;
	size_t rl = strlen(r->path);
	if (!stat(r->path, &st) && st.st_ino == ino) {
		snprintf(out, cap, "/");
		return true;
	}
	for (unsigned i = 0; i < CG_CACHE; i++)
		if (cache[i].full && cache[i].ino == ino && !strncmp(cache[i].full, r->path, rl) &&
		    cache[i].full[rl] == '/' && !stat(cache[i].full, &st) && st.st_ino == ino) {
			snprintf(out, cap, "%s", cache[i].full + rl);
			return true;
		}
	char path[4096];
	snprintf(path, sizeof(path), "%s", r->path);
	if (!cg_find(path, sizeof(path), ino, 1))
		return false;
	unsigned k = cache_next++ % CG_CACHE;
	free(cache[k].full);
	cache[k].ino = ino;
	cache[k].full = xstrdup(path);
	snprintf(out, cap, "%s", path + rl);
	return true;
}

void out_cgroup_path(struct buf *b, const char *filter, uint64_t ino)
{
	struct cg_root roots[CG_ROOTS_MAX];
	int n = cg_roots(roots, CG_ROOTS_MAX);
	bool first = true;
	for (int i = 0; i < n; i++) {
		char p[4096];
		if (fnmatch(filter && *filter ? filter : "*", roots[i].name, 0) ||
		    !cg_path_in(&roots[i], ino, p, sizeof(p)))
			continue;
		buf_printf(b, "%s%s:%s", first ? "" : ",", roots[i].name, p);
		first = false;
	}
}
