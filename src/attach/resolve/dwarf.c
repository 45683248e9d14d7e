/*
 * dwarf.c - a uprobe's typed arguments (`args.name`, `args->name`), the
 * records of casts the script does not define (`(struct Foo *)arg0`), and
 * `-lv`'s parameter lines, from the probed binary's DWARF (libdw).
 *
 * Pipeline position: after parse_script() and before sema_check().  For
 * every uprobe probe whose body reads `args`, each of its attach points is
 * resolved (resolve.c), the function's DW_TAG_subprogram is found by its
 * entry address, and its DW_TAG_formal_parameter children become one
 * struct ast_record (probe->args) in the type representation the type
 * checker uses for the script's own C definitions (cdefs.c): TY_INT,
 * TY_PTR, TY_STRUCT (records shared by name with the preamble's), TY_ARRAY,
 * TY_STR for char arrays.
 *
 * Where each parameter lives at function entry follows the x86-64 System V
 * ABI, so the record's member offsets say where codegen finds it (ast.h
 * AST_ARGS_STACK_OFF):
 *
 *   int do_io(int id, uint64_t len, const char *name)
 *     id   rdi -> offset 0     len  rsi -> 8     name rdx -> 16
 *   long many(int a, long b, short c, char d, long e, int f, long g, int h)
 *     a..f rdi..r9 -> 0..40    g [rsp+8] -> 48   h [rsp+16] -> 56
 *   double mixed(double x, int y, float z, long w)
 *     x xmm0 (not readable)    y rdi -> 0        z xmm1     w rsi -> 8
 *
 * uaddr("sym") is resolved here too (the end of this file): the global's
 * link-time address and size from the binary's symbol table; the driver
 * adds the load bias once the process is open (att_uaddr_bind).
 *
 * Floating-point parameters travel in SSE registers the trampoline does not
 * save: they stay in the record with type TY_NONE, so sema can say why
 * `args.x` cannot be read (bpftrace 0.17 reads the wrong register).
 */
#include "attach/session.h"
#include "elf/findlib.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

enum { DW_DEPTH_MAX = 16, DW_ARG_GPRS = 6, DW_ARG_SSES = 8 };

struct att_dwarf {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
};

static const Dwfl_Callbacks dw_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct att_dwarf *att_dwarf_open(const char *path)
{
	struct att_dwarf *d = xcalloc(1, sizeof(*d));
	Dwarf_Addr bias;
	d->dwfl = dwfl_begin(&dw_callbacks);
	if (!d->dwfl)
		goto fail;
	dwfl_report_begin(d->dwfl);
	/* base 0 + p_vaddr: module addresses are the file's link-time addresses */
	d->mod = dwfl_report_elf(d->dwfl, path, path, -1, 0, true);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod || !(d->dw = dwfl_module_getdwarf(d->mod, &bias)))
		goto fail;
	return d;
fail:
	att_dwarf_close(d);
	return NULL;
}

Dwarf *att_dwarf_handle(struct att_dwarf *d, uint64_t *bias)
{
	Dwarf_Addr b = 0;
	Dwarf *dw = dwfl_module_getdwarf(d->mod, &b);
	*bias = b;
	return dw;
}

void att_dwarf_close(struct att_dwarf *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d);
}

/* The DW_TAG_subprogram whose code starts at vaddr (link-time). */
static bool find_func(struct att_dwarf *d, uint64_t vaddr, Dwarf_Die *out)
{
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, vaddr, &cubias);
	Dwarf_Die *scopes = NULL;
	if (!cu)
		return false;
	int n = dwarf_getscopes(cu, vaddr - cubias, &scopes);
	bool found = false;
	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*out = scopes[i];
			found = true;
		}
	free(scopes);
	return found;
}

/* The first parameter DIE of fn (following its abstract origin when the
 * concrete instance lists none); false if it has none. */
static bool first_param(Dwarf_Die *fn, Dwarf_Die *p)
{
	Dwarf_Die origin;
	Dwarf_Attribute at;
	for (int hop = 0; hop < 4; hop++) {
		if (dwarf_child(fn, p) == 0)
			do
				if (dwarf_tag(p) == DW_TAG_formal_parameter)
					return true;
			while (dwarf_siblingof(p, p) == 0);
		if (!dwarf_attr(fn, DW_AT_abstract_origin, &at) &&
		    !dwarf_attr(fn, DW_AT_specification, &at))
			return false;
		if (!dwarf_formref_die(&at, &origin))
			return false;
		*fn = origin;
	}
	return false;
}

