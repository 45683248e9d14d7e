/*
 * test_ldcache.c - table tests of the /etc/ld.so.cache lookup that
 * ef_find_binary() (src/elf/findlib.c) makes for a library named without
 * a path, as the dynamic linker would.
 *
 * The lookup reads the file at its fixed path, so each row's cache (built
 * here: the "glibc-ld.so.cache1.1" format, optionally after the old
 * "ld.so-1.7.0" part) is bind-mounted over /etc/ld.so.cache in a mount
 * namespace of this process only; nothing outside it sees the change.
 * PATH points at an empty directory and the libraries' names are ones no
 * library directory holds, so a path found can only come from the cache.
 * Without the right to make a mount namespace (not root) the test is
 * skipped.
 */
#include "elf/findlib.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"

#define X86_64_LIBC6 0x0303 /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
#define AARCH64_LIBC6 0x0a03
#define MAXE 3

struct entry {
	int32_t flags;
	const char *soname, *path;
};

static const struct cache_row {
	const char *name;   /* what the row shows */
	const char *lookup; /* the library the script names */
	struct entry e[MAXE];
	uint32_t nlibs;     /* the header's count; 0: the number of entries */
	bool old_part;      /* the old format's entries first */
	bool bad_magic;
	int cut;            /* > 0: the file is cut to this many bytes */
	uint32_t bad_key;   /* > 0: entry 0's soname offset is this */
	const char *want;   /* NULL: not found */
} rows[] = {
	{"one library", "ubtfake", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}},
	 .want = "/opt/t/libubtfake.so.1"},
	{"named with lib", "libubtfake", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}},
	 .want = "/opt/t/libubtfake.so.1"},
	{"named by its soname", "libubtfake.so.1",
	 {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}},
	 .want = "/opt/t/libubtfake.so.1"},
	{"the first match wins", "ubtfake",
	 {{X86_64_LIBC6, "libubtfake.so.2", "/opt/a/libubtfake.so.2"},
	  {X86_64_LIBC6, "libubtfake.so.1", "/opt/b/libubtfake.so.1"}},
	 .want = "/opt/a/libubtfake.so.2"},
	{"after other libraries", "ubtfake",
	 {{X86_64_LIBC6, "libubtother.so.1", "/opt/a/libubtother.so.1"},
	  {X86_64_LIBC6, "libubtfake2.so.1", "/opt/a/libubtfake2.so.1"},
	  {X86_64_LIBC6, "libubtfake.so.1", "/opt/c/libubtfake.so.1"}},
	 .want = "/opt/c/libubtfake.so.1"},
	{"another architecture's entry is passed over", "ubtfake",
	 {{AARCH64_LIBC6, "libubtfake.so.1", "/opt/arm/libubtfake.so.1"},
	  {X86_64_LIBC6, "libubtfake.so.1", "/opt/x86/libubtfake.so.1"}},
	 .want = "/opt/x86/libubtfake.so.1"},
	{"only another architecture's", "ubtfake",
	 {{AARCH64_LIBC6, "libubtfake.so.1", "/opt/arm/libubtfake.so.1"}}},
	{"a 32-bit entry (flags 0x0003) is passed over", "ubtfake",
	 {{0x0003, "libubtfake.so.1", "/opt/i386/libubtfake.so.1"}}},
	{"not in the cache", "ubtnone", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}}},
	{"a prefix is not a match", "ubtfak", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}}},
	{"after the old format's part", "ubtfake",
	 {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}}, .old_part = true,
	 .want = "/opt/t/libubtfake.so.1"},
	{"a bad magic", "ubtfake", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}},
	 .bad_magic = true},
	{"more entries counted than there are", "ubtfake",
	 {{X86_64_LIBC6, "libubtother.so.1", "/opt/a/libubtother.so.1"}}, .nlibs = 1000},
	{"a count of 2^32-1 with the match first", "ubtfake",
	 {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}}, .nlibs = 0xffffffff,
	 .want = "/opt/t/libubtfake.so.1"},
	{"a soname offset past the end", "ubtfake",
	 {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}}, .bad_key = 0x7fffffff},
	{"cut inside the header", "ubtfake", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}},
	 .cut = 30},
	{"cut inside the entries", "ubtfake", {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}},
	 .cut = 60},
	{"cut inside the path (no NUL)", "ubtfake",
	 {{X86_64_LIBC6, "libubtfake.so.1", "/opt/t/libubtfake.so.1"}}, .cut = -3},
	{"one byte", "ubtfake", {{0}}, .cut = 1},
};

