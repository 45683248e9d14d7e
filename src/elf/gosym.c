/*
 * gosym.c - the functions of a Go program without .symtab (built with
 * `-ldflags='-s -w'`, as release binaries often are), from its .gopclntab:
 * the table Go's runtime itself reads for tracebacks, so every Go binary
 * keeps it, with each function's name and entry (issue 25).
 *
 * Layout (Go 1.18 and later; magic 0xfffffff0, 1.20+: 0xfffffff1), all
 * little-endian, words of ptrSize bytes:
 *
 *   pcHeader: magic u32, pad u8 u8, minLC u8, ptrSize u8, nfunc word,
 *             nfiles word, textStart word, funcnameOffset word,
 *             cuOffset word, filetabOffset word, pctabOffset word,
 *             pclnOffset word
 *   functab at pclnOffset: nfunc + 1 pairs {entryoff u32, funcoff u32},
 *             entryoff from textStart, funcoff from pclnOffset; the last
 *             pair's entryoff is the end of the last function
 *   _func at pclnOffset + funcoff: entryoff u32, nameoff i32, ...
 *   names: NUL-terminated, at funcnameOffset + nameoff
 *
 * A function's size is the distance to the next entry.  Older formats
 * (Go 1.16-1.17: magic 0xfffffffa) keep absolute entries; they are not
 * read (Debian 12's Go is 1.19).  Every offset is checked against the
 * section: the file is the target's, not ours.
 */
#include "elf_internal.h"
#include "elfsym.h"

#include <stdlib.h>
#include <string.h>

#define GO_118_MAGIC 0xfffffff0u
#define GO_120_MAGIC 0xfffffff1u

struct pcln {
	const uint8_t *p;
	size_t size;
	unsigned ptr; /* 4 or 8 */
};

static bool word(const struct pcln *t, size_t off, uint64_t *v)
{
	if (off > t->size || t->size - off < t->ptr)
		return false;
	uint64_t x = 0;
	memcpy(&x, t->p + off, t->ptr); /* little-endian hosts only: x86-64 */
	*v = x;
	return true;
}

static bool u32(const struct pcln *t, uint64_t off, uint32_t *v)
{
	if (off > t->size || t->size - off < 4)
		return false;
	memcpy(v, t->p + off, 4);
	return true;
}

bool ef_foreach_go_func(struct ef_file *f, ef_func_fn fn, void *arg)
{
	GElf_Shdr sh;
	Elf_Scn *scn = f->elf ? ef_section(f->elf, ".gopclntab", &sh) : NULL;
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || d->d_size < 16)
		return false;
	struct pcln t = {d->d_buf, d->d_size, ((const uint8_t *)d->d_buf)[7]};
	uint32_t magic;
	memcpy(&magic, t.p, 4);
	if ((magic != GO_118_MAGIC && magic != GO_120_MAGIC) || (t.ptr != 4 && t.ptr != 8))
		return false;
	uint64_t nfunc, text, names, pcln;
	if (!word(&t, 8, &nfunc) || !word(&t, 8 + 2 * t.ptr, &text) ||
	    !word(&t, 8 + 3 * t.ptr, &names) || !word(&t, 8 + 7 * t.ptr, &pcln) ||
	    nfunc > t.size / 8)
		return false;
	if (!text) { /* a position-independent build: the text section's start */
		GElf_Shdr ts;
		if (!ef_section(f->elf, ".text", &ts))
			return false;
		text = ts.sh_addr;
	}
	for (uint64_t i = 0; i < nfunc; i++) {
		uint32_t entry, funcoff, next, nameoff;
		uint64_t at = pcln + i * 8;
		if (!u32(&t, at, &entry) || !u32(&t, at + 4, &funcoff) || !u32(&t, at + 8, &next) ||
		    !u32(&t, pcln + (uint64_t)funcoff + 4, &nameoff) || next < entry)
			return true; /* a damaged table: what was read stands */
		uint64_t name = names + nameoff;
		if (name >= t.size || !memchr(t.p + name, 0, t.size - name))
			continue;
		struct ef_func ef = {.name = (const char *)t.p + name,
				     .value = text + entry,
				     .size = next - entry,
				     .rank = 2};
		fn(&ef, arg);
	}
	return true;
}

bool ef_elf_is_go(void *elf)
{
	GElf_Shdr sh;
	return elf && (ef_section(elf, ".gopclntab", &sh) || ef_section(elf, ".go.buildinfo", &sh));
}

bool ef_elf_go_without_cfi(void *elf)
{
	GElf_Shdr sh;
	return ef_elf_is_go(elf) && !ef_section(elf, ".debug_frame", &sh) &&
	       !ef_section(elf, ".zdebug_frame", &sh);
}