static bool next_param(Dwarf_Die *p)
{
	while (dwarf_siblingof(p, p) == 0)
		if (dwarf_tag(p) == DW_TAG_formal_parameter)
			return true;
	return false;
}

/* DW_AT_type of die (through abstract origins); false for none (void). */
static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute at;
	return dwarf_attr_integrate(die, DW_AT_type, &at) && dwarf_formref_die(&at, out);
}

static const char *die_name(Dwarf_Die *die)
{
	const char *n = dwarf_diename(die);
	return n ? n : "";
}

/* ---- type names, as bpftrace 0.17 prints them in -lv ------------------------ */

/*
 *   const char *name      "const char*"       struct req *r   "struct req*"
 *   req_t *r              "req_t*"            void *v         "void*"
 *   const volatile int *  "<unknown type>*"   int (*fn)(int)  "<unknown type>*"
 */
static void type_name(Dwarf_Die *t, char *buf, size_t len, int depth)
{
	Dwarf_Die in;
	size_t n;
	if (!t) {
		snprintf(buf, len, "void");
		return;
	}
	if (depth > DW_DEPTH_MAX || len < 16) {
		snprintf(buf, len, "<unknown type>");
		return;
	}
	bool has = type_of(t, &in);
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
		snprintf(buf, len, "%s", die_name(t));
		return;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
		snprintf(buf, len, "struct %s", die_name(t));
		return;
	case DW_TAG_union_type:
		snprintf(buf, len, "union %s", die_name(t));
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, len, "enum %s", die_name(t));
		return;
	case DW_TAG_pointer_type:
		type_name(has ? &in : NULL, buf, len - 1, depth + 1);
		n = strlen(buf);
		buf[n] = '*';
		buf[n + 1] = 0;
		return;
	case DW_TAG_const_type:
		memcpy(buf, "const ", 6);
		type_name(has ? &in : NULL, buf + 6, len - 6, depth + 1);
		return;
	default:
		snprintf(buf, len, "<unknown type>");
	}
}

char *att_dwarf_params_text(struct att_dwarf *d, uint64_t vaddr)
{
	Dwarf_Die fn, p, t;
	struct strbuf {
		char *s;
		size_t n;
	} sb = {xstrdup(""), 0};
	if (!d || !find_func(d, vaddr, &fn) || !first_param(&fn, &p))
		return sb.s;
	do {
		char tn[256];
		type_name(type_of(&p, &t) ? &t : NULL, tn, sizeof(tn), 0);
		char *line = xasprintf("%s\n    %s %s", sb.s, tn, die_name(&p));
		free(sb.s);
		sb.s = line;
	} while (next_param(&p));
	return sb.s;
}

/* ---- DWARF types -> ast types ------------------------------------------------ */

struct conv {
	struct ast_program *prog;
	int anon; /* numbering of anonymous records */
};

static bool strip(Dwarf_Die *t)
{
	for (int i = 0; i < 32; i++) {
		switch (dwarf_tag(t)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type:
			if (!type_of(t, t))
				return false; /* const void */
			continue;
		default:
			return true;
		}
	}
	return false;
}

static int ty_align(const struct ast_type *t)
{
	switch (t->kind) {
	case TY_INT:
	case TY_PTR:
		return t->size;
	case TY_STRUCT:
		return t->rec->align > 0 ? t->rec->align : 1;
	case TY_ARRAY:
		return ty_align(t->elem);
	default:
		return 1;
	}
}

static bool to_type(struct conv *c, Dwarf_Die *t, struct ast_type *out, int depth);

static char *arena_str(struct ast_program *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *r = ast_arena_alloc(p, n);
	memcpy(r, s, n);
	return r;
}