/*
 * The cache file of a row: the new format's header (magic, nlibs,
 * len_strings, flags, ext_off, unused), its entries (flags, key, value,
 * osversion, hwcap), then the strings; key and value count from the new
 * header's first byte.
 */
static struct buf build_cache(const struct cache_row *r)
{
	struct buf b = {0};
	size_t base = 0;
	if (r->old_part) {
		/* "ld.so-1.7.0", nlibs 2, two 12-byte entries, padded to 8 */
		uint8_t old[16 + 24 + 0] = "ld.so-1.7.0";
		uint32_t nold = 2;
		memcpy(old + 12, &nold, 4);
		buf_append(&b, old, sizeof(old));
		base = b.len;
	}
	int n = 0;
	while (n < MAXE && r->e[n].soname)
		n++;
	uint8_t head[48] = {0};
	memcpy(head, r->bad_magic ? "glibc-ld.so.cache1.0" : "glibc-ld.so.cache1.1", 20);
	uint32_t nlibs = r->nlibs ? r->nlibs : (uint32_t)n;
	memcpy(head + 20, &nlibs, 4);
	buf_append(&b, head, sizeof(head));
	uint32_t strings = 48 + 24 * n;
	struct buf str = {0};
	for (int i = 0; i < n; i++) {
		uint8_t e[24] = {0};
		uint32_t key = strings + (uint32_t)str.len;
		buf_append(&str, r->e[i].soname, strlen(r->e[i].soname) + 1);
		uint32_t value = strings + (uint32_t)str.len;
		buf_append(&str, r->e[i].path, strlen(r->e[i].path) + 1);
		if (i == 0 && r->bad_key)
			key = r->bad_key;
		memcpy(e, &r->e[i].flags, 4);
		memcpy(e + 4, &key, 4);
		memcpy(e + 8, &value, 4);
		buf_append(&b, e, sizeof(e));
	}
	uint32_t len_strings = (uint32_t)str.len;
	memcpy(b.data + base + 24, &len_strings, 4);
	if (str.len)
		buf_append(&b, str.data, str.len);
	buf_free(&str);
	if (r->cut > 0 && (size_t)r->cut < b.len)
		b.len = (size_t)r->cut;
	else if (r->cut < 0)
		b.len -= (size_t)-r->cut;
	return b;
}

static int write_all(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ssize_t w = n ? write(fd, p, n) : 0;
	close(fd);
	return w == (ssize_t)n ? 0 : -EIO;
}

int main(void)
{
	/* the real cache first, outside any namespace: libc is found */
	char *libc = ef_find_binary(0, "libc");
	CHECK(libc && strstr(libc, "/libc.so"), "libc found at %s", libc ? libc : "(nothing)");
	if (libc)
		CHECK(access(libc, R_OK) == 0, "%s exists", libc);
	free(libc);

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		check_skip("no mount namespace (needs CAP_SYS_ADMIN)");
		return check_summary("ldcache");
	}
	if (access("/etc/ld.so.cache", F_OK) < 0) {
		check_skip("no /etc/ld.so.cache to mount over");
		return check_summary("ldcache");
	}
	char dir[] = "/tmp/ubt-ldcache-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(false, "mkdtemp: %s", strerror(errno));
		return check_summary("ldcache");
	}
	char *file = xasprintf("%s/ld.so.cache", dir);
	char *empty = xasprintf("%s/bin", dir);
	CHECK_EQ(mkdir(empty, 0755), 0);
	setenv("PATH", empty, 1);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct cache_row *r = &rows[i];
		struct buf b = build_cache(r);
		int ret = write_all(file, b.data, b.len);
		buf_free(&b);
		CHECK_EQ(ret, 0, "%s: writing the cache", r->name);
		if (mount(file, "/etc/ld.so.cache", NULL, MS_BIND, NULL) < 0) {
			CHECK(false, "%s: bind mount: %s", r->name, strerror(errno));
			continue;
		}
		char *got = ef_find_binary(0, r->lookup);
		CHECK_STR(got, r->want, "%s ('%s')", r->name, r->lookup);
		free(got);
		CHECK_EQ(umount2("/etc/ld.so.cache", 0), 0, "%s", r->name);
	}
	unlink(file);
	rmdir(empty);
	rmdir(dir);
	free(file);
	free(empty);
	return check_summary("ldcache");
}
