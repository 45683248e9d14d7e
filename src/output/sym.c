/*
 * sym.c - addresses of the target to names: usym(), func, ustack frames.
 *
 * Pipeline position: output.  Probe code only records raw addresses (in
 * printf records and map keys); ubt turns them into names when it prints.
 * Since printing happens after the target may have exited (END, the final
 * map print), the target's mappings are snapshotted while it is alive
 * (out_sym_init() at attach, refreshed on a miss while /proc/PID/maps can
 * still be read), and each object's function symbols are read once, from
 * the file, into a sorted table:
 *
 *   addr -> mapping (path, start, offset) -> ELF file -> vaddr = addr - bias
 *        -> last symbol with value <= vaddr < value + size -> "name" / "name+off"
 *
 * Symbols come from .symtab, else .dynsym, plus the separate debug file
 * when there is one (/usr/lib/debug/.build-id/xx/yyyy.debug from the
 * build-id note, or .gnu_debuglink next to the file or under /usr/lib/debug),
 * which is how a stripped Debian library gets its static functions back.
 * C++ names are demangled unless BPFTRACE_NO_CPP_DEMANGLE is set.
 *
 * Addresses inside ubt's trampolines (the return address `func` records in
 * a uprobe is one) are first translated to their site (out_sym_alias()).
 */
#include "output.h"
#include "sym.h"
#include "elf/elfsym.h"
#include "util/demangle.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

struct sym {
	uint64_t value, size;
	char *name; /* demangled when enabled */
};

struct symfile {
	dev_t dev;
	ino_t ino;
	char *path;
	char *mapped; /* a file replaced or removed since it was mapped ("PATH
		       * (deleted)"): /proc/PID/map_files/START-END, the one it runs */
	bool loaded;
	struct sym *syms; /* sorted by value */
	int nsyms;
	uint64_t bias; /* for the mapping being resolved; set per lookup */
	struct ef_file ef;
	bool open;
};

struct alias {
	uint64_t lo, hi, to;
};

static struct {
	pid_t pid;
	struct proc_map *maps;
	int nmaps;
	struct symfile *files;
	int nfiles;
	struct alias *aliases;
	int naliases;
	bool demangle;
	uint64_t refreshed_ns; /* when the snapshot was last taken */
} S;

static struct symfile *file_of(const struct proc_map *m);
static void load_file(struct symfile *sf);

/* A mapping's path that /proc/PID/maps marks " (deleted)". */
static bool deleted(const char *path)
{
	size_t n = strlen(path), k = strlen(" (deleted)");
	return n > k && !strcmp(path + n - k, " (deleted)");
}

