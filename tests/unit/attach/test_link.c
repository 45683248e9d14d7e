/*
 * test_link.c - table tests of the static linker (attach/inject/link.c):
 * relocatable objects in, one flat image at a given address out, or the
 * reason it cannot be linked.
 *
 * The objects are written here, byte by byte, rather than by a compiler,
 * so that each row controls exactly one relocation (its type, symbol and
 * addend) and the value it must leave in the image can be worked out by
 * hand.  Every object has the same shape:
 *
 *   .text      64 bytes, align 16   image offset 0; the relocation patches
 *                                   offset 8 (P = base + 8)
 *   .rodata    16 bytes, align 8    image offset 64
 *   [extra]    one more section when a row asks (writable ones are refused)
 *   symbols    f = .text+0, g = .rodata+8, abs = 0x1234 (SHN_ABS),
 *              ubt_shm and missing undefined, [c common]
 *
 * After the sections comes the GOT (16-aligned: image offset 80), one
 * slot per distinct GOTPCREL target.
 */
#include "attach/inject/link.h"
#include "util/util.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define B 0x7f0000000000ull   /* the usual base: high, like a gap near a library */
#define LOW 0x400000ull       /* a base where absolute 32-bit relocations fit */
#define SHM (B + 0x200000ull) /* ubt_shm, within reach of B */
#define FAR 0x1000ull         /* ubt_shm out of 32-bit reach of B */
#define P_OFF 8               /* where the relocation applies in .text */
#define GOT_OFF 80

struct objspec {
	uint16_t type, machine;  /* 0: ET_REL, EM_X86_64 */
	bool undef_all;          /* f, g and abs undefined (a second object using the first's) */
	bool common;             /* one more symbol, c, SHN_COMMON */
	bool rel;                /* the relocation section is SHT_REL */
	const char *extra;       /* name of one more section of 8 bytes */
	uint32_t extra_type;     /* its type (SHT_PROGBITS or SHT_NOBITS) */
	uint64_t extra_flags;    /* its flags (SHF_ALLOC | ...) */
	uint32_t rtype;          /* the relocation at .text+8; R_X86_64_NONE: none */
	const char *rsym;        /* its symbol: f, g, abs, ubt_shm, missing, c */
	int64_t addend;
};

/* The object's string tables and symbols, in symbol-table order. */
static const char *const symnames[] = {"", "f", "g", "abs", "ubt_shm", "missing", "c"};

struct obuf {
	uint8_t *p;
	size_t len;
};

static size_t put(struct obuf *o, const void *p, size_t n, size_t align)
{
	size_t at = ALIGN_UP(o->len, align);
	o->p = xrealloc(o->p, at + n);
	memset(o->p + o->len, 0, at - o->len);
	memcpy(o->p + at, p, n);
	o->len = at + n;
	return at;
}

/* Index of name in a string table being built (appended when new). */
static uint32_t str_add(struct buf *t, const char *name)
{
	if (!t->len)
		buf_append(t, "", 1);
	uint32_t at = (uint32_t)t->len;
	buf_append(t, name, strlen(name) + 1);
	return at;
}

static int sym_index(const char *name)
{
	for (size_t i = 1; i < ARRAY_SIZE(symnames); i++)
		if (!strcmp(symnames[i], name))
			return (int)i;
	return 0;
}

