/*
 * findlib.c - a program or library named without a path, found as the
 * dynamic linker (or a shell, for a program) would: the -p process's
 * mappings, PATH, /etc/ld.so.cache, the usual library directories.
 * `uprobe:libc:malloc`, `usdt:libpython3.11:python:*`, `ubt -l 'uprobe:bash:*'`.
 *
 * Layer rule: see elfsym.h (read-only; util/ only).
 */
#include "elf/findlib.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * "libc" names libc.so.6, "stdc++" and "libstdc++" name libstdc++.so.6,
 * "libc.so.6" names itself (bpftrace's rule: the file name equals the name,
 * or starts with NAME.so or libNAME.so).
 */
bool ef_lib_name_matches(const char *base, const char *name)
{
	size_t n = strlen(name);
	if (!strcmp(base, name))
		return true;
	if (!strncmp(base, name, n) && !strncmp(base + n, ".so", 3))
		return true;
	return !strncmp(base, "lib", 3) && !strncmp(base + 3, name, n) &&
	       !strncmp(base + 3 + n, ".so", 3);
}

/*
 * /etc/ld.so.cache, the new format ("glibc-ld.so.cache1.1"):
 *
 *   0   "glibc-ld.so.cache1.1"   20 bytes
 *   20  u32 nlibs, u32 len_strings, u8 flags, 3 pad, u32 ext_off, 3 x u32
 *   48  nlibs entries of 24 bytes: i32 flags, u32 key, u32 value,
 *       u32 osversion, u64 hwcap   (key, value: offsets of the soname and
 *                                   the path from the start of the file)
 *
 * Flags 0x0303 mark x86-64 libc6 libraries.  The first matching entry wins,
 * as in the dynamic linker (ldconfig sorts the cache).
 */
static char *ldcache_find(const char *name)
{
	char *data;
	size_t len;
	char *found = NULL;
	if (read_file("/etc/ld.so.cache", &data, &len))
		return NULL;
	static const char magic[] = "glibc-ld.so.cache1.1";
	const char *p = data;
	size_t base = 0;
	if (len > 11 && !memcmp(data, "ld.so-1.7.0", 11)) {
		/* old format first: skip its entries (12 bytes each) */
		uint32_t nold;
		memcpy(&nold, data + 12, 4);
		base = ALIGN_UP(16 + (size_t)nold * 12, 8);
		p = data + base;
	}
	if (base + 48 > len || memcmp(p, magic, sizeof(magic) - 1))
		goto out;
	uint32_t nlibs;
	memcpy(&nlibs, p + 20, 4);
	for (uint32_t i = 0; i < nlibs && base + 48 + (i + 1) * 24 <= len; i++) {
		const char *e = p + 48 + i * 24;
		int32_t flags;
		uint32_t key, value;
		memcpy(&flags, e, 4);
		memcpy(&key, e + 4, 4);
		memcpy(&value, e + 8, 4);
		if ((flags & 0xff00) != 0x0300 || base + key >= len || base + value >= len)
			continue;
		const char *soname = p + key, *path = p + value;
		if (memchr(soname, 0, len - base - key) && memchr(path, 0, len - base - value) &&
		    ef_lib_name_matches(soname, name)) {
			found = xstrdup(path);
			break;
		}
	}
out:
	free(data);
	return found;
}

static const char *const lib_dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
				       "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"};

char *ef_find_binary_where(pid_t pid)
{
	struct buf b = {0};
	if (pid > 0)
		buf_printf(&b, "the mappings of pid %d, ", (int)pid);
	buf_printf(&b, "PATH, /etc/ld.so.cache");
	for (size_t i = 0; i < ARRAY_SIZE(lib_dirs); i++)
		buf_printf(&b, ", %s", lib_dirs[i]);
	return b.data;
}

char *ef_find_binary(pid_t pid, const char *name)
{
	if (pid > 0) {
		struct proc_map *maps;
		int n;
		char *found = NULL;
		if (!proc_maps_read(pid, &maps, &n)) {
			for (int i = 0; i < n && !found; i++) {
				const char *sl = strrchr(maps[i].path, '/');
				if (maps[i].path[0] == '/' && ef_lib_name_matches(sl + 1, name))
					found = xstrdup(maps[i].path);
			}
			proc_maps_free(maps, n);
		}
		if (found)
			return found;
	}
	const char *path = getenv("PATH");
	char *copy = xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", dir, name);
		struct stat st;
		if (!stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK)) {
			free(copy);
			return p;
		}
		free(p);
	}
	free(copy);
	char *c = ldcache_find(name);
	if (c)
		return c;
	for (size_t i = 0; i < ARRAY_SIZE(lib_dirs); i++) {
		DIR *d = opendir(lib_dirs[i]);
		struct dirent *de;
		char *best = NULL;
		while (d && (de = readdir(d))) {
			/* the shortest match: libc.so.6 rather than libc.so.6.debug */
			if (ef_lib_name_matches(de->d_name, name) &&
			    (!best || strlen(de->d_name) < strlen(best))) {
				free(best);
				best = xstrdup(de->d_name);
			}
		}
		if (d)
			closedir(d);
		if (best) {
			char *p = xasprintf("%s/%s", lib_dirs[i], best);
			free(best);
			return p;
		}
	}
	return NULL;
}
