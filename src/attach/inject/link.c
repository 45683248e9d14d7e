/*
 * link.c - links relocatable x86-64 ELF objects into one flat image at a
 * given address (see link.h).  Attach uses it twice per session: for the
 * probe code that runs in the target, and for BEGIN/END code that runs in
 * ubt itself.
 *
 * Layout: every SHF_ALLOC section of every input, in input order, aligned
 * as the section asks; then a GOT for GOTPCREL relocations.  Relocations
 * handled: R_X86_64_64, PC32, PLT32, PC64, 32, 32S, GOTPCREL(X),
 * REX_GOTPCRELX.  Writable data is refused except .data.rel.ro* (read-only
 * after relocation): the image lives in read-execute memory in the target,
 * and all mutable state belongs in the shared data part.
 */
#include "attach/inject/link.h"
#include "util/util.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct obj_state {
	Elf *elf;
	char *copy;
	size_t nsec;
	uint64_t *sec_addr; /* 0 for sections not placed */
	Elf_Data *symtab;
	size_t nsyms;
	size_t strndx;
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool writable_forbidden(const char *name, const GElf_Shdr *sh)
{
	if (!(sh->sh_flags & SHF_WRITE) || sh->sh_size == 0)
		return false;
	return strncmp(name, ".data.rel.ro", 12) != 0;
}

static void add_section(struct link_image *img, const char *input, const char *name,
			uint64_t addr, const GElf_Shdr *sh)
{
	img->secs = xrealloc(img->secs, (img->nsecs + 1) * sizeof(*img->secs));
	img->secs[img->nsecs++] = (struct link_section){
		.input = xstrdup(input),
		.name = xstrdup(name),
		.addr = addr,
		.size = sh->sh_size,
		.exec = (sh->sh_flags & SHF_EXECINSTR) != 0,
		.write = (sh->sh_flags & SHF_WRITE) != 0,
	};
}

/* Pass 1: place the sections of one object; returns the next free offset. */
static int place_sections(struct obj_state *o, const struct link_input *in, uint64_t base,
			  uint64_t *off, struct link_image *img, char *err, size_t errlen)
{
	size_t shstrndx;
	elf_getshdrstrndx(o->elf, &shstrndx);
	elf_getshdrnum(o->elf, &o->nsec);
	o->sec_addr = xcalloc(o->nsec, sizeof(uint64_t));
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(o->elf, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(o->elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			o->symtab = elf_getdata(scn, NULL);
			o->nsyms = sh.sh_size / sizeof(Elf64_Sym);
			o->strndx = sh.sh_link;
		}
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
			continue;
		if (writable_forbidden(name ? name : "", &sh))
			return fail(err, errlen, "%s: writable section %s is not allowed", in->name,
				    name);
		uint64_t align = sh.sh_addralign ? sh.sh_addralign : 1;
		*off = ALIGN_UP(*off, align);
		o->sec_addr[elf_ndxscn(scn)] = base + *off;
		add_section(img, in->name, name ? name : "?", base + *off, &sh);
		*off += sh.sh_size;
	}
	return 0;
}

static void add_global(struct link_image *img, const char *name, uint64_t addr)
{
	img->syms = xrealloc(img->syms, (img->nsyms + 1) * sizeof(*img->syms));
	img->syms[img->nsyms].name = xstrdup(name);
	img->syms[img->nsyms].addr = addr;
	img->nsyms++;
}

uint64_t link_lookup(const struct link_image *img, const char *name)
{
	for (int i = 0; i < img->nsyms; i++)
		if (!strcmp(img->syms[i].name, name))
			return img->syms[i].addr;
	return 0;
}

