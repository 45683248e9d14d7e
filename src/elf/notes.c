/*
 * notes.c - USDT (SystemTap SDT) probe notes of an ELF file, and the
 * thread-pointer offset of a TLS variable their operands may name.
 *
 * What a note looks like (readelf -n, Debian's python3.11):
 *
 *   stapsdt  0x00000036  NT_STAPSDT (SystemTap probe descriptors)
 *     Provider: python
 *     Name: gc__start
 *     Location: 0x426fc1, Base: 0x8c99c0, Semaphore: 0xa7ed4e
 *     Arguments: -4@112(%rsp)
 *
 * The descriptor is three 8-byte addresses (location, base, semaphore)
 * then "provider\0name\0args\0".  Base is the link-time address of the
 * section .stapsdt.base; when prelink or a linker script moved that
 * section, the location moves by the same amount, so the location used is
 * pc + (.stapsdt.base's address - base).  What the notes mean to a probe
 * (locations, semaphores, argument operands) is attach/resolve/usdt.c's.
 *
 * Layer rule: see elfsym.h (read-only; util/ only).
 */
#include "elf/notes.h"
#include "elf/elf_internal.h"
#include "util/util.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define NT_STAPSDT 3

static int add_note(struct usdt_notes *out, const char *desc, size_t len, uint64_t base_addr)
{
	if (len < 24 + 3)
		return -EINVAL;
	uint64_t a[3];
	memcpy(a, desc, sizeof(a));
	const char *prov = desc + 24, *end = desc + len;
	const char *name = memchr(prov, 0, end - prov);
	if (!name++ || name >= end)
		return -EINVAL;
	const char *args = memchr(name, 0, end - name);
	if (!args++)
		return -EINVAL;
	const char *aend = args < end ? memchr(args, 0, end - args) : NULL;
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	struct usdt_note *n = &out->v[out->n++];
	n->provider = xstrdup(prov);
	n->name = xstrdup(name);
	n->args = aend ? xstrdup(args) : xstrdup("");
	n->pc = a[0];
	if (base_addr && a[1])
		n->pc += base_addr - a[1];
	n->sema = a[2];
	return 0;
}

int usdt_notes_read(struct ef_file *f, struct usdt_notes *out)
{
	Elf *e = f->elf;
	GElf_Shdr sh;
	uint64_t base_addr = 0;
	memset(out, 0, sizeof(*out));
	if (ef_section(e, ".stapsdt.base", &sh))
		base_addr = sh.sh_addr;
	Elf_Scn *scn = ef_section(e, ".note.stapsdt", &sh);
	if (!scn || sh.sh_type != SHT_NOTE)
		return 0;
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    memcmp((char *)d->d_buf + name_off, "stapsdt", 8))
			continue;
		if (add_note(out, (char *)d->d_buf + desc_off, nh.n_descsz, base_addr)) {
			usdt_notes_free(out);
			return -EINVAL;
		}
	}
	return 0;
}

void usdt_notes_free(struct usdt_notes *notes)
{
	for (int i = 0; i < notes->n; i++) {
		free(notes->v[i].provider);
		free(notes->v[i].name);
		free(notes->v[i].args);
	}
	free(notes->v);
	memset(notes, 0, sizeof(*notes));
}

/*
 * The offset of a local-exec TLS variable from the thread pointer: x86-64
 * puts the executable's TLS block right below it, so a variable at offset
 * v of the PT_TLS template is at v - round_up(p_memsz, p_align).
 */
int ef_tls_offset(struct ef_file *f, uint64_t v, int64_t *out)
{
	Elf *e = f->elf;
	size_t n;
	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		uint64_t align = ph.p_align ? ph.p_align : 1;
		*out = (int64_t)v - (int64_t)ALIGN_UP(ph.p_memsz, align);
		return 0;
	}
	return -ENOENT;
}
