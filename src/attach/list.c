/*
 * list.c - `ubt -l`: the probes a script could attach to, one per line, in
 * bpftrace 0.17's exact format (SPDK's scripts/bpf/gen.py splits these
 * lines on ':'):
 *
 *   ubt -l 'usdt:./t:*'       usdt:./t:ubt:io_start         (BIN as written)
 *   ubt -l 'uprobe:./t:*'     uprobe:./t:do_io
 *   ubt -l -p PID             uprobe:/proc/PID/root/ABS/PATH:func  (the executable)
 *                             usdt:/proc/PID/root/ABS/PATH:prov:name  (executable and
 *                             every loaded library with USDT notes)
 *
 * Lines are sorted and unique within each probe type, uprobes before usdt.
 * Pipeline position: none; the driver calls att_list() instead of running a
 * script.  It reads ELF files only, never stops the process.
 */
#include "attach.h"
#include "attach/elfsym.h"
#include "attach/usdt.h"
#include "util/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lines {
	char **v;
	int n;
};

static void add(struct lines *l, char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void flush(struct lines *l, FILE *out)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp);
	for (int i = 0; i < l->n; i++)
		if (!i || strcmp(l->v[i], l->v[i - 1]))
			fprintf(out, "%s\n", l->v[i]);
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Function symbols of path: "uprobe:SHOWN:func" when func matches pat. */
static void list_funcs(const char *path, const char *shown, const char *pat, bool verbose,
		       struct lines *l)
{
	struct elf_file f;
	struct att_dwarf *dw = NULL;
	if (elf_file_open(&f, path))
		return;
	if (verbose) /* -lv: the parameters too, from DWARF (dwarf.c) */
		dw = att_dwarf_open(path);
	Elf *e = f.elf;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			const char *name;
			/* like bpftrace: an undefined function with an address (a
			 * non-PIE executable's PLT entry) is listed too */
			if (!gelf_getsym(d, i, &s) || !s.st_value ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !(name = elf_strptr(e, sh.sh_link, s.st_name)) || !*name)
				continue;
			if (fnmatch(pat, name, 0))
				continue;
			char *params = verbose ? att_dwarf_params_text(dw, s.st_value) : NULL;
			add(l, xasprintf("uprobe:%s:%s%s", shown, name, params ? params : ""));
			free(params);
		}
	}
	att_dwarf_close(dw);
	elf_file_close(&f);
}

/* USDT probes of path: "usdt:SHOWN:prov:name" matching the patterns (prov NULL: any). */
static void list_usdt(const char *path, const char *shown, const char *prov, const char *name,
		      struct lines *l)
{
	struct elf_file f;
	struct usdt_notes notes;
	if (elf_file_open(&f, path))
		return;
	if (!usdt_notes_read(&f, &notes)) {
		for (int i = 0; i < notes.n; i++) {
			const struct usdt_note *n = &notes.v[i];
			if ((!prov || !fnmatch(prov, n->provider, 0)) && !fnmatch(name, n->name, 0))
				add(l, xasprintf("usdt:%s:%s:%s", shown, n->provider, n->name));
		}
		usdt_notes_free(&notes);
	}
	elf_file_close(&f);
}

/* The executable and the libraries of pid, as "/proc/PID/root/ABS" paths. */
static int process_files(pid_t pid, char ***files, int *nfiles)
{
	char link[64], exe[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	*files = xcalloc(1, sizeof(char *));
	(*files)[0] = xasprintf("/proc/%d/root%s", pid, exe);
	*nfiles = 1;
	struct proc_map *maps;
	int nmaps;
	if (proc_maps_read(pid, &maps, &nmaps))
		return 0;
	for (int i = 0; i < nmaps; i++) {
		if (maps[i].path[0] != '/' || !strcmp(maps[i].path, exe))
			continue;
		char *p = xasprintf("/proc/%d/root%s", pid, maps[i].path);
		bool dup = false;
		for (int j = 0; j < *nfiles && !dup; j++)
			dup = !strcmp((*files)[j], p);
		if (dup) {
			free(p);
			continue;
		}
		*files = xrealloc(*files, (*nfiles + 1) * sizeof(char *));
		(*files)[(*nfiles)++] = p;
	}
	proc_maps_free(maps, nmaps);
	return 0;
}

/* "type:BIN:rest" -> parts (text is modified); n = number of parts. */
static int split(char *text, char **parts, int max)
{
	int n = 0;
	for (char *p = text; n < max;) {
		parts[n++] = p;
		char *c = strchr(p, ':');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	return n;
}

int att_list(const char *pattern, pid_t pid, bool verbose, FILE *out)
{
	struct lines up = {0}, us = {0};
	char *text = xstrdup(pattern ? pattern : "*:*:*");
	char *parts[4] = {0};
	int n = split(text, parts, 4);
	const char *type = parts[0];
	bool want_up = !fnmatch(type, "uprobe", 0) || !strcmp(type, "u");
	bool want_us = !fnmatch(type, "usdt", 0) || !strcmp(type, "U");
	if (!want_up && !want_us) {
		free(text);
		return -ENOENT;
	}
	if (pid > 0) {
		char **files;
		int nfiles;
		int ret = process_files(pid, &files, &nfiles);
		if (ret) {
			diag_sys(NULL, "pid %d: %s", pid, strerror(-ret));
			free(text);
			return ret;
		}
		const char *bin = n > 1 ? parts[1] : "*";
		for (int i = 0; i < nfiles; i++) {
			if (fnmatch(bin, files[i], 0)) {
				free(files[i]);
				continue;
			}
			if (want_up && i == 0)
				list_funcs(files[i], files[i], n > 2 ? parts[n - 1] : "*", verbose, &up);
			if (want_us)
				list_usdt(files[i], files[i], n == 4 ? parts[2] : NULL,
					  n > 2 ? parts[n - 1] : "*", &us);
			free(files[i]);
		}
		free(files);
	} else if (n >= 3) {
		if (want_up && n == 3)
			list_funcs(parts[1], parts[1], parts[2], verbose, &up);
		if (want_us)
			list_usdt(parts[1], parts[1], n == 4 ? parts[2] : NULL, parts[n - 1], &us);
	}
	flush(&up, out);
	flush(&us, out);
	free(text);
	return 0;
}