/* One data member (or the members of an anonymous struct/union member) into r. */
static void add_member(struct conv *c, struct ast_record *r, Dwarf_Die *m, int depth)
{
	Dwarf_Attribute at;
	Dwarf_Word loc = 0, bsize = 0, boff = 0, bytes = 0;
	Dwarf_Die t;
	struct ast_type ty;
	if (dwarf_hasattr(m, DW_AT_external) || dwarf_hasattr(m, DW_AT_declaration))
		return; /* a C++ static member */
	if (dwarf_attr(m, DW_AT_data_member_location, &at))
		dwarf_formudata(&at, &loc);
	if (!type_of(m, &t) || !to_type(c, &t, &ty, depth + 1))
		return; /* floating point, or a type ubt cannot read: not a member */
	struct ast_member mem = {.type = ty, .offset = (int)loc};
	if (dwarf_attr(m, DW_AT_bit_size, &at) && !dwarf_formudata(&at, &bsize) && bsize) {
		uint64_t bit;
		if (dwarf_attr(m, DW_AT_data_bit_offset, &at) && !dwarf_formudata(&at, &boff)) {
			bit = boff; /* DWARF 4+: bits from the record's start */
		} else {
			/* DWARF 2/3: DW_AT_bit_offset counts from the storage unit's MSB */
			if (dwarf_attr(m, DW_AT_bit_offset, &at))
				dwarf_formudata(&at, &boff);
			if (dwarf_attr(m, DW_AT_byte_size, &at))
				dwarf_formudata(&at, &bytes);
			bit = loc * 8 + (bytes ? bytes : (uint64_t)ty.size) * 8 - boff - bsize;
		}
		mem.offset = (int)(bit / 8);
		mem.bit_off = (int)(bit % 8);
		mem.bit_width = (int)bsize;
	}
	const char *name = dwarf_diename(m);
	if (!name) {
		if (ty.kind != TY_STRUCT)
			return;
		/* anonymous struct/union member: its members join ours */
		for (int i = 0; i < ty.rec->nmembers; i++) {
			struct ast_member in = ty.rec->members[i];
			in.offset += mem.offset;
			r->members = xrealloc(r->members, (r->nmembers + 1) * sizeof(*r->members));
			in.name = xstrdup(in.name);
			r->members[r->nmembers++] = in;
		}
		return;
	}
	mem.name = xstrdup(name);
	r->members = xrealloc(r->members, (r->nmembers + 1) * sizeof(*r->members));
	r->members[r->nmembers++] = mem;
}

/* struct/union DIE -> a record of the program, shared by name (the
 * script's own definition wins). */
static bool to_record(struct conv *c, Dwarf_Die *t, struct ast_type *out, int depth)
{
	bool is_union = dwarf_tag(t) == DW_TAG_union_type;
	const char *n = dwarf_diename(t);
	char *name = n ? xasprintf("%s %s", is_union ? "union" : "struct", n)
		       : xasprintf("%s (anonymous %d)", is_union ? "union" : "struct", ++c->anon);
	struct ast_record *r = ast_record_find(c->prog, name, true);
	free(name);
	Dwarf_Attribute at;
	Dwarf_Word size = 0;
	if (!r->complete && !dwarf_hasattr(t, DW_AT_declaration) &&
	    dwarf_attr(t, DW_AT_byte_size, &at) && !dwarf_formudata(&at, &size) &&
	    size < (1u << 24)) {
		r->complete = true; /* before the members: a struct may point to itself */
		r->size = (int)size;
		Dwarf_Die m;
		if (dwarf_child(t, &m) == 0)
			do
				if (dwarf_tag(&m) == DW_TAG_member)
					add_member(c, r, &m, depth);
			while (dwarf_siblingof(&m, &m) == 0);
		int align = 1;
		for (int i = 0; i < r->nmembers; i++)
			if (ty_align(&r->members[i].type) > align)
				align = ty_align(&r->members[i].type);
		r->align = align;
	}
	*out = (struct ast_type){.kind = TY_STRUCT, .size = r->size, .rec = r};
	return true;
}

static bool to_array(struct conv *c, Dwarf_Die *t, struct ast_type *out, int depth)
{
	int dims[8], nd = 0;
	Dwarf_Die sub, et;
	if (dwarf_child(t, &sub) == 0)
		do {
			Dwarf_Attribute at;
			Dwarf_Word v = 0;
			if (dwarf_tag(&sub) != DW_TAG_subrange_type || nd == 8)
				continue;
			if (dwarf_attr(&sub, DW_AT_count, &at) && !dwarf_formudata(&at, &v))
				dims[nd++] = (int)v;
			else if (dwarf_attr(&sub, DW_AT_upper_bound, &at) && !dwarf_formudata(&at, &v))
				dims[nd++] = (int)(v + 1);
			else
				dims[nd++] = 0; /* flexible array member */
		} while (dwarf_siblingof(&sub, &sub) == 0);
	struct ast_type cur;
	if (!nd || !type_of(t, &et) || !to_type(c, &et, &cur, depth + 1))
		return false;
	for (int i = nd - 1; i >= 0; i--) {
		if (dims[i] < 0 || dims[i] > (1 << 24))
			return false;
		if (cur.kind == TY_INT && cur.size == 1 && cur.is_signed && i == nd - 1) {
			cur = (struct ast_type){.kind = TY_STR, .size = dims[i]}; /* char x[N] */
			continue;
		}
		long long sz = (long long)cur.size * dims[i];
		if (sz > (1 << 24))
			return false;
		struct ast_type *e = ast_arena_alloc(c->prog, sizeof(*e));
		*e = cur;
		cur = (struct ast_type){.kind = TY_ARRAY, .size = (int)sz, .elem = e, .count = dims[i]};
	}
	*out = cur;
	return true;
}

