/*
 * elfsym.c - symbols of ELF files and the address space of a process.
 *
 * Attach resolves every probe address here: the probe's file is opened with
 * libelf, its function symbol is looked up (.symtab first, because it also
 * holds static functions; .dynsym for stripped libraries such as libc), and
 * the file's load bias in the target is computed from /proc/PID/maps, so
 * that runtime address = bias + st_value.
 *
 * The bias comes from the mapping's file offset, not from its path:
 *
 *   55d0c2a3f000-55d0c2a40000 r--p 00000000 fe:01 1314  /tmp/prog   <- PT_LOAD #0
 *   55d0c2a40000-55d0c2a41000 r-xp 00001000 fe:01 1314  /tmp/prog   <- PT_LOAD #1
 *
 * PT_LOAD #1 has p_offset 0x1000, p_vaddr 0x1000, so bias = 0x55d0c2a40000
 * - 0x1000.  Files are matched by device and inode, which survives
 * relative paths, symlinks and "/proc/PID/root" prefixes.
 */
#include "elf/elfsym.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int ef_open(struct ef_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		if (e)
			elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	f->path = xstrdup(path);
	f->fd = fd;
	f->elf = e;
	f->is_pie = eh.e_type == ET_DYN;
	f->entry = eh.e_entry;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

void ef_close(struct ef_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->fde);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

/*
 * File offset of virtual address vaddr: from the symbol's section when it
 * has one with file contents, else from the PT_LOAD segment holding it.
 * Returns 0 when the address has no bytes in the file (.bss).
 */
static uint64_t vaddr_to_off(Elf *e, uint64_t vaddr, size_t shndx)
{
	if (shndx != SHN_UNDEF && shndx < SHN_LORESERVE) {
		Elf_Scn *scn = elf_getscn(e, shndx);
		GElf_Shdr sh;
		if (scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && vaddr >= sh.sh_addr &&
		    vaddr < sh.sh_addr + sh.sh_size)
			return sh.sh_offset + (vaddr - sh.sh_addr);
	}
	size_t n;
	if (elf_getphdrnum(e, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			return ph.p_offset + (vaddr - ph.p_vaddr);
	}
	return 0;
}

/* Reads len bytes of the file at link-time address vaddr (from its PT_LOAD). */
int ef_read_vaddr(struct ef_file *f, uint64_t vaddr, uint8_t *buf, size_t len)
{
	size_t n;
	if (elf_getphdrnum(f->elf, &n) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		ssize_t r = pread(f->fd, buf, len, (off_t)(ph.p_offset + vaddr - ph.p_vaddr));
		return r == (ssize_t)len ? 0 : -EIO;
	}
	return -EFAULT;
}

static bool sym_type_ok(int type, bool funcs_only)
{
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	if (funcs_only)
		return false;
	return type == STT_OBJECT || type == STT_NOTYPE || type == STT_TLS || type == STT_COMMON;
}

/* The SHT_GNU_versym data that goes with symbol table section symtab_idx. */
static Elf_Data *find_versym(Elf *e, size_t symtab_idx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym && sh.sh_link == symtab_idx)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/*
 * Preference among definitions of one name: global or weak over local (two
 * static functions called "init" in different files: the first is taken),
 * and in .dynsym the default version over older ones (libc's memcpy@@GLIBC_2.14
 * over memcpy@GLIBC_2.2.5, which .gnu.version marks hidden).
 */
static int sym_rank(const GElf_Sym *s, Elf_Data *versym, size_t i)
{
	int rank = GELF_ST_BIND(s->st_info) == STB_LOCAL ? 0 : 2;
	GElf_Versym v;
	if (versym && gelf_getversym(versym, (int)i, &v) && !(v & 0x8000))
		rank++;
	else if (!versym)
		rank++;
	return rank;
}

/*
 * The one loop over a symbol table: every symbol (index 0 left out) of the
 * tables of type, with its name ("" if none) and rank; fn returns true to
 * stop the walk, and then walk_tables returns true.
 */
typedef bool (*walk_fn)(const GElf_Sym *s, const char *name, int rank, void *arg);

static bool walk_tables(Elf *e, Elf64_Word type, walk_fn fn, void *arg)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		Elf_Data *versym = find_versym(e, elf_ndxscn(scn));
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 1; d && i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (fn(&s, name ? name : "", sym_rank(&s, versym, i), arg))
				return true;
		}
	}
	return false;
}

