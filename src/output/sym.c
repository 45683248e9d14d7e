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
#include "attach/elfsym.h"
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
	bool loaded;
	struct sym *syms; /* sorted by value */
	int nsyms;
	uint64_t bias; /* for the mapping being resolved; set per lookup */
	struct elf_file ef;
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

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* at one address prefer the sized, then the longer-lived (global) name */
	return (y->size > 0) - (x->size > 0);
}

static void read_table(Elf *e, struct symfile *sf, Elf64_Word type)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 1; d && i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			int t = GELF_ST_TYPE(s.st_info);
			if (t != STT_FUNC && t != STT_GNU_IFUNC)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			char *dem = S.demangle ? demangle(name) : NULL;
			/* room doubles at 16, 32, 64 ...: libc's debug symbols are
			 * thousands, one realloc each was quadratic */
			int n = sf->nsyms;
			if (n == 0 || (n >= 16 && !(n & (n - 1))))
				sf->syms = xrealloc(sf->syms, (n ? 2 * (size_t)n : 16) * sizeof(*sf->syms));
			sf->syms[sf->nsyms++] =
			    (struct sym){s.st_value, s.st_size, dem ? dem : xstrdup(name)};
		}
	}
}

static bool has_table(Elf *e, Elf64_Word type)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return true;
	}
	return false;
}

/* The build-id note's bytes as hex ("ab" + "/" + "cdef..."), or NULL. */
static char *build_id_path(Elf *e)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) || nh.n_descsz < 2)
				continue;
			const uint8_t *id = (const uint8_t *)d->d_buf + desc_off;
			struct buf b = {0};
			buf_printf(&b, "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (size_t i = 1; i < nh.n_descsz; i++)
				buf_printf(&b, "%02x", id[i]);
			buf_printf(&b, ".debug");
			return b.data;
		}
	}
	return NULL;
}

/* .gnu_debuglink's file name, looked up next to path and under /usr/lib/debug. */
static char *debuglink_path(Elf *e, const char *path)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || !(nm = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    strcmp(nm, ".gnu_debuglink"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_size || !memchr(d->d_buf, 0, d->d_size))
			return NULL;
		const char *link = d->d_buf;
		char *dir = xstrdup(path);
		char *sl = strrchr(dir, '/');
		if (sl)
			*sl = 0;
		char *cands[3] = {xasprintf("%s/%s", sl ? dir : ".", link),
				  xasprintf("%s/.debug/%s", sl ? dir : ".", link),
				  xasprintf("/usr/lib/debug%s/%s", sl ? dir : "", link)};
		char *found = NULL;
		for (int i = 0; i < 3; i++) {
			if (!found && strcmp(cands[i], path) && !access(cands[i], R_OK))
				found = cands[i];
			else
				free(cands[i]);
		}
		free(dir);
		return found;
	}
	return NULL;
}

static void load_file(struct symfile *sf)
{
	sf->loaded = true;
	char *p = S.pid > 0 && sf->path[0] == '/' ? xasprintf("/proc/%d/root%s", S.pid, sf->path)
						   : xstrdup(sf->path);
	int ret = elf_file_open(&sf->ef, p);
	free(p);
	if (ret && elf_file_open(&sf->ef, sf->path))
		return;
	sf->open = true;
	Elf *e = sf->ef.elf;
	bool symtab = has_table(e, SHT_SYMTAB);
	read_table(e, sf, symtab ? SHT_SYMTAB : SHT_DYNSYM);
	if (!symtab) {
		char *dbg = build_id_path(e);
		if (!dbg || access(dbg, R_OK)) {
			free(dbg);
			dbg = debuglink_path(e, sf->path);
		}
		struct elf_file df;
		if (dbg && !elf_file_open(&df, dbg)) {
			read_table(df.elf, sf, SHT_SYMTAB);
			elf_file_close(&df);
		}
		free(dbg);
	}
	qsort(sf->syms, sf->nsyms, sizeof(*sf->syms), sym_cmp);
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

/*
 * The function symbols of the object mapped at addr (sorted by value,
 * link-time addresses), its load bias and ELF handle.  -ENOENT when
 * addr is in no file or the file has no symbols.
 */
int out_sym_funcs(uint64_t addr, const struct out_sym_func **funcs, int *n, uint64_t *bias,
		  void **elf)
{
	const struct proc_map *m = map_of(addr);
	if (!m || m->path[0] != '/' || !m->ino)
		return -ENOENT;
	struct symfile *sf = file_of(m);
	if (!sf->loaded)
		load_file(sf);
	if (!sf->open || proc_load_bias(S.maps, S.nmaps, &sf->ef, bias))
		return -ENOENT;
	_Static_assert(sizeof(struct sym) == sizeof(struct out_sym_func), "same layout");
	*funcs = (const struct out_sym_func *)sf->syms;
	*n = sf->nsyms;
	*elf = sf->ef.elf;
	return 0;
}