/* false for types ubt cannot read (floating point, functions, > 8-byte integers) */
static bool to_type(struct conv *c, Dwarf_Die *t0, struct ast_type *out, int depth)
{
	Dwarf_Die t = *t0, in;
	Dwarf_Attribute at;
	Dwarf_Word size = 0, enc = 0;
	*out = (struct ast_type){.kind = TY_NONE};
	if (depth > DW_DEPTH_MAX || !strip(&t))
		return false;
	if (dwarf_attr(&t, DW_AT_byte_size, &at))
		dwarf_formudata(&at, &size);
	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type:
		if (dwarf_attr(&t, DW_AT_encoding, &at))
			dwarf_formudata(&at, &enc);
		if (enc == DW_ATE_float || enc == DW_ATE_complex_float || !size || size > 8 ||
		    (size & (size - 1)))
			return false;
		*out = (struct ast_type){.kind = TY_INT, .size = (int)size,
					 .is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char};
		return true;
	case DW_TAG_enumeration_type: {
		struct ast_type u = {.kind = TY_INT, .size = size ? (int)size : 4};
		if (type_of(&t, &in) && to_type(c, &in, &u, depth + 1) && u.kind != TY_INT)
			return false;
		*out = u;
		return true;
	}
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		struct ast_type e = {.kind = TY_NONE};
		Dwarf_Die pt;
		if (type_of(&t, &pt) && depth < DW_DEPTH_MAX - 1) {
			Dwarf_Die s = pt;
			if (strip(&s) && dwarf_tag(&s) != DW_TAG_subroutine_type)
				to_type(c, &pt, &e, depth + 1);
		}
		if (e.kind == TY_NONE)
			e = (struct ast_type){.kind = TY_NONE}; /* void *, function pointer */
		*out = ast_ptr_to(c->prog, e);
		return true;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return to_record(c, &t, out, depth);
	case DW_TAG_array_type:
		return to_array(c, &t, out, depth);
	case DW_TAG_ptr_to_member_type:
		*out = (struct ast_type){.kind = TY_INT, .size = 8};
		return true;
	default:
		return false;
	}
}

/* ---- where each parameter is at function entry (SysV x86-64) --------------- */

enum { CL_NONE, CL_INT, CL_SSE, CL_MEM };

struct cls {
	int eb[2];     /* class of each eightbyte */
	int max_align; /* of the scalars inside (16: long double, __int128) */
};

static void cls_mark(struct cls *k, uint64_t off, uint64_t size, int what)
{
	if (size > 8 && what != CL_MEM) {
		cls_mark(k, off, 8, what);
		cls_mark(k, off + 8, size - 8, what);
		return;
	}
	if ((int)size > k->max_align)
		k->max_align = (int)size;
	uint64_t i = off / 8;
	if (i > 1 || what == CL_MEM || (off % 8) + size > 8) {
		k->eb[0] = k->eb[1] = CL_MEM;
		return;
	}
	if (k->eb[i] == CL_MEM)
		return;
	if (k->eb[i] == CL_NONE || (k->eb[i] == CL_SSE && what == CL_INT))
		k->eb[i] = what;
}