void out_sym_init(pid_t pid)
{
	S.pid = pid;
	S.demangle = demangle_enabled();
	struct proc_map *maps;
	int n;
	/* after the target exited the last snapshot stays */
	if (pid > 0 && !proc_maps_read(pid, &maps, &n)) {
		proc_maps_free(S.maps, S.nmaps);
		S.maps = maps;
		S.nmaps = n;
		/* a replaced or removed file is read through the process: now,
		 * while it lives (its symbols are wanted after it exits too) */
		for (int i = 0; i < n; i++)
			if (maps[i].ino && strchr(maps[i].perms, 'x') && deleted(maps[i].path)) {
				struct symfile *sf = file_of(&maps[i]);
				if (!sf->loaded)
					load_file(sf);
			}
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	S.refreshed_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void out_sym_alias(uint64_t lo, uint64_t hi, uint64_t to)
{
	S.aliases = xrealloc(S.aliases, (S.naliases + 1) * sizeof(*S.aliases));
	S.aliases[S.naliases++] = (struct alias){lo, hi, to};
}

/*
 * One address often has several names: libc's free is also cfree@GLIBC_2.2.5,
 * __libc_free and __GI___libc_free (the last ones from its debug file).
 * bpftrace takes whichever its symbol cache sorts last (__GI___libc_malloc,
 * fclose@@GLIBC_2.2.5, ...); ubt names the address by the name a program
 * calls it by, which is also what a flame graph should show:
 *
 *   - never a symbol version (foo@VER, foo@@VER: .symtab spells versions
 *     into names; the version is cut if no other name is left);
 *   - global or weak over local, the default version over older ones
 *     (free over cfree, both exported);
 *   - exported (.dynsym) over not;
 *   - fewer leading underscores (write over __write), then shorter.
 */
struct cand {
	uint64_t value, size;
	int score;
	char *name;
};

static int cand_score(const struct ef_func *ef)
{
	int under = 0;
	while (ef->name[under] == '_')
		under++;
	return (strchr(ef->name, '@') ? -1000 : 0) + ef->rank * 100 + (ef->dynamic ? 50 : 0) -
	       under * 10;
}

static void cand_add(const struct ef_func *ef, void *arg)
{
	struct buf *b = arg;
	if (ef->plt) /* bpftrace leaves a PLT entry's address in hex */
		return;
	struct cand c = {ef->value, ef->size, cand_score(ef), xstrdup(ef->name)};
	buf_append(b, &c, sizeof(c));
}

/* by address, the best name first */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->score != y->score)
		return y->score - x->score;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The file as the target sees it: through its root (a container's or a
 * private mount's files are not the host's).  The host's path is tried
 * only when that fails (the process is gone), and taken only if it is the
 * very file the process mapped: a container's libc at the path of the
 * host's is another file, with other symbols.
 */
/* Opens p into sf if it is the file the process mapped. */
static bool open_same(struct symfile *sf, const char *p)
{
	if (ef_open(&sf->ef, p))
		return false;
	if (sf->ef.dev == sf->dev && sf->ef.ino == sf->ino)
		return true;
	ef_close(&sf->ef);
	return false;
}

static void load_file(struct symfile *sf)
{
	sf->loaded = true;
	if (sf->mapped) { /* the file at its path is another one now, or none */
		/* map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; the
		 * program is also /proc/PID/exe, which needs neither */
		char *exe = xasprintf("/proc/%d/exe", S.pid);
		bool ok = open_same(sf, sf->mapped) || open_same(sf, exe);
		free(exe);
		if (!ok)
			return;
		goto opened;
	}
	char *p = S.pid > 0 && sf->path[0] == '/' ? xasprintf("/proc/%d/root%s", S.pid, sf->path)
						   : xstrdup(sf->path);
	int ret = ef_open(&sf->ef, p);
	free(p);
	if (!ret && (sf->ef.dev != sf->dev || sf->ef.ino != sf->ino)) {
		/* replaced since the snapshot (an upgrade while ubt runs): the
		 * mapped file, through the process, or no names */
		ef_close(&sf->ef);
		for (int i = 0; i < S.nmaps && !sf->mapped; i++)
			if (S.maps[i].dev == sf->dev && S.maps[i].ino == sf->ino && S.pid > 0)
				sf->mapped = xasprintf("/proc/%d/map_files/%llx-%llx", (int)S.pid,
						       (unsigned long long)S.maps[i].start,
						       (unsigned long long)S.maps[i].end);
		if (!sf->mapped || !open_same(sf, sf->mapped))
			return;
		goto opened;
	}
	if (ret) {
		if (ef_open(&sf->ef, sf->path))
			return;
		if (sf->ef.dev != sf->dev || sf->ef.ino != sf->ino) {
			ef_close(&sf->ef);
			return;
		}
	}
opened:
	sf->open = true;
	struct buf b = {0};
	ef_foreach_func(&sf->ef, cand_add, &b);
	struct cand *c = (struct cand *)b.data;
	size_t n = b.len / sizeof(*c);
	if (n)
		qsort(c, n, sizeof(*c), cand_cmp);
	sf->syms = xcalloc(n ? n : 1, sizeof(*sf->syms));
	for (size_t i = 0; i < n; i++) {
		struct sym *last = sf->nsyms ? &sf->syms[sf->nsyms - 1] : NULL;
		if (last && last->value == c[i].value) { /* a worse name of the same address */
			if (c[i].size > last->size)
				last->size = c[i].size;
			free(c[i].name);
			continue;
		}
		char *at = strchr(c[i].name, '@');
		if (at)
			*at = 0;
		char *dem = S.demangle ? demangle(c[i].name) : NULL;
		if (dem) {
			free(c[i].name);
			c[i].name = dem;
		}
		sf->syms[sf->nsyms++] = (struct sym){c[i].value, c[i].size, c[i].name};
	}
	buf_free(&b);
}

static struct symfile *file_of(const struct proc_map *m)
{
	for (int i = 0; i < S.nfiles; i++)
		if (S.files[i].dev == m->dev && S.files[i].ino == m->ino)
			return &S.files[i];
	S.files = xrealloc(S.files, (S.nfiles + 1) * sizeof(*S.files));
	struct symfile *sf = &S.files[S.nfiles++];
	memset(sf, 0, sizeof(*sf));
	sf->dev = m->dev;
	sf->ino = m->ino;
	sf->path = xstrdup(m->path);
	if (S.pid > 0 && deleted(m->path))
		sf->mapped = xasprintf("/proc/%d/map_files/%llx-%llx", (int)S.pid,
				       (unsigned long long)m->start, (unsigned long long)m->end);
	return sf;
}

static const struct proc_map *map_of(uint64_t addr)
{
	for (int i = 0; i < S.nmaps; i++)
		if (addr >= S.maps[i].start && addr < S.maps[i].end)
			return &S.maps[i];
	return NULL;
}

/* "name" or "name+off"; NULL when the address is in no known function. */
static char *lookup(uint64_t addr, bool with_off)
{
	const struct proc_map *m = map_of(addr);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!m && S.pid > 0 && now - S.refreshed_ns > 50000000) {
		out_sym_init(S.pid); /* a library loaded since (dlopen); at most every 50 ms */
		m = map_of(addr);
	}
	if (!m || m->path[0] != '/' || !m->ino)
		return NULL;
	struct symfile *sf = file_of(m);
	if (!sf->loaded)
		load_file(sf);
	if (!sf->open || !sf->nsyms)
		return NULL;
	uint64_t bias;
	if (proc_load_bias(S.maps, S.nmaps, &sf->ef, &bias))
		return NULL;
	uint64_t v = addr - bias;
	int lo = 0, hi = sf->nsyms - 1, best = -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (sf->syms[mid].value <= v) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	/* the nearest symbol below that covers v (sizes may nest: skip unsized) */
	for (int i = best; i >= 0 && i > best - 8; i--) {
		const struct sym *s = &sf->syms[i];
		/* an unsized symbol (_init) names only its own address, as in bpftrace */
		if (v < s->value + (s->size ? s->size : 1)) {
			if (with_off && v != s->value)
				return xasprintf("%s+%llu", s->name, (unsigned long long)(v - s->value));
			return xstrdup(s->name);
		}
	}
	return NULL;
}