struct find_walk {
	const char *name;
	bool funcs_only;
	int best_rank;
	GElf_Sym best;
};

static bool find_one(const GElf_Sym *s, const char *name, int rank, void *arg)
{
	struct find_walk *w = arg;
	if (s->st_shndx != SHN_UNDEF && sym_type_ok(GELF_ST_TYPE(s->st_info), w->funcs_only) &&
	    !strcmp(name, w->name) && rank > w->best_rank) {
		w->best = *s;
		w->best_rank = rank;
	}
	return false;
}

/* Looks name up in the symbol tables of type sh_type: its best-ranked definition. */
static int find_in_table(Elf *e, Elf64_Word sh_type, const char *name, bool funcs_only,
			 struct ef_symbol *out)
{
	struct find_walk w = {name, funcs_only, -1};
	walk_tables(e, sh_type, find_one, &w);
	if (w.best_rank < 0)
		return -ENOENT;
	out->name = xstrdup(name);
	out->value = w.best.st_value;
	out->size = w.best.st_size;
	out->file_off = vaddr_to_off(e, w.best.st_value, w.best.st_shndx);
	return 0;
}

static int find_sym(struct ef_file *f, const char *name, bool funcs_only, struct ef_symbol *sym)
{
	memset(sym, 0, sizeof(*sym));
	if (!f->elf)
		return -EINVAL;
	if (find_in_table(f->elf, SHT_SYMTAB, name, funcs_only, sym) == 0)
		return 0;
	return find_in_table(f->elf, SHT_DYNSYM, name, funcs_only, sym);
}

int ef_find_func(struct ef_file *f, const char *name, struct ef_symbol *sym)
{
	return find_sym(f, name, true, sym);
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

struct func_walk {
	bool dynamic, debug_file;
	ef_func_fn fn;
	void *arg;
};

static bool func_one(const GElf_Sym *s, const char *name, int rank, void *arg)
{
	struct func_walk *w = arg;
	/* an undefined function with an address is a non-PIE program's PLT
	 * entry, which bpftrace lists and probes */
	if (!s->st_value || !sym_type_ok(GELF_ST_TYPE(s->st_info), true) || !*name)
		return false;
	struct ef_func ef = {.name = name, .value = s->st_value, .size = s->st_size, .rank = rank};
	ef.dynamic = w->dynamic;
	ef.debug_file = w->debug_file;
	ef.plt = s->st_shndx == SHN_UNDEF;
	w->fn(&ef, w->arg);
	return false;
}

static void foreach_in(Elf *e, Elf64_Word type, bool debug_file, ef_func_fn fn, void *arg)
{
	struct func_walk w = {type == SHT_DYNSYM, debug_file, fn, arg};
	walk_tables(e, type, func_one, &w);
}

void ef_foreach_func(struct ef_file *f, ef_func_fn fn, void *arg)
{
	if (!f->elf)
		return;
	bool symtab = has_table(f->elf, SHT_SYMTAB);
	foreach_in(f->elf, SHT_SYMTAB, false, fn, arg);
	foreach_in(f->elf, SHT_DYNSYM, false, fn, arg);
	if (symtab)
		return;
	char *dbg = ef_debug_file(f);
	struct ef_file df;
	bool found = false;
	if (dbg && !ef_open(&df, dbg)) {
		found = has_table(df.elf, SHT_SYMTAB);
		foreach_in(df.elf, SHT_SYMTAB, true, fn, arg);
		ef_close(&df);
	}
	free(dbg);
	if (!found) /* a stripped Go program: its own function table (gosym.c) */
		ef_foreach_go_func(f, fn, arg);
}

int ef_find_symbol(struct ef_file *f, const char *name, struct ef_symbol *sym)
{
	return find_sym(f, name, false, sym);
}

struct sym_walk {
	bool dynamic;
	ef_sym_fn fn;
	void *arg;
};

static bool sym_one(const GElf_Sym *s, const char *name, int rank, void *arg)
{
	struct sym_walk *w = arg;
	struct ef_sym es = {.name = name, .value = s->st_value, .size = s->st_size};
	es.type = GELF_ST_TYPE(s->st_info);
	es.defined = s->st_shndx != SHN_UNDEF;
	es.dynamic = w->dynamic;
	return w->fn(&es, w->arg);
}

static bool foreach_sym_in(Elf *e, Elf64_Word type, ef_sym_fn fn, void *arg)
{
	struct sym_walk w = {type == SHT_DYNSYM, fn, arg};
	return walk_tables(e, type, sym_one, &w);
}

bool ef_foreach_sym(struct ef_file *f, ef_sym_fn fn, void *arg)
{
	return f->elf && (foreach_sym_in(f->elf, SHT_SYMTAB, fn, arg) ||
			  foreach_sym_in(f->elf, SHT_DYNSYM, fn, arg));
}

struct fill_walk {
	uint64_t end, limit;
};

static bool fill_sym(const struct ef_sym *s, void *arg)
{
	struct fill_walk *w = arg;
	if (s->defined && s->value >= w->end && s->value < w->limit)
		w->limit = s->value;
	return false;
}

uint64_t ef_fill_after(struct ef_file *f, uint64_t value, uint64_t size)
{
	if (!size || !f->elf)
		return 0;
	struct fill_walk w = {value + size, ALIGN_UP(value + size, 16ull)};
	/* the function's section may end before the boundary */
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_addr <= value &&
		    value < sh.sh_addr + sh.sh_size && sh.sh_addr + sh.sh_size < w.limit)
			w.limit = sh.sh_addr + sh.sh_size;
	}
	ef_foreach_sym(f, fill_sym, &w);
	return w.limit > w.end ? w.limit - w.end : 0;
}

