/*
 * resolve.c - from uprobe attach points in the script to functions in ELF
 * files, before any process is touched: a missing binary or function is a
 * script error, reported at the attach point like bpftrace does.
 *
 *   uprobe:./t:f      ->  ./t, symbol f (.symtab, else .dynsym)
 */
#include "attach.h"
#include "attach/elfsym.h"
#include "util/util.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_uprobe(const struct ast_node *a)
{
	return a->attach.provider && (!strcmp(a->attach.provider, "uprobe") ||
				      !strcmp(a->attach.provider, "uretprobe"));
}

/*
 * Bytes after a function that belong to no symbol, up to the next 16-byte
 * boundary (compilers align functions to 16 and fill the gap with nops or
 * int3): a function shorter than a jmp may be patched over them.
 */
static uint64_t fill_after(struct elf_file *f, const struct elf_symbol *sym)
{
	if (!sym->size)
		return 0;
	uint64_t end = sym->value + sym->size;
	uint64_t limit = ALIGN_UP(end, 16ull);
	Elf *e = f->elf;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if ((sh.sh_flags & SHF_ALLOC) && sh.sh_addr <= sym->value &&
		    sym->value < sh.sh_addr + sh.sh_size && sh.sh_addr + sh.sh_size < limit)
			limit = sh.sh_addr + sh.sh_size;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			if (gelf_getsym(d, i, &s) && s.st_shndx != SHN_UNDEF &&
			    s.st_value >= end && s.st_value < limit)
				limit = s.st_value;
		}
	}
	return limit > end ? limit - end : 0;
}

static int resolve_point(const struct ast_node *probe, int index, const struct ast_node *a,
			 struct att_session *s, struct diags *diags)
{
	const char *path = a->attach.target, *func = a->attach.func;
	struct stat st;
	if (!path || !func) {
		diag_error(diags, a->loc, "uprobe needs a binary and a function: uprobe:BIN:FUNC");
		return -EINVAL;
	}
	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, X_OK)) {
		diag_error(diags, a->loc, "uprobe target file '%s' does not exist or is not executable",
			   path);
		return -ENOENT;
	}
	struct elf_file f;
	if (elf_file_open(&f, path)) {
		diag_error(diags, a->loc, "uprobe target file '%s' is not an ELF file", path);
		return -ENOEXEC;
	}
	struct elf_symbol sym;
	int ret = elf_find_func(&f, func, &sym);
	if (ret) {
		diag_error(diags, a->loc, "Could not resolve symbol: %s:%s", path, func);
		elf_file_close(&f);
		return ret;
	}
	s->points = xrealloc(s->points, (s->npoints + 1) * sizeof(*s->points));
	struct att_point *p = &s->points[s->npoints++];
	memset(p, 0, sizeof(*p));
	p->probe = probe;
	p->attach = a;
	p->probe_index = index;
	p->path = xstrdup(path);
	p->func = xstrdup(func);
	p->vaddr = sym.value;
	p->size = sym.size;
	p->fill = fill_after(&f, &sym);
	p->dev = f.dev;
	p->ino = f.ino;
	free(sym.name);
	elf_file_close(&f);
	return 0;
}

int att_resolve(const struct ast_node *prog, struct att_session *s, struct diags *diags)
{
	int ret = 0;
	for (int i = 0; i < prog->nkids; i++) {
		const struct ast_node *probe = prog->kids[i];
		for (int j = 0; j < probe->nkids; j++) {
			const struct ast_node *a = probe->kids[j];
			if (is_uprobe(a) && resolve_point(probe, i, a, s, diags))
				ret = -EINVAL;
			if (a->attach.provider && !strcmp(a->attach.provider, "usdt") &&
			    att_usdt_resolve(probe, i, a, s, diags))
				ret = -EINVAL;
		}
	}
	return ret;
}
