/*
 * bounds.c - where the function around an address begins and ends, also in
 * a stripped file: the ELF layer's answer to "which bytes must the branch
 * check decode" for a probe site in the middle of a function.
 *
 * A site gets a jump only when every branch of its function has been seen
 * to stay out of the patched bytes (arch/x86_64/mid.c), so the planner
 * needs the function's bounds.  Debian strips .symtab from its programs and
 * libraries; what remains, in the order it is used:
 *
 *   1. the smallest function symbol holding the address, with a size, in
 *      .symtab or .dynsym (exported functions keep their st_size);
 *   2. the .symtab of the separate debug file (ef_debug_file: libc6-dbg,
 *      -dbgsym packages, found by build-id or .gnu_debuglink);
 *   3. the .eh_frame FDE holding the address: every function gcc or clang
 *      compiled with unwind tables (Debian's default) has one, and an FDE
 *      covers [initial_location, initial_location + address_range), one
 *      function or one split-off part of it (foo.cold) exactly, e.g. in
 *      Debian's stripped /usr/bin/python3.11:
 *
 *        $ readelf --debug-dump=frames /usr/bin/python3.11 | grep 4f2074
 *        000629ac ... FDE cie=0000002c pc=00000000004f2074..00000000004f20a7
 *
 *      which is the function holding the python:function__entry note at
 *      0x4f20a1.
 *
 * libdw walks .eh_frame's entries (dwarf_next_cfi: lengths, CIE or FDE);
 * what it leaves to its caller is the FDE's two addresses, encoded as the
 * CIE's augmentation 'R' says (gcc: DW_EH_PE_pcrel | DW_EH_PE_sdata4), which
 * read_encoded() decodes.  libdw's dwarf_cfi_addrframe() does not answer
 * this: its range is that of one row of the CFI table (from one push to the
 * next), not the FDE's.  The table of a file is built once, sorted, and kept
 * in its struct ef_file.
 */
#include "elf/elfsym.h"
#include "util/util.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_internal.h"

/* DW_EH_PE_* pointer encodings (the LSB's .eh_frame specification) */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_PCREL 0x10
#define PE_INDIRECT 0x80

/* An unsigned LEB128 number at *p (before end); *p moves past it. */
static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u = 0;
	int shift = 0;
	uint8_t b = 0x80;
	while (*p < end && shift < 64 && (b & 0x80)) {
		b = *(*p)++;
		u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (b & 0x80)
		return false;
	if (shift < 64 && (b & 0x40))
		u |= ~0ull << shift;
	*v = (int64_t)u;
	return true;
}

/* A fixed-size little-endian field of n bytes, sign-extended if sign. */
static bool read_fixed(const uint8_t **p, const uint8_t *end, int n, bool sign, uint64_t *v)
{
	if (end - *p < n)
		return false;
	uint64_t u = 0;
	for (int i = n - 1; i >= 0; i--)
		u = u << 8 | (*p)[i];
	if (sign && n < 8 && (u >> (8 * n - 1) & 1))
		u |= ~0ull << (8 * n);
	*p += n;
	*v = u;
	return true;
}

/* The fixed-size formats of DW_EH_PE_*: bytes (0: not fixed-size) and signedness. */
static const struct {
	uint8_t n;
	bool sign;
} fixed_format[16] = {
    [0x00] = {8, false}, /* absptr */
    [0x02] = {2, false}, /* udata2 */
    [0x03] = {4, false}, /* udata4 */
    [0x04] = {8, false}, /* udata8 */
    [0x0a] = {2, true},	 /* sdata2 */
    [0x0b] = {4, true},	 /* sdata4 */
    [0x0c] = {8, true},	 /* sdata8 */
};

/*
 * One pointer encoded as enc at *p, whose link-time address is pc (for
 * DW_EH_PE_pcrel): its value; false for an encoding ubt does not read
 * (datarel, textrel, funcrel and indirect do not occur in x86-64 FDEs).
 */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t pc,
			 uint64_t *v)
{
	int fmt = enc & PE_FORMAT;
	int64_t s = 0;
	bool ok;
	if (fmt == 0x01) /* uleb128 */
		ok = read_uleb(p, end, v);
	else if (fmt == 0x09) /* sleb128 */
		ok = read_sleb(p, end, &s), *v = (uint64_t)s;
	else if (fixed_format[fmt].n)
		ok = read_fixed(p, end, fixed_format[fmt].n, fixed_format[fmt].sign, v);
	else
		return false;
	if (!ok || (enc & PE_INDIRECT))
		return false;
	if ((enc & PE_APPLY) == PE_PCREL)
		*v += pc;
	return (enc & PE_APPLY) == 0 || (enc & PE_APPLY) == PE_PCREL;
}