/*
 * One line of /proc/PID/maps, e.g.
 *   7f1c2a000000-7f1c2a028000 r--p 00000000 fe:01 393231   /usr/lib/x86_64-linux-gnu/libc.so.6
 * The path may be missing (anonymous), "[vdso]", or end in " (deleted)".
 */
static int parse_maps_line(char *line, struct proc_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	int pos = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &off, &maj, &min,
		   &ino, &pos) != 7)
		return -EINVAL;
	char *p = line + pos;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == ' '))
		len--;
	m->start = start;
	m->end = end;
	m->offset = off;
	snprintf(m->perms, sizeof(m->perms), "%.4s", perms);
	m->dev = makedev(maj, min);
	m->ino = ino;
	m->path = xstrndup(p, len);
	return 0;
}

int proc_maps_read(pid_t pid, struct proc_map **maps, int *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	char *text;
	size_t len;
	int err = read_file(path, &text, &len);
	*maps = NULL;
	*n = 0;
	if (err)
		return err == -ENOENT ? -ESRCH : err;

	struct proc_map *v = NULL;
	int cnt = 0, cap = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct proc_map m;
		if (parse_maps_line(line, &m) < 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[cnt++] = m;
	}
	free(text);
	*maps = v;
	*n = cnt;
	return 0;
}

void proc_maps_free(struct proc_map *maps, int n)
{
	for (int i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

bool proc_maps_file(pid_t pid, dev_t dev, ino_t ino)
{
	struct proc_map *maps;
	int n;
	bool found = false;
	if (proc_maps_read(pid, &maps, &n))
		return false;
	for (int i = 0; i < n && !found; i++)
		found = maps[i].dev == dev && maps[i].ino == ino;
	proc_maps_free(maps, n);
	return found;
}

/*
 * The kernel maps PT_LOAD p at bias + PAGE_DOWN(p_vaddr) from file offset
 * PAGE_DOWN(p_offset); mprotect (RELRO) may split that mapping, so a
 * mapping can also start inside a segment.  The lowest mapping of the file
 * is matched to the segment whose file range holds its offset.
 */
int proc_load_bias(const struct proc_map *maps, int n, const struct ef_file *f, uint64_t *bias)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t nph;
	if (!f->elf || elf_getphdrnum(f->elf, &nph) < 0)
		return -EINVAL;
	const struct proc_map *low = NULL;
	for (int i = 0; i < n; i++) {
		if (maps[i].ino != f->ino || maps[i].dev != f->dev || maps[i].ino == 0)
			continue;
		if (!low || maps[i].start < low->start)
			low = &maps[i];
	}
	if (!low)
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t seg_off = ph.p_offset & ~(pg - 1);
		uint64_t seg_end = ph.p_offset + (ph.p_filesz ? ph.p_filesz : 1);
		if (low->offset < seg_off || low->offset >= seg_end)
			continue;
		uint64_t map_vaddr = (ph.p_vaddr & ~(pg - 1)) + (low->offset - seg_off);
		*bias = low->start - map_vaddr;
		return 0;
	}
	return -ENOENT;
}