static void classify(Dwarf_Die *t0, uint64_t off, struct cls *k, int depth)
{
	Dwarf_Die t = *t0, m, et;
	Dwarf_Attribute at;
	Dwarf_Word size = 0, enc = 0, loc;
	if (depth > DW_DEPTH_MAX || !strip(&t)) {
		cls_mark(k, off, 8, CL_MEM);
		return;
	}
	if (dwarf_attr(&t, DW_AT_byte_size, &at))
		dwarf_formudata(&at, &size);
	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type:
		if (dwarf_attr(&t, DW_AT_encoding, &at))
			dwarf_formudata(&at, &enc);
		if (enc == DW_ATE_float && size == 16 && k->eb[0] != CL_MEM) {
			/* long double: x87 class, passed in memory; __float128: SSE */
			cls_mark(k, off, 16, dwarf_diename(&t) && strstr(dwarf_diename(&t), "long double")
						     ? CL_MEM : CL_SSE);
			k->max_align = 16;
			return;
		}
		cls_mark(k, off, size ? size : 8,
			 enc == DW_ATE_float || enc == DW_ATE_complex_float ? CL_SSE : CL_INT);
		return;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (dwarf_attr(&t, DW_AT_calling_convention, &at) && !dwarf_formudata(&at, &enc) &&
		    enc == DW_CC_pass_by_reference) {
			cls_mark(k, off, 8, CL_INT); /* C++: an invisible pointer */
			return;
		}
		if (dwarf_child(&t, &m) == 0)
			do {
				if (dwarf_tag(&m) != DW_TAG_member || dwarf_hasattr(&m, DW_AT_external) ||
				    !type_of(&m, &et))
					continue;
				loc = 0;
				if (dwarf_attr(&m, DW_AT_data_member_location, &at))
					dwarf_formudata(&at, &loc);
				if (dwarf_hasattr(&m, DW_AT_bit_size))
					cls_mark(k, off + loc, 1, CL_INT);
				else
					classify(&et, off + loc, k, depth + 1);
			} while (dwarf_siblingof(&m, &m) == 0);
		return;
	case DW_TAG_array_type: {
		int esz = type_of(&t, &et) ? dwarf_aggregate_size(&et, &loc) == 0 ? (int)loc : 0 : 0;
		for (uint64_t o = 0; esz > 0 && o < size && o < 16; o += (uint64_t)esz)
			classify(&et, off + o, k, depth + 1);
		return;
	}
	default:
		cls_mark(k, off, size ? size : 8, CL_INT); /* pointers, enums, references */
	}
}

struct argpos {
	int gp, sse;      /* registers used so far */
	uint64_t stack;   /* bytes of stack arguments so far */
};

/* Offset of the parameter (type t) in the args record, or -1 if it is in
 * SSE registers (or split between the two kinds). */
static int place_param(struct argpos *ap, Dwarf_Die *t, bool *readable)
{
	Dwarf_Word size = 8;
	struct cls k = {{CL_NONE, CL_NONE}, 1};
	if (t && dwarf_aggregate_size(t, &size))
		size = 8;
	*readable = true;
	if (!t || !size)
		return -1;
	if (size > 16)
		k.eb[0] = k.eb[1] = CL_MEM;
	else
		classify(t, 0, &k, 0);
	int nint = 0, nsse = 0;
	for (int i = 0; i < (int)(size + 7) / 8 && i < 2; i++) {
		nint += k.eb[i] == CL_INT;
		nsse += k.eb[i] == CL_SSE;
	}
	if (k.eb[0] != CL_MEM && ap->gp + nint <= DW_ARG_GPRS && ap->sse + nsse <= DW_ARG_SSES) {
		int off = 8 * ap->gp;
		ap->gp += nint;
		ap->sse += nsse;
		*readable = nsse == 0;
		return nsse ? -1 : off;
	}
	uint64_t align = k.max_align >= 16 ? 16 : 8;
	ap->stack = (ap->stack + align - 1) / align * align;
	int off = AST_ARGS_STACK_OFF + (int)ap->stack;
	ap->stack += (size + 7) / 8 * 8;
	return off;
}

/* ---- the args record of one function ----------------------------------------- */