/* Writes the object a spec describes; malloc'ed, its length in *len. */
static uint8_t *build_obj(const struct objspec *s, size_t *len)
{
	enum { S_NULL, S_TEXT, S_RODATA, S_RELA, S_SYMTAB, S_STRTAB, S_SHSTRTAB, S_EXTRA, S_MAX };
	Elf64_Shdr sh[S_MAX] = {0};
	struct buf shstr = {0}, str = {0};
	struct obuf o = {0};
	Elf64_Ehdr eh = {0};
	int nsec = s->extra ? S_MAX : S_EXTRA;

	put(&o, &eh, sizeof(eh), 1); /* rewritten at the end */
	uint8_t text[64] = {0}, rodata[16] = {0}, extra[8] = {0};
	for (int i = 0; i < 64; i++)
		text[i] = 0x90;
	memcpy(rodata, "rodata..RODATA..", 16);
	sh[S_TEXT] = (Elf64_Shdr){.sh_name = str_add(&shstr, ".text"), .sh_type = SHT_PROGBITS,
				  .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addralign = 16,
				  .sh_size = sizeof(text)};
	sh[S_TEXT].sh_offset = put(&o, text, sizeof(text), 16);
	sh[S_RODATA] = (Elf64_Shdr){.sh_name = str_add(&shstr, ".rodata"),
				    .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
				    .sh_addralign = 8, .sh_size = sizeof(rodata)};
	sh[S_RODATA].sh_offset = put(&o, rodata, sizeof(rodata), 8);
	if (s->extra) {
		sh[S_EXTRA] = (Elf64_Shdr){.sh_name = str_add(&shstr, s->extra),
					   .sh_type = s->extra_type, .sh_flags = s->extra_flags,
					   .sh_addralign = 8, .sh_size = sizeof(extra)};
		sh[S_EXTRA].sh_offset = put(&o, extra, sizeof(extra), 8);
	}

	/* symbols: null, then the globals (no locals besides the null one) */
	Elf64_Sym syms[ARRAY_SIZE(symnames)] = {{0}};
	int nsyms = s->common ? 7 : 6;
	for (int i = 1; i < nsyms; i++) {
		syms[i].st_name = str_add(&str, symnames[i]);
		syms[i].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE);
		syms[i].st_shndx = SHN_UNDEF;
	}
	if (!s->undef_all) {
		syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		syms[1].st_shndx = S_TEXT;
		syms[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		syms[2].st_shndx = S_RODATA;
		syms[2].st_value = 8;
		syms[3].st_shndx = SHN_ABS;
		syms[3].st_value = 0x1234;
	}
	if (s->common) {
		syms[6].st_shndx = SHN_COMMON;
		syms[6].st_value = 8; /* alignment */
		syms[6].st_size = 8;
	}
	sh[S_SYMTAB] = (Elf64_Shdr){.sh_name = str_add(&shstr, ".symtab"), .sh_type = SHT_SYMTAB,
				    .sh_link = S_STRTAB, .sh_info = 1, .sh_addralign = 8,
				    .sh_entsize = sizeof(Elf64_Sym),
				    .sh_size = nsyms * sizeof(Elf64_Sym)};
	sh[S_SYMTAB].sh_offset = put(&o, syms, sh[S_SYMTAB].sh_size, 8);

	/* the one relocation */
	Elf64_Rela r = {.r_offset = P_OFF,
			.r_info = ELF64_R_INFO(s->rsym ? sym_index(s->rsym) : 0, s->rtype),
			.r_addend = s->addend};
	size_t rsize = s->rel ? sizeof(Elf64_Rel) : sizeof(Elf64_Rela);
	sh[S_RELA] = (Elf64_Shdr){.sh_name = str_add(&shstr, s->rel ? ".rel.text" : ".rela.text"),
				  .sh_type = s->rel ? SHT_REL : SHT_RELA, .sh_link = S_SYMTAB,
				  .sh_info = S_TEXT, .sh_addralign = 8, .sh_entsize = rsize,
				  .sh_size = s->rtype ? rsize : 0};
	sh[S_RELA].sh_offset = put(&o, &r, rsize, 8);

	sh[S_STRTAB] = (Elf64_Shdr){.sh_name = str_add(&shstr, ".strtab"), .sh_type = SHT_STRTAB,
				    .sh_addralign = 1, .sh_size = str.len};
	sh[S_STRTAB].sh_offset = put(&o, str.data, str.len, 1);
	sh[S_SHSTRTAB] = (Elf64_Shdr){.sh_name = str_add(&shstr, ".shstrtab"),
				      .sh_type = SHT_STRTAB, .sh_addralign = 1};
	sh[S_SHSTRTAB].sh_size = shstr.len;
	sh[S_SHSTRTAB].sh_offset = put(&o, shstr.data, shstr.len, 1);

	eh.e_shoff = put(&o, sh, nsec * sizeof(Elf64_Shdr), 8);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = s->type ? s->type : ET_REL;
	eh.e_machine = s->machine ? s->machine : EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)nsec;
	eh.e_shstrndx = S_SHSTRTAB;
	memcpy(o.p, &eh, sizeof(eh));
	buf_free(&shstr);
	buf_free(&str);
	*len = o.len;
	return o.p;
}