static int collect_globals(struct obj_state *o, struct link_image *img, const char *objname,
			   char *err, size_t errlen)
{
	for (size_t i = 1; i < o->nsyms; i++) {
		GElf_Sym s;
		gelf_getsym(o->symtab, i, &s);
		if (GELF_ST_BIND(s.st_info) == STB_LOCAL || s.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(o->elf, o->strndx, s.st_name);
		if (s.st_shndx == SHN_COMMON)
			return fail(err, errlen, "%s: common symbol %s (build with -fno-common)",
				    objname, name);
		uint64_t addr = s.st_shndx == SHN_ABS ? s.st_value
						       : o->sec_addr[s.st_shndx] + s.st_value;
		if (link_lookup(img, name))
			return fail(err, errlen, "%s: symbol %s defined twice", objname, name);
		add_global(img, name, addr);
	}
	return 0;
}

/* The externs the inputs referred to, each once, for `-d link`. */
static void note_extern(struct link_image *img, const char *name, uint64_t addr)
{
	for (int i = 0; i < img->nexterns; i++)
		if (!strcmp(img->externs[i].name, name))
			return;
	img->externs = xrealloc(img->externs, (img->nexterns + 1) * sizeof(*img->externs));
	img->externs[img->nexterns].name = xstrdup(name);
	img->externs[img->nexterns++].addr = addr;
}

static int symbol_addr(struct obj_state *o, struct link_image *img,
		       const struct link_extern *ext, int next, size_t symi, uint64_t *addr,
		       const char **symname)
{
	GElf_Sym s;
	gelf_getsym(o->symtab, symi, &s);
	const char *name = elf_strptr(o->elf, o->strndx, s.st_name);
	*symname = name ? name : "?";
	if (s.st_shndx == SHN_ABS) {
		*addr = s.st_value;
		return 0;
	}
	if (s.st_shndx != SHN_UNDEF) {
		if (s.st_shndx >= o->nsec)
			return -ENOENT;
		*addr = o->sec_addr[s.st_shndx] + s.st_value;
		return 0;
	}
	if ((*addr = link_lookup(img, name)))
		return 0;
	for (int i = 0; i < next; i++)
		if (!strcmp(ext[i].name, name)) {
			*addr = ext[i].addr;
			note_extern(img, name, *addr);
			return 0;
		}
	return -ENOENT;
}


/* GOT entries: one per distinct target address, appended after the sections. */
struct got {
	uint64_t *vals;
	int n;
	uint64_t base; /* address of entry 0 */
};

static uint64_t got_slot(struct got *g, uint64_t val)
{
	for (int i = 0; i < g->n; i++)
		if (g->vals[i] == val)
			return g->base + 8 * i;
	g->vals = xrealloc(g->vals, (g->n + 1) * sizeof(uint64_t));
	g->vals[g->n] = val;
	return g->base + 8 * g->n++;
}

static int apply_one(uint8_t *where, uint32_t type, uint64_t S, int64_t A, uint64_t P,
		     struct got *got, const char *sym, char *err, size_t errlen)
{
	int64_t v;
	switch (type) {
	case R_X86_64_NONE:
		return 0;
	case R_X86_64_64:
		v = S + A;
		memcpy(where, &v, 8);
		return 0;
	case R_X86_64_PC64:
		v = S + A - P;
		memcpy(where, &v, 8);
		return 0;
	case R_X86_64_GOTPCREL:
	case R_X86_64_GOTPCRELX:
	case R_X86_64_REX_GOTPCRELX:
		S = got_slot(got, S);
		/* fall through */
	case R_X86_64_PC32:
	case R_X86_64_PLT32:
		v = S + A - P;
		if (v != (int32_t)v)
			return fail(err, errlen, "relocation to %s out of 32-bit range", sym);
		int32_t v32 = (int32_t)v;
		memcpy(where, &v32, 4);
		return 0;
	case R_X86_64_32:
	case R_X86_64_32S: {
		v = S + A;
		bool ok = type == R_X86_64_32 ? (uint64_t)v == (uint32_t)v : v == (int32_t)v;
		if (!ok)
			return fail(err, errlen, "absolute 32-bit relocation to %s out of range",
				    sym);
		uint32_t u = (uint32_t)v;
		memcpy(where, &u, 4);
		return 0;
	}
	default:
		return fail(err, errlen, "unsupported relocation type %u against %s", type, sym);
	}
}

static int relocate(struct obj_state *o, const struct link_input *in, struct link_image *img,
		    const struct link_extern *ext, int next, struct got *got, char *err,
		    size_t errlen)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(o->elf, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_REL)
			return fail(err, errlen, "%s: REL relocations are not supported", in->name);
		if (sh.sh_type != SHT_RELA || sh.sh_info >= o->nsec || !o->sec_addr[sh.sh_info])
			continue;
		uint64_t sec = o->sec_addr[sh.sh_info];
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_size / sizeof(Elf64_Rela);
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			gelf_getrela(d, i, &r);
			uint64_t S;
			const char *sym;
			if (symbol_addr(o, img, ext, next, GELF_R_SYM(r.r_info), &S, &sym))
				return fail(err, errlen, "%s: undefined symbol %s", in->name, sym);
			uint64_t P = sec + r.r_offset;
			int ret = apply_one(img->bytes + (P - img->base), GELF_R_TYPE(r.r_info), S,
					    r.r_addend, P, got, sym, err, errlen);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static void copy_sections(struct obj_state *o, struct link_image *img)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(o->elf, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		uint64_t addr = o->sec_addr[elf_ndxscn(scn)];
		if (!addr || sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_buf)
			memcpy(img->bytes + (addr - img->base), d->d_buf, d->d_size);
	}
}