/*
 * The encoding of the addresses in the FDEs of the CIE at cie_off: its
 * augmentation 'R', e.g. "zR" with data {0x1b} (pcrel | sdata4), or
 * "zPLR" (C++: personality and LSDA first); absptr without 'z'.
 */
static bool cie_fde_encoding(const unsigned char *ident, Elf_Data *d, uint64_t cie_off,
			     uint8_t *enc)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	if (dwarf_next_cfi(ident, d, true, cie_off, &next, &e) || !dwarf_cfi_cie_p(&e))
		return false;
	const char *aug = e.cie.augmentation;
	*enc = 0; /* absptr */
	if (!aug || aug[0] != 'z')
		return !aug || !aug[0];
	const uint8_t *p = e.cie.augmentation_data;
	const uint8_t *end = p + e.cie.augmentation_data_size;
	for (const char *a = aug + 1; *a; a++) {
		uint64_t ignored;
		switch (*a) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p;
			return true;
		case 'P': /* personality: its encoding, then the pointer */
			if (p >= end)
				return false;
			uint8_t penc = *p++;
			if (!read_encoded(&p, end, penc & ~(PE_APPLY | PE_INDIRECT), 0, &ignored))
				return false;
			break;
		case 'L':
			p++;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return false;
		}
	}
	return true; /* no 'R': absptr */
}