static struct ast_record *args_record(struct conv *c, struct att_dwarf *d, uint64_t vaddr)
{
	Dwarf_Die fn, p, t;
	struct ast_program *prog = c->prog;
	if (!find_func(d, vaddr, &fn))
		return NULL;
	struct ast_record *r = ast_arena_alloc(prog, sizeof(*r));
	r->name = arena_str(prog, "struct uprobe_args");
	r->complete = true;
	r->align = 8;
	int cap = 0;
	struct argpos ap = {0};
	if (!first_param(&fn, &p))
		return r;
	do {
		bool has = type_of(&p, &t), readable;
		int off = place_param(&ap, has ? &t : NULL, &readable);
		struct ast_type ty = {.kind = TY_NONE};
		if (!has || !readable || off < 0 || !to_type(c, &t, &ty, 0))
			ty = (struct ast_type){.kind = TY_NONE};
		if (r->nmembers == cap) {
			cap = cap ? cap * 2 : 8;
			struct ast_member *m = ast_arena_alloc(prog, (size_t)cap * sizeof(*m));
			if (r->nmembers)
				memcpy(m, r->members, (size_t)r->nmembers * sizeof(*m));
			r->members = m;
		}
		struct ast_member *m = &r->members[r->nmembers++];
		memset(m, 0, sizeof(*m));
		m->name = arena_str(prog, die_name(&p));
		m->type = ty;
		m->type.as = AS_USER;
		m->offset = off < 0 ? 0 : off;
		if (ty.kind != TY_NONE && off + ty.size > r->size)
			r->size = off + ty.size;
	} while (next_param(&p));
	r->size = (r->size + 7) / 8 * 8;
	return r;
}

static bool records_equal(const struct ast_record *a, const struct ast_record *b)
{
	if (a->nmembers != b->nmembers)
		return false;
	for (int i = 0; i < a->nmembers; i++)
		if (strcmp(a->members[i].name, b->members[i].name) ||
		    a->members[i].offset != b->members[i].offset ||
		    !ast_type_eq(&a->members[i].type, &b->members[i].type))
			return false;
	return true;
}

bool att_uses_args(const struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return false;
	if (n->kind == AST_BUILTIN && n->str && !strcmp(n->str, "args"))
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (att_uses_args(sub[i], depth + 1))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (att_uses_args(n->kids[i], depth + 1))
			return true;
	return false;
}

static struct ast_record *failed_record(struct ast_program *prog)
{
	struct ast_record *r = ast_arena_alloc(prog, sizeof(*r));
	r->name = arena_str(prog, "struct uprobe_args");
	return r; /* incomplete: sema stays quiet, the error is reported */
}

/* The args record of one probe: every attach point's function must agree. */
static int probe_args(struct conv *c, struct ast_node *probe, int index, pid_t pid,
		      struct diags *diags)
{
	struct att_session *tmp = xcalloc(1, sizeof(*tmp));
	const struct ast_record *rec = NULL;
	int ret = 0;
	tmp->pid_hint = pid;
	for (int j = 0; j < probe->nkids && !ret; j++) {
		const struct ast_node *a = probe->kids[j];
		if (!a->attach.provider || strcmp(a->attach.provider, "uprobe"))
			continue; /* sema says where args cannot be used */
		int first = tmp->npoints;
		if (att_resolve_one(probe, index, a, tmp, diags)) {
			ret = -ENOENT;
			break;
		}
		for (int i = first; i < tmp->npoints && !ret; i++) {
			const struct att_point *p = &tmp->points[i];
			char *open = att_open_path(pid, p->path);
			struct att_dwarf *d = att_dwarf_open(open);
			free(open);
			const struct ast_record *r = d ? args_record(c, d, p->vaddr) : NULL;
			att_dwarf_close(d);
			if (!r) {
				diag_error(diags, a->loc, "No debuginfo found for %s", a->attach.target);
				ret = -ENOENT;
			} else if (rec && !records_equal(rec, r)) {
				diag_error(diags, a->loc, "Probe has attach points with mixed arguments");
				ret = -EINVAL;
			} else {
				rec = r;
			}
		}
	}
	for (int i = 0; i < tmp->npoints; i++) {
		free(tmp->points[i].path);
		free(tmp->points[i].func);
	}
	free(tmp->points);
	free(tmp);
	probe->args = ret || !rec ? failed_record(c->prog) : rec;
	return ret;
}

static int uaddr_resolve(struct ast_node *prog, pid_t pid, struct diags *diags);
static char *probe_binary(const struct ast_node *probe, pid_t pid, const char **shown);

/* ---- record types of casts ------------------------------------------------------ */

/*
 * `(struct Foo *)arg0` in a uprobe or uretprobe without `struct Foo` in the
 * script: the record comes from the probed binary's DWARF, as bpftrace
 * does (its FieldAnalyser); the script's own definition wins.  The first
 * complete definition of that name at a compile unit's top level, in the
 * binary of the probe's first attach point, with the members it refers to.
 */