int link_objects(const struct link_input *in, int nin, uint64_t base,
		 const struct link_extern *ext, int next, struct link_image *out, char *err,
		 size_t errlen)
{
	struct obj_state *objs = xcalloc(nin, sizeof(*objs));
	struct got got = {0};
	uint64_t off = 0;
	int ret = 0, i;

	memset(out, 0, sizeof(*out));
	out->base = base;
	elf_version(EV_CURRENT);
	for (i = 0; i < nin; i++) {
		objs[i].copy = xmalloc(in[i].size);
		memcpy(objs[i].copy, in[i].elf, in[i].size);
		objs[i].elf = elf_memory(objs[i].copy, in[i].size);
		GElf_Ehdr eh;
		if (!objs[i].elf || !gelf_getehdr(objs[i].elf, &eh) || eh.e_type != ET_REL ||
		    eh.e_machine != EM_X86_64) {
			ret = fail(err, errlen, "%s: not an x86-64 relocatable object",
				   in[i].name);
			goto out;
		}
		if ((ret = place_sections(&objs[i], &in[i], base, &off, out, err, errlen)))
			goto out;
	}
	for (i = 0; i < nin; i++)
		if ((ret = collect_globals(&objs[i], out, in[i].name, err, errlen)))
			goto out;
	/* Room for a GOT entry per relocation would be the safe bound; count them. */
	size_t nrel = 0;
	for (i = 0; i < nin; i++)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(objs[i].elf, scn));) {
			GElf_Shdr sh;
			gelf_getshdr(scn, &sh);
			if (sh.sh_type == SHT_RELA)
				nrel += sh.sh_size / sizeof(Elf64_Rela);
		}
	off = ALIGN_UP(off, 16);
	got.base = base + off;
	out->size = off + nrel * 8;
	out->bytes = xcalloc(1, out->size ? out->size : 1);
	for (i = 0; i < nin; i++)
		copy_sections(&objs[i], out);
	for (i = 0; i < nin; i++)
		if ((ret = relocate(&objs[i], &in[i], out, ext, next, &got, err, errlen)))
			goto out;
	if (got.n)
		memcpy(out->bytes + off, got.vals, got.n * 8);
	out->size = off + got.n * 8;
	out->got = got.base;
	out->ngot = got.n;
out:
	for (i = 0; i < nin; i++) {
		if (objs[i].elf)
			elf_end(objs[i].elf);
		free(objs[i].copy);
		free(objs[i].sec_addr);
	}
	free(objs);
	free(got.vals);
	if (ret)
		link_image_free(out);
	return ret;
}

void link_image_free(struct link_image *img)
{
	for (int i = 0; i < img->nsyms; i++)
		free(img->syms[i].name);
	free(img->syms);
	for (int i = 0; i < img->nsecs; i++) {
		free(img->secs[i].input);
		free(img->secs[i].name);
	}
	free(img->secs);
	for (int i = 0; i < img->nexterns; i++)
		free(img->externs[i].name);
	free(img->externs);
	free(img->bytes);
	memset(img, 0, sizeof(*img));
}
