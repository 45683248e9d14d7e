/*
 * srcinfo.c - the source lines and inlined calls of a code address, for
 * ustack under `config = { show_debug_info = 1 }` (bpftrace 0.23+, when
 * built with blazesym; its default there, off in builds without it such as
 * Debian 13's, and off here).
 *
 * Pipeline position: output, called by stack.c for each frame.  A frame's
 * address may lie in code the compiler inlined: DWARF's scopes at the
 * address (dwarf_getscopes, innermost first) hold one
 * DW_TAG_inlined_subroutine per inlined call around it, then the
 * function's DW_TAG_subprogram.  bpftrace (blazesym) prints each inlined
 * function as a frame of its own before the function's, innermost first,
 * each with the line it is at: the address's own line for the innermost,
 * and for each outer one the call site (DW_AT_call_file/DW_AT_call_line)
 * of the one inside it.
 *
 *     [inlined] myclock@/src/usdt_inlined.c:10
 *     [inlined] mywrapper_inlined@/src/usdt_inlined.c:17
 *     mywrapper+12@/src/usdt_inlined.c:23
 *
 * The DWARF is the file's own or its separate debug file (build-id,
 * debuglink: libdwfl's standard search), read through the descriptor the
 * symbol code opened (sym.c: the file the target maps, also in another
 * mount namespace or after it was replaced).  One Dwfl per file, kept.
 * An address without line information prints as before, `sym+off`.
 */
#include "srcinfo.h"
#include "elf/elfsym.h"
#include "output.h"
#include "sym.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool out_show_debug_info;

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static struct module {
	const void *elf; /* sym.c's handle of the file (out_sym_funcs) */
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: no DWARF to be had */
} * mods;
static int nmods;

/* The module of the file mapped at addr, its link-time address in *v. */
static Dwfl_Module *module_at(uint64_t addr, uint64_t *v)
{
	const struct out_sym_func *funcs;
	int n;
	uint64_t bias;
	void *elf;
	const char *path;
	if (out_sym_funcs(addr, &funcs, &n, &bias, &elf))
		return NULL;
	*v = addr - bias;
	for (int i = 0; i < nmods; i++) /* sym.c keeps one ELF handle per file */
		if (mods[i].elf == elf)
			return mods[i].mod;
	int fd = out_sym_dup(addr, &path);
	if (fd < 0)
		return NULL;
	mods = xrealloc(mods, (size_t)(nmods + 1) * sizeof(*mods));
	struct module *m = &mods[nmods++];
	*m = (struct module){elf, dwfl_begin(&callbacks), NULL};
	if (!m->dwfl) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin(m->dwfl);
	/* the descriptor is dwfl's from here, also when it fails */
	m->mod = dwfl_report_elf(m->dwfl, path, path, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	Dwarf_Addr b;
	if (m->mod && !dwfl_module_getdwarf(m->mod, &b))
		m->mod = NULL;
	return m->mod;
}

/* An inlined call's call site, in the unit's file table. */
static bool call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, int *line)
{
	Dwarf_Attribute at;
	Dwarf_Word idx, ln;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &at), &idx) ||
	    dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &at), &ln) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return false;
	const char *f = dwarf_filesrc(files, idx, NULL, NULL);
	if (!f)
		return false;
	*file = f;
	*line = (int)ln;
	return true;
}

/* A file name as the line table has it, made absolute with the unit's
 * directory when that is absolute (meson's `../src/x.c` under the build
 * directory), as bpftrace prints dir/file; a build that mapped its paths
 * to relative ones (Debian's glibc: `./malloc/malloc.c`) keeps them. */
static char *full_name(Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute at;
	const char *dir =
	    file[0] == '/' || !cu ? NULL : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
	return dir && dir[0] == '/' ? xasprintf("%s/%s", dir, file) : xstrdup(file);
}

bool out_src_frames(struct buf *b, uint64_t addr, bool caller, const char *sym, const char *prefix,
		    bool perf)
{
	uint64_t v;
	Dwfl_Module *mod = module_at(addr, &v);
	/* a caller's frame is looked up at its call, the byte before the
	 * return address, whose line and inlined calls are the frame's (the
	 * return address may begin the next line, or an inlined call the
	 * caller has not made yet) */
	if (caller && v)
		v--;
	Dwfl_Line *ln = mod ? dwfl_module_getsrc(mod, v) : NULL;
	int line = 0;
	const char *file = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
	if (!file)
		return false;
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, v, &cubias);
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, v - cubias, &scopes) : 0;
	for (int i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue; /* a lexical block */
		const char *name = ef_dw_origin_name(&scopes[i]);
		if (!name)
			break;
		char *full = full_name(cu, file);
		if (perf)
			buf_printf(b, "%s%s (inlined)\n", prefix, name);
		else
			buf_printf(b, "%s[inlined] %s@%s:%d\n", prefix, name, full, line);
		free(full);
		if (!call_site(cu, &scopes[i], &file, &line))
			break;
	}
	free(scopes);
	if (perf)
		return false; /* perf's own line, as without debug info */
	char *full = full_name(cu, file);
	buf_printf(b, "%s%s@%s:%d\n", prefix, sym, full, line);
	free(full);
	return true;
}