static bool find_record_die(struct att_dwarf *d, const char *name, Dwarf_Die *out)
{
	bool is_union = !strncmp(name, "union ", 6);
	const char *base = name + (is_union ? 6 : 7);
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, ch;
		if (dwarf_offdie(d->dw, off + hsize, &cu) && dwarf_child(&cu, &ch) == 0)
			do {
				int tag = dwarf_tag(&ch);
				if ((is_union ? tag == DW_TAG_union_type
					      : tag == DW_TAG_structure_type || tag == DW_TAG_class_type) &&
				    !dwarf_hasattr(&ch, DW_AT_declaration) && dwarf_diename(&ch) &&
				    !strcmp(dwarf_diename(&ch), base)) {
					*out = ch;
					return true;
				}
			} while (dwarf_siblingof(&ch, &ch) == 0);
		off = next;
	}
	return false;
}

/* Is the AST_TYPE node t a record the program does not define (yet)? */
static bool wants_record(struct ast_program *prog, const struct ast_node *t)
{
	if (!t || t->kind != AST_TYPE || !t->str ||
	    (strncmp(t->str, "struct ", 7) && strncmp(t->str, "union ", 6)))
		return false;
	const struct ast_record *r = ast_record_find(prog, t->str, false);
	return !r || !r->complete;
}

static void cast_types(struct conv *c, struct att_dwarf *d, const struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return;
	Dwarf_Die die;
	struct ast_type t;
	if (wants_record(c->prog, n->tyn) && find_record_die(d, n->tyn->str, &die))
		to_record(c, &die, &t, 0);
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		cast_types(c, d, sub[i], depth + 1);
	for (int i = 0; i < n->nkids; i++)
		cast_types(c, d, n->kids[i], depth + 1);
}

/* Does the subtree name a record the program lacks? (Opening DWARF costs.) */
static bool lacks_record(struct ast_program *prog, const struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return false;
	if (wants_record(prog, n->tyn))
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (lacks_record(prog, sub[i], depth + 1))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (lacks_record(prog, n->kids[i], depth + 1))
			return true;
	return false;
}

static void probe_cast_types(struct conv *c, const struct ast_node *probe, pid_t pid)
{
	bool up = probe->nkids > 0;
	for (int j = 0; j < probe->nkids; j++) {
		const char *pv = probe->kids[j]->attach.provider;
		up &= pv && (!strcmp(pv, "uprobe") || !strcmp(pv, "uretprobe")) &&
		      !probe->kids[j]->attach.wildcard;
	}
	if (!up || (!lacks_record(c->prog, probe->body, 0) && !lacks_record(c->prog, probe->pred, 0)))
		return;
	const char *shown;
	char *path = probe_binary(probe, pid, &shown);
	struct att_dwarf *d = path ? att_dwarf_open(path) : NULL;
	free(path);
	if (!d)
		return; /* sema reports the unknown record */
	cast_types(c, d, probe->pred, 0);
	cast_types(c, d, probe->body, 0);
	att_dwarf_close(d);
}

int att_dwarf_args(struct ast_node *prog, pid_t pid, struct diags *diags)
{
	struct conv c = {prog->prog, 0};
	int ret = uaddr_resolve(prog, pid, diags);
	for (int i = 0; i < prog->nkids; i++)
		probe_cast_types(&c, prog->kids[i], pid);
	for (int i = 0; i < prog->nkids; i++) {
		struct ast_node *probe = prog->kids[i];
		bool up = false;
		for (int j = 0; j < probe->nkids; j++)
			up |= probe->kids[j]->attach.provider &&
			      !strcmp(probe->kids[j]->attach.provider, "uprobe");
		if (up && (att_uses_args(probe->body, 0) || att_uses_args(probe->pred, 0)) &&
		    probe_args(&c, probe, i, pid, diags))
			ret = -EINVAL;
	}
	return ret;
}

/* ---- uaddr("sym"): a global of the probed binary ------------------------------ */

/* The binary of the probe's first uprobe/usdt attach point, as ubt opens it. */
static char *probe_binary(const struct ast_node *probe, pid_t pid, const char **shown)
{
	for (int j = 0; j < probe->nkids; j++) {
		const struct ast_attach *a = &probe->kids[j]->attach;
		if (!a->provider || !a->target ||
		    (strcmp(a->provider, "uprobe") && strcmp(a->provider, "uretprobe") &&
		     strcmp(a->provider, "usdt")))
			continue;
		*shown = a->target;
		char *found = strchr(a->target, '/') ? xstrdup(a->target) : ef_find_binary(pid, a->target);
		if (!found)
			return NULL;
		char *open = att_open_path(pid, found);
		free(found);
		return open;
	}
	return NULL;
}