static int range_cmp(const void *a, const void *b)
{
	const struct ef_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The FDE ranges of f's .eh_frame, sorted by start (f->fde, f->nfde). */
static void fde_table_read(struct ef_file *f)
{
	f->fde_read = true;
	GElf_Shdr sh;
	Elf_Scn *scn = ef_section(f->elf, ".eh_frame", &sh);
	/* a debug file's .eh_frame is SHT_NOBITS; some linkers mark it SHT_X86_64_UNWIND */
	bool bytes = scn && (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND);
	Elf_Data *d = bytes ? elf_getdata(scn, NULL) : NULL;
	const unsigned char *ident = (const unsigned char *)elf_getident(f->elf, NULL);
	if (!d || !d->d_buf || !ident)
		return;
	size_t cap = 0;
	uint64_t last_cie = ~0ull;
	uint8_t enc = 0;
	bool enc_ok = false;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	while (off < d->d_size && dwarf_next_cfi(ident, d, true, off, &next, &e) == 0) {
		const uint8_t *p = e.fde.start, *end = e.fde.end;
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (e.fde.CIE_pointer != last_cie) {
			last_cie = e.fde.CIE_pointer;
			enc_ok = cie_fde_encoding(ident, d, last_cie, &enc) && enc != PE_OMIT;
		}
		uint64_t start, len;
		uint64_t at = sh.sh_addr + (uint64_t)(p - (const uint8_t *)d->d_buf);
		if (!enc_ok || !read_encoded(&p, end, enc, at, &start) ||
		    !read_encoded(&p, end, enc & PE_FORMAT, 0, &len) || !len)
			continue;
		if (f->nfde == cap) {
			cap = cap ? 2 * cap : 256;
			f->fde = xrealloc(f->fde, cap * sizeof(*f->fde));
		}
		f->fde[f->nfde++] = (struct ef_range){start, start + len};
	}
	if (f->nfde)
		qsort(f->fde, f->nfde, sizeof(*f->fde), range_cmp);
}

void ef_foreach_fde(struct ef_file *f, ef_range_fn fn, void *arg)
{
	if (!f->elf)
		return;
	if (!f->fde_read)
		fde_table_read(f);
	for (size_t i = 0; i < f->nfde; i++)
		fn(&f->fde[i], arg);
}

int ef_fde_around(struct ef_file *f, uint64_t pc, struct ef_range *out)
{
	if (!f->elf)
		return -EINVAL;
	if (!f->fde_read)
		fde_table_read(f);
	size_t lo = 0, hi = f->nfde; /* the last range starting at or before pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->fde[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= f->fde[lo - 1].end)
		return -ENOENT;
	*out = f->fde[lo - 1];
	return 0;
}

uint64_t ef_entry_size(struct ef_file *f, uint64_t vaddr, uint64_t size)
{
	struct ef_range r;
	if (size || ef_fde_around(f, vaddr, &r) || r.start != vaddr)
		return size;
	return r.end - r.start;
}

struct around {
	uint64_t pc;
	struct ef_range r;
	bool found, dynamic;
};

static bool around_sym(const struct ef_sym *s, void *arg)
{
	struct around *a = arg;
	if (s->defined && (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->size &&
	    s->value <= a->pc && a->pc - s->value < s->size &&
	    (!a->found || s->size < a->r.end - a->r.start)) {
		a->r = (struct ef_range){s->value, s->value + s->size};
		a->found = true;
		a->dynamic = s->dynamic;
	}
	return false;
}

static bool sym_around(struct ef_file *f, uint64_t pc, struct ef_range *out, bool *dynamic)
{
	struct around a = {.pc = pc};
	ef_foreach_sym(f, around_sym, &a);
	*out = a.r;
	*dynamic = a.dynamic;
	return a.found;
}

static bool has_symtab(Elf *e)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* The debug file's .symtab, when f has none of its own. */
static bool debug_sym_around(struct ef_file *f, uint64_t pc, struct ef_range *out)
{
	if (has_symtab(f->elf))
		return false;
	char *path = ef_debug_file(f);
	struct ef_file df;
	bool found = false, dynamic;
	if (path && !ef_open(&df, path)) {
		found = sym_around(&df, pc, out, &dynamic);
		ef_close(&df);
	}
	free(path);
	return found;
}

int ef_func_around(struct ef_file *f, uint64_t pc, struct ef_range *out, enum ef_bounds *from)
{
	bool dynamic;
	if (!f->elf)
		return -EINVAL;
	if (sym_around(f, pc, out, &dynamic)) {
		*from = dynamic ? EF_BOUNDS_DYNSYM : EF_BOUNDS_SYMTAB;
		return 0;
	}
	if (debug_sym_around(f, pc, out)) {
		*from = EF_BOUNDS_DEBUG_FILE;
		return 0;
	}
	if (!ef_fde_around(f, pc, out)) {
		*from = EF_BOUNDS_EH_FRAME;
		return 0;
	}
	*from = EF_BOUNDS_NONE;
	return -ENOENT;
}

const char *ef_bounds_name(enum ef_bounds from)
{
	switch (from) {
	case EF_BOUNDS_SYMTAB:
		return ".symtab";
	case EF_BOUNDS_DYNSYM:
		return ".dynsym";
	case EF_BOUNDS_DEBUG_FILE:
		return "debug file";
	case EF_BOUNDS_EH_FRAME:
		return ".eh_frame";
	default:
		return "unknown";
	}
}

/* Does the allocated section holding start end at addr? */
static bool section_ends_at(struct ef_file *f, uint64_t start, uint64_t addr)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_addr <= start &&
		    start < sh.sh_addr + sh.sh_size)
			return sh.sh_addr + sh.sh_size == addr;
	}
	return false;
}

/*
 * The gap is fill only where something known closes it: a function
 * (symbol or FDE) starting right at its end, or the end of the section.
 * Else the bytes up to the alignment boundary may be the start of code
 * nothing describes (an assembly function without CFI in a stripped
 * file, entered at its first byte, which may be a nop): not proven fill.
 */
uint64_t ef_fill_after_func(struct ef_file *f, uint64_t start, uint64_t size)
{
	uint64_t fill = ef_fill_after(f, start, size), end = start + size;
	struct ef_range r;
	enum ef_bounds from;
	for (uint64_t k = 0; k < fill; k++)
		if (!ef_func_around(f, end + k, &r, &from))
			return k;
	if (fill && !(ef_func_around(f, end + fill, &r, &from) == 0 && r.start == end + fill) &&
	    !section_ends_at(f, start, end + fill))
		return 0;
	return fill;
}