const struct proc_map *proc_find_libc(const struct proc_map *maps, int n)
{
	for (int i = 0; i < n; i++) {
		const char *b = strrchr(maps[i].path, '/');
		if (b && !strncmp(b + 1, "libc.so.", 8))
			return &maps[i];
	}
	return NULL;
}

/*
 * The program and the objects it has mapped executable, each once, as the
 * process sees them (through /proc/PID/root, so a container's files are
 * read), the program first:
 *
 *   /proc/4242/root/usr/bin/python3.11
 *   /proc/4242/root/usr/lib/x86_64-linux-gnu/libc.so.6 ...
 */
int proc_objects(pid_t pid, char ***paths, int *n)
{
	char link[64], exe[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	*paths = NULL;
	*n = 0;
	ssize_t len = readlink(link, exe, sizeof(exe) - 1);
	if (len < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	exe[len] = 0;
	struct proc_map *maps;
	int nmaps, cnt = 1;
	char **v = xcalloc(1, sizeof(char *));
	v[0] = xasprintf("/proc/%d/root%s", (int)pid, exe);
	if (!proc_maps_read(pid, &maps, &nmaps)) {
		for (int i = 0; i < nmaps; i++) {
			const struct proc_map *m = &maps[i];
			if (m->path[0] != '/' || !m->ino || !strchr(m->perms, 'x') ||
			    strstr(m->path, " (deleted)") || !strcmp(m->path, exe))
				continue;
			char *p = xasprintf("/proc/%d/root%s", (int)pid, m->path);
			bool dup = false;
			for (int j = 0; j < cnt && !dup; j++)
				dup = !strcmp(v[j], p);
			if (dup) {
				free(p);
				continue;
			}
			v = xrealloc(v, (cnt + 1) * sizeof(char *));
			v[cnt++] = p;
		}
		proc_maps_free(maps, nmaps);
	}
	*paths = v;
	*n = cnt;
	return 0;
}

void proc_objects_free(char **paths, int n)
{
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* The build-id note as /usr/lib/debug/.build-id/ab/cdef....debug, or NULL. */
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

Elf_Scn *ef_section(Elf *e, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, name)) {
			*out = sh;
			return scn;
		}
	}
	return NULL;
}

/* .gnu_debuglink's file name, looked up next to path and under /usr/lib/debug. */
static char *debuglink_path(Elf *e, const char *path)
{
	GElf_Shdr sh;
	Elf_Scn *scn = ef_section(e, ".gnu_debuglink", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_size || !memchr(d->d_buf, 0, d->d_size))
		return NULL;
	const char *link = d->d_buf;
	char *dir = xstrdup(path);
	char *sl = strrchr(dir, '/');
	if (sl)
		*sl = 0;
	/* /usr/lib/debug mirrors the file's own path, as the process sees it */
	const char *own = dir;
	if (!strncmp(own, "/proc/", 6) && strstr(own, "/root/"))
		own = strstr(own, "/root/") + 5;
	char *cands[3] = {xasprintf("%s/%s", sl ? dir : ".", link),
			  xasprintf("%s/.debug/%s", sl ? dir : ".", link),
			  xasprintf("/usr/lib/debug%s/%s", sl ? own : "", link)};
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

char *ef_debug_file(const struct ef_file *f)
{
	if (f->no_debug_file)
		return NULL;
	char *dbg = build_id_path(f->elf);
	if (!dbg || access(dbg, R_OK)) {
		free(dbg);
		dbg = debuglink_path(f->elf, f->path);
	}
	return dbg;
}