struct object_walk {
	const char *name;
	uint64_t vaddr, size;
};

static bool object_sym(const struct ef_sym *s, void *arg)
{
	struct object_walk *w = arg;
	if (!s->defined || s->type != STT_OBJECT || strcmp(s->name, w->name))
		return false;
	w->vaddr = s->value;
	w->size = s->size;
	return true;
}

/* A defined data symbol (STT_OBJECT, STT_TLS excluded) by name, .symtab then .dynsym. */
static bool find_object(const char *path, const char *name, uint64_t *vaddr, uint64_t *size)
{
	struct ef_file f;
	struct object_walk w = {name};
	if (ef_open(&f, path))
		return false;
	bool found = ef_foreach_sym(&f, object_sym, &w);
	ef_close(&f);
	if (found)
		*vaddr = w.vaddr, *size = w.size;
	return found;
}

struct uaddr_walk {
	struct ast_program *prog;
	const struct ast_node *probe;
	pid_t pid;
	struct diags *diags;
	int ret;
};

static void uaddr_find(struct uaddr_walk *w, struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return;
	if (n->kind == AST_CALL && n->str && !strcmp(n->str, "uaddr") && n->nkids == 1 &&
	    n->kids[0]->kind == AST_STR) {
		const char *shown = NULL, *name = n->kids[0]->str;
		char *path = probe_binary(w->probe, w->pid, &shown);
		uint64_t vaddr, size;
		if (path && find_object(path, name, &vaddr, &size)) {
			n->sym_file = arena_str(w->prog, path);
			n->sym_vaddr = vaddr;
			n->sym_size = size;
			n->cval = vaddr;
		} else if (shown) {
			/* (no binary: sema says where uaddr cannot be used) */
			diag_error(w->diags, n->loc, "Could not resolve symbol: %s:%s", shown, name);
			w->ret = -ENOENT;
		}
		free(path);
	}
	struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		uaddr_find(w, sub[i], depth + 1);
	for (int i = 0; i < n->nkids; i++)
		uaddr_find(w, n->kids[i], depth + 1);
}

static int uaddr_resolve(struct ast_node *prog, pid_t pid, struct diags *diags)
{
	struct uaddr_walk w = {prog->prog, NULL, pid, diags, 0};
	for (int i = 0; i < prog->nkids; i++) {
		w.probe = prog->kids[i];
		uaddr_find(&w, prog->kids[i]->pred, 0);
		uaddr_find(&w, prog->kids[i]->body, 0);
	}
	return w.ret;
}

struct bind_walk {
	struct proc_map *maps;
	int nmaps;
	pid_t pid;
	int ret;
};

static void uaddr_bind(struct bind_walk *w, struct ast_node *n, int depth)
{
	if (!n || depth > AST_MAX_DEPTH)
		return;
	if (n->kind == AST_CALL && n->sym_file && w->maps) {
		struct ef_file f;
		uint64_t bias = 0;
		if (ef_open(&f, n->sym_file) == 0) {
			if (proc_load_bias(w->maps, w->nmaps, &f, &bias)) {
				diag_sys(NULL, "uaddr(\"%s\"): %s is not loaded in pid %d", n->kids[0]->str,
					 n->sym_file, (int)w->pid);
				w->ret = -ENOENT;
			}
			ef_close(&f);
		}
		n->cval = n->sym_vaddr + bias;
	}
	struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		uaddr_bind(w, sub[i], depth + 1);
	for (int i = 0; i < n->nkids; i++)
		uaddr_bind(w, n->kids[i], depth + 1);
}

int att_uaddr_bind(const struct att_session *s, struct ast_node *prog)
{
	struct bind_walk w = {NULL, 0, s->has_target ? s->t.pid : 0, 0};
	if (s->has_target && proc_maps_read(s->t.pid, &w.maps, &w.nmaps))
		w.maps = NULL;
	for (int i = 0; i < prog->nkids; i++)
		uaddr_bind(&w, prog->kids[i], 0);
	if (w.maps)
		proc_maps_free(w.maps, w.nmaps);
	return w.ret;
}