uint64_t out_sym_unalias(uint64_t addr)
{
	for (int i = 0; i < S.naliases; i++)
		if (addr >= S.aliases[i].lo && addr < S.aliases[i].hi)
			return S.aliases[i].to;
	return addr;
}

char *out_sym_text(uint64_t addr, bool with_off)
{
	addr = out_sym_unalias(addr);
	char *s = lookup(addr, with_off);
	return s ? s : xasprintf("0x%llx", (unsigned long long)addr);
}

const char *out_sym_path(uint64_t addr)
{
	const struct proc_map *m = map_of(out_sym_unalias(addr));
	return m && m->path[0] ? m->path : "unknown";
}

/* ---- for ustack (stack.c) ------------------------------------------------ */

const struct proc_map *out_sym_maps(int *n)
{
	*n = S.nmaps;
	return S.maps;
}

/* The symbol file of the object mapped at addr, loaded; NULL when addr is
 * in no file or it cannot be opened. */
static struct symfile *open_file_at(uint64_t addr)
{
	const struct proc_map *m = map_of(addr);
	if (!m || m->path[0] != '/' || !m->ino)
		return NULL;
	struct symfile *sf = file_of(m);
	if (!sf->loaded)
		load_file(sf);
	return sf->open ? sf : NULL;
}

int out_sym_dup(uint64_t addr, const char **path)
{
	struct symfile *sf = open_file_at(addr);
	if (!sf)
		return -ENOENT;
	int fd = fcntl(sf->ef.fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	*path = sf->ef.path;
	return fd;
}

/*
 * The function symbols of the object mapped at addr (sorted by value,
 * link-time addresses), its load bias and ELF handle.  -ENOENT when
 * addr is in no file or the file has no symbols.
 */
int out_sym_funcs(uint64_t addr, const struct out_sym_func **funcs, int *n, uint64_t *bias,
		  void **elf)
{
	struct symfile *sf = open_file_at(addr);
	if (!sf || proc_load_bias(S.maps, S.nmaps, &sf->ef, bias))
		return -ENOENT;
	_Static_assert(sizeof(struct sym) == sizeof(struct out_sym_func), "same layout");
	*funcs = (const struct out_sym_func *)sf->syms;
	*n = sf->nsyms;
	*elf = sf->ef.elf;
	return 0;
}