/* One row: an object (or two), where it is linked, and what must result. */
static const struct row {
	const char *name;
	struct objspec obj;
	uint64_t base;      /* 0: B */
	uint64_t shm;       /* ubt_shm's address; 0: SHM */
	int width;          /* bytes the relocation wrote: 4 or 8 */
	int64_t want;       /* their value (sign-extended when width is 4) */
	uint64_t got;       /* when not 0: the GOT's first slot holds this */
	const char *err;    /* not NULL: link_objects fails with this message */
} rows[] = {
	{"64 to f", {.rtype = R_X86_64_64, .rsym = "f"}, 0, 0, 8, (int64_t)B},
	{"64 to g+4", {.rtype = R_X86_64_64, .rsym = "g", .addend = 4}, 0, 0, 8, (int64_t)B + 76},
	{"64 to g-8", {.rtype = R_X86_64_64, .rsym = "g", .addend = -8}, 0, 0, 8, (int64_t)B + 64},
	{"64 to abs", {.rtype = R_X86_64_64, .rsym = "abs"}, 0, 0, 8, 0x1234},
	{"64 to ubt_shm", {.rtype = R_X86_64_64, .rsym = "ubt_shm"}, 0, 0, 8, (int64_t)SHM},
	{"64 to ubt_shm far", {.rtype = R_X86_64_64, .rsym = "ubt_shm"}, 0, FAR, 8, FAR},
	{"pc64 to g", {.rtype = R_X86_64_PC64, .rsym = "g"}, 0, 0, 8, 72 - P_OFF},
	{"pc64 to ubt_shm far", {.rtype = R_X86_64_PC64, .rsym = "ubt_shm"}, 0, FAR, 8,
	 (int64_t)(FAR - (B + P_OFF))},
	{"pc32 to g-4", {.rtype = R_X86_64_PC32, .rsym = "g", .addend = -4}, 0, 0, 4, 72 - 4 - P_OFF},
	{"pc32 to f-4 (backwards)", {.rtype = R_X86_64_PC32, .rsym = "f", .addend = -4}, 0, 0, 4,
	 -4 - P_OFF},
	{"plt32 to f-4", {.rtype = R_X86_64_PLT32, .rsym = "f", .addend = -4}, 0, 0, 4, -4 - P_OFF},
	{"pc32 to ubt_shm", {.rtype = R_X86_64_PC32, .rsym = "ubt_shm", .addend = -4}, 0, 0, 4,
	 0x200000 - 4 - P_OFF},
	{"pc32 to ubt_shm at the edge of reach",
	 {.rtype = R_X86_64_PC32, .rsym = "ubt_shm"}, 0, B + P_OFF + 0x7fffffff, 4, 0x7fffffff},
	{"pc32 to ubt_shm one past reach", {.rtype = R_X86_64_PC32, .rsym = "ubt_shm"}, 0,
	 B + P_OFF + 0x80000000ull, 4, 0, 0, "relocation to ubt_shm out of 32-bit range"},
	{"pc32 to ubt_shm far", {.rtype = R_X86_64_PC32, .rsym = "ubt_shm", .addend = -4}, 0, FAR,
	 4, 0, 0, "relocation to ubt_shm out of 32-bit range"},
	{"gotpcrel to ubt_shm", {.rtype = R_X86_64_GOTPCREL, .rsym = "ubt_shm", .addend = -4}, 0, 0,
	 4, GOT_OFF - 4 - P_OFF, SHM},
	{"gotpcrelx to ubt_shm far (the GOT is near)",
	 {.rtype = R_X86_64_GOTPCRELX, .rsym = "ubt_shm", .addend = -4}, 0, FAR, 4,
	 GOT_OFF - 4 - P_OFF, FAR},
	{"rex_gotpcrelx to f", {.rtype = R_X86_64_REX_GOTPCRELX, .rsym = "f", .addend = -4}, 0, 0,
	 4, GOT_OFF - 4 - P_OFF, B},
	{"32 to abs", {.rtype = R_X86_64_32, .rsym = "abs"}, 0, 0, 4, 0x1234},
	{"32 to f at a low base", {.rtype = R_X86_64_32, .rsym = "f"}, LOW, 0, 4, (int64_t)LOW},
	{"32s to g at a low base", {.rtype = R_X86_64_32S, .rsym = "g"}, LOW, 0, 4,
	 (int64_t)LOW + 72},
	{"32s to abs-0x1235 (-1)", {.rtype = R_X86_64_32S, .rsym = "abs", .addend = -0x1235}, 0, 0,
	 4, -1},
	{"32 to abs-0x1235 (-1)", {.rtype = R_X86_64_32, .rsym = "abs", .addend = -0x1235}, 0, 0, 4,
	 0, 0, "absolute 32-bit relocation to abs out of range"},
	{"32 to f at a high base", {.rtype = R_X86_64_32, .rsym = "f"}, 0, 0, 4, 0, 0,
	 "absolute 32-bit relocation to f out of range"},
	{"32s to f at a high base", {.rtype = R_X86_64_32S, .rsym = "f"}, 0, 0, 4, 0, 0,
	 "absolute 32-bit relocation to f out of range"},
	{"no relocation", {.rtype = R_X86_64_NONE}, 0, 0, 8, (int64_t)0x9090909090909090ull},
	{"undefined symbol", {.rtype = R_X86_64_64, .rsym = "missing"}, 0, 0, 8, 0, 0,
	 "obj: undefined symbol missing"},
	{"TLS relocation", {.rtype = R_X86_64_TPOFF32, .rsym = "f"}, 0, 0, 4, 0, 0,
	 "unsupported relocation type 23 against f"},
	{"GOTOFF64", {.rtype = R_X86_64_GOTOFF64, .rsym = "g"}, 0, 0, 8, 0, 0,
	 "unsupported relocation type 25 against g"},
	{"REL, not RELA", {.rtype = R_X86_64_64, .rsym = "f", .rel = true}, 0, 0, 8, 0, 0,
	 "obj: REL relocations are not supported"},
	{"common symbol", {.common = true}, 0, 0, 8, 0, 0,
	 "obj: common symbol c (build with -fno-common)"},
	{"writable .data", {.extra = ".data", .extra_type = SHT_PROGBITS,
			    .extra_flags = SHF_ALLOC | SHF_WRITE}, 0, 0, 8, 0, 0,
	 "obj: writable section .data is not allowed"},
	{"writable .bss", {.extra = ".bss", .extra_type = SHT_NOBITS,
			   .extra_flags = SHF_ALLOC | SHF_WRITE}, 0, 0, 8, 0, 0,
	 "obj: writable section .bss is not allowed"},
	{".data.rel.ro is read-only after linking",
	 {.extra = ".data.rel.ro.local", .extra_type = SHT_PROGBITS,
	  .extra_flags = SHF_ALLOC | SHF_WRITE, .rtype = R_X86_64_64, .rsym = "g"},
	 0, 0, 8, (int64_t)B + 72},
	{"not relocatable (ET_EXEC)", {.type = ET_EXEC}, 0, 0, 8, 0, 0,
	 "obj: not an x86-64 relocatable object"},
	{"not x86-64 (EM_AARCH64)", {.machine = EM_AARCH64}, 0, 0, 8, 0, 0,
	 "obj: not an x86-64 relocatable object"},
};

static void check_row(const struct row *w)
{
	size_t len;
	uint8_t *obj = build_obj(&w->obj, &len);
	uint64_t base = w->base ? w->base : B;
	struct link_input in = {obj, len, "obj"};
	struct link_extern ext = {"ubt_shm", w->shm ? w->shm : SHM};
	struct link_image img;
	char err[256] = "";
	int ret = link_objects(&in, 1, base, &ext, 1, &img, err, sizeof(err));
	if (w->err) {
		CHECK_EQ(ret, -EINVAL, "%s", w->name);
		CHECK_STR(err, w->err, "%s", w->name);
		CHECK(!img.bytes && !img.syms, "%s: nothing left allocated", w->name);
		free(obj);
		return;
	}
	CHECK_EQ(ret, 0, "%s: %s", w->name, err);
	if (ret) {
		free(obj);
		return;
	}
	CHECK_EQ(img.base, base, "%s", w->name);
	int64_t got = 0;
	if (w->width == 4) {
		int32_t v;
		memcpy(&v, img.bytes + P_OFF, 4);
		got = v;
	} else {
		memcpy(&got, img.bytes + P_OFF, 8);
	}
	CHECK_EQ(got, w->want, "%s", w->name);
	/* the bytes around the relocation are the section's own */
	CHECK_EQ(img.bytes[P_OFF - 1], 0x90, "%s", w->name);
	CHECK_EQ(img.bytes[P_OFF + w->width], 0x90, "%s", w->name);
	CHECK_BYTES(img.bytes + 64, 16, "rodata..RODATA..", 16, "%s", w->name);
	size_t want_size = w->obj.extra ? 96 : 80; /* the GOT starts 16-aligned */
	if (w->got) {
		uint64_t slot;
		memcpy(&slot, img.bytes + GOT_OFF, 8);
		CHECK_EQ(slot, w->got, "%s: the GOT slot", w->name);
		want_size = GOT_OFF + 8;
	}
	CHECK_EQ(img.size, want_size, "%s", w->name);
	CHECK_EQ(link_lookup(&img, "f"), base, "%s", w->name);
	CHECK_EQ(link_lookup(&img, "g"), base + 72, "%s", w->name);
	CHECK_EQ(link_lookup(&img, "abs"), 0x1234, "%s", w->name);
	CHECK_EQ(link_lookup(&img, "ubt_shm"), 0, "%s: externs are not the image's", w->name);
	CHECK_EQ(link_lookup(&img, "missing"), 0, "%s", w->name);
	link_image_free(&img);
	CHECK(!img.bytes && !img.syms && !img.nsyms, "%s: freed", w->name);
	free(obj);
}

/* Two objects: the second uses the first's symbols; the same one twice. */
static void check_pairs(void)
{
	size_t l1, l2;
	struct objspec def = {.rtype = R_X86_64_NONE};
	struct objspec use = {.undef_all = true, .rtype = R_X86_64_PC32, .rsym = "g", .addend = -4};
	uint8_t *o1 = build_obj(&def, &l1), *o2 = build_obj(&use, &l2);
	struct link_input in[] = {{o1, l1, "runtime"}, {o2, l2, "probes"}};
	struct link_extern ext = {"ubt_shm", SHM};
	struct link_image img;
	char err[256] = "";
	/* the second object's .text at 80 (after 64 + 16), its relocation at 88 */
	CHECK_EQ(link_objects(in, 2, B, &ext, 1, &img, err, sizeof(err)), 0, "%s", err);
	if (img.bytes) {
		int32_t v;
		memcpy(&v, img.bytes + 80 + P_OFF, 4);
		CHECK_EQ(v, 72 - 4 - (80 + P_OFF), "pc32 from the second object to the first's g");
		CHECK_EQ(img.nsyms, 3, "f, g, abs once");
		CHECK_EQ(img.size, 80 + 80, "two objects, no GOT");
	}
	link_image_free(&img);

	struct link_input twice[] = {{o1, l1, "runtime"}, {o1, l1, "probes"}};
	CHECK_EQ(link_objects(twice, 2, B, &ext, 1, &img, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "probes: symbol f defined twice");

	/* the user's symbol, not an extern of the same name, wins */
	struct link_extern f_ext = {"f", 0x1000};
	struct objspec to_f = {.rtype = R_X86_64_64, .rsym = "f"};
	uint8_t *o3 = build_obj(&to_f, &l1);
	struct link_input one = {o3, l1, "obj"};
	CHECK_EQ(link_objects(&one, 1, B, &f_ext, 1, &img, err, sizeof(err)), 0, "%s", err);
	if (img.bytes) {
		uint64_t v;
		memcpy(&v, img.bytes + P_OFF, 8);
		CHECK_EQ(v, B, "f of the object, not the extern f");
	}
	link_image_free(&img);

	/* not ELF at all, and empty */
	static const char junk[] = "this is not an ELF object, only text";
	struct link_input bad = {junk, sizeof(junk), "junk"};
	CHECK_EQ(link_objects(&bad, 1, B, NULL, 0, &img, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "junk: not an x86-64 relocatable object");
	struct link_input empty = {junk, 0, "empty"};
	CHECK_EQ(link_objects(&empty, 1, B, NULL, 0, &img, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "empty: not an x86-64 relocatable object");
	/* no inputs: an empty image */
	CHECK_EQ(link_objects(NULL, 0, B, NULL, 0, &img, err, sizeof(err)), 0);
	CHECK_EQ(img.size, 0);
	link_image_free(&img);
	free(o1);
	free(o2);
	free(o3);
}

int main(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		check_row(&rows[i]);
	check_pairs();
	return check_summary("link");
}
