/*
 * usdt.c - USDT probes: from `usdt:BIN:[PROVIDER:]NAME` attach points to
 * locations in ELF files, their argument operands, and their semaphores.
 *
 * Pipeline position: att_resolve() calls att_usdt_resolve() for every usdt
 * attach point before any process is touched; it adds one struct att_point
 * per location (patch.c patches each like a uprobe, but in the middle of
 * a function) and the argument lists codegen compiles the probe for
 * (cg_facts.usdt).  Semaphores are taken at arm time and released at
 * detach (att_usdt_semas_*).
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
 * pc + (.stapsdt.base's address - base).  The semaphore is a 2-byte counter
 * (a link-time address in .probes, moved by the load bias only) that the
 * program tests before computing expensive arguments: it is a count shared
 * by every tracer, so it is only ever incremented and decremented.
 *
 * Arguments are `[-]SIZE@OPERAND` in AT&T syntax, a negative size meaning
 * signed: every form GCC and Clang emit for the "nor" constraint is parsed
 * (register of any width, `disp(%base,%index,scale)`, `$imm`, `sym(%rip)`,
 * an absolute `sym`).  The location's argument list is compiled into the
 * probe (one compiled variant per distinct list, so two inlined copies
 * with different registers both read correctly): reading an argument costs
 * one or two loads, with no table lookup at run time.
 */
#include "attach.h"
#include "attach/elfsym.h"
#include "attach/usdt.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NT_STAPSDT 3

/* ---- notes ------------------------------------------------------------ */

static Elf_Scn *find_section(Elf *e, const char *name, GElf_Shdr *out)
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

int usdt_notes_read(struct elf_file *f, struct usdt_notes *out)
{
	Elf *e = f->elf;
	GElf_Shdr sh;
	uint64_t base_addr = 0;
	memset(out, 0, sizeof(*out));
	if (find_section(e, ".stapsdt.base", &sh))
		base_addr = sh.sh_addr;
	Elf_Scn *scn = find_section(e, ".note.stapsdt", &sh);
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

/* ---- argument operands ------------------------------------------------ */

#define RM(f) ((uint8_t)offsetof(struct rt_regs_mid, f))

static const struct {
	const char *name;
	uint8_t off, shift;
} regs[] = {
	{"rax", RM(rax)}, {"eax", RM(rax)}, {"ax", RM(rax)}, {"al", RM(rax)}, {"ah", RM(rax), 8},
	{"rbx", RM(rbx)}, {"ebx", RM(rbx)}, {"bx", RM(rbx)}, {"bl", RM(rbx)}, {"bh", RM(rbx), 8},
	{"rcx", RM(rcx)}, {"ecx", RM(rcx)}, {"cx", RM(rcx)}, {"cl", RM(rcx)}, {"ch", RM(rcx), 8},
	{"rdx", RM(rdx)}, {"edx", RM(rdx)}, {"dx", RM(rdx)}, {"dl", RM(rdx)}, {"dh", RM(rdx), 8},
	{"rsi", RM(rsi)}, {"esi", RM(rsi)}, {"si", RM(rsi)}, {"sil", RM(rsi)},
	{"rdi", RM(rdi)}, {"edi", RM(rdi)}, {"di", RM(rdi)}, {"dil", RM(rdi)},
	{"rbp", RM(rbp)}, {"ebp", RM(rbp)}, {"bp", RM(rbp)}, {"bpl", RM(rbp)},
	{"rsp", RM(rsp)}, {"esp", RM(rsp)}, {"sp", RM(rsp)}, {"spl", RM(rsp)},
	{"r8", RM(r8)},   {"r9", RM(r9)},   {"r10", RM(r10)}, {"r11", RM(r11)},
	{"r12", RM(r12)}, {"r13", RM(r13)}, {"r14", RM(r14)}, {"r15", RM(r15)},
	{"rip", RM(pc)},
};

/* "%r8d" -> offset of r8; widths r8 r8d r8w r8b all name the same slot. */
static int parse_reg(const char **p, uint8_t *off, uint8_t *shift)
{
	const char *s = *p;
	if (*s != '%')
		return -EINVAL;
	s++;
	size_t len = 0;
	while (isalnum((unsigned char)s[len]))
		len++;
	char name[8];
	if (len == 0 || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, s, len);
	name[len] = 0;
	if (name[0] == 'r' && isdigit((unsigned char)name[1]) && len >= 3 &&
	    strchr("dwb", name[len - 1]))
		name[len - 1] = 0; /* r8d r8w r8b -> r8 */
	for (size_t i = 0; i < ARRAY_SIZE(regs); i++)
		if (!strcmp(regs[i].name, name)) {
			*off = regs[i].off;
			*shift = regs[i].shift;
			*p = s + len;
			return 0;
		}
	return -EINVAL;
}

static bool sym_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' || c == '.' || c == '$' ||
	       (!first && (isdigit((unsigned char)c) || c == '@'));
}

/* [sym][+-num] | num: the displacement part of a memory operand. */
static int parse_disp(struct elf_file *f, const char **p, int64_t *disp, bool *has_sym,
		      uint64_t *sym_addr, char *err, size_t errlen)
{
	const char *s = *p;
	*disp = 0;
	*has_sym = false;
	if (sym_char(*s, true)) {
		const char *b = s;
		while (sym_char(*s, false))
			s++;
		char *name = xstrndup(b, s - b);
		struct elf_symbol sym;
		int ret = f ? elf_find_symbol(f, name, &sym) : -ENOENT;
		if (ret) {
			snprintf(err, errlen, "symbol '%s' of an argument not found", name);
			free(name);
			return -EINVAL;
		}
		free(name);
		free(sym.name);
		*has_sym = true;
		*sym_addr = sym.value;
	}
	if (*s == '+' || *s == '-' || isdigit((unsigned char)*s)) {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 0);
		if (end == s || errno) {
			snprintf(err, errlen, "bad displacement");
			return -EINVAL;
		}
		*disp = v;
		s = end;
	}
	*p = s;
	return 0;
}

static int parse_one(struct elf_file *f, const struct usdt_note *note, const char **p,
		     struct cg_usdt_arg *a, char *err, size_t errlen)
{
	const char *s = *p;
	memset(a, 0, sizeof(*a));
	a->reg = a->index = CG_USDT_NOREG;
	a->scale = 1;
	/* [-]SIZE@ (old notes may omit it: then 8 bytes, signed) */
	const char *at = strchr(s, '@');
	const char *sp = s + strcspn(s, " ");
	if (at && at < sp) {
		char *end;
		long size = strtol(s, &end, 10);
		long mag = size < 0 ? -size : size;
		if (end != at || (mag != 1 && mag != 2 && mag != 4 && mag != 8)) {
			snprintf(err, errlen, "bad size in '%.*s'", (int)(sp - s), s);
			return -EINVAL;
		}
		a->size = (uint8_t)mag;
		a->is_signed = size < 0;
		s = at + 1;
	} else {
		a->size = 8;
		a->is_signed = true;
	}
	if (*s == '%') {
		a->kind = CG_USDT_REG;
		if (parse_reg(&s, &a->reg, &a->shift) || a->reg == RM(pc))
			goto bad;
	} else if (*s == '$') {
		char *end;
		errno = 0;
		a->kind = CG_USDT_CONST;
		a->val = strtoll(s + 1, &end, 0);
		if (end == s + 1 || errno)
			goto bad;
		s = end;
	} else {
		bool has_sym;
		uint64_t sym_addr = 0;
		int64_t disp;
		a->kind = CG_USDT_MEM;
		if (parse_disp(f, &s, &disp, &has_sym, &sym_addr, err, errlen))
			return -EINVAL;
		if (*s == '(') {
			s++;
			if (*s == '%' && parse_reg(&s, &a->reg, &a->shift))
				goto bad;
			if (*s == ',') {
				s++;
				if (parse_reg(&s, &a->index, &a->shift) || a->index == RM(pc))
					goto bad;
				if (*s == ',') {
					s++;
					a->scale = (uint8_t)strtol(s, (char **)&s, 10);
					if (a->scale != 1 && a->scale != 2 && a->scale != 4 &&
					    a->scale != 8)
						goto bad;
				}
			}
			if (*s++ != ')' || a->shift)
				goto bad;
		}
		if (a->reg == RM(pc)) {
			/* sym(%rip) names sym itself: make it relative to the location,
			 * whose run-time address the trampoline saves in pc */
			if (!has_sym)
				goto bad;
			a->val = (int64_t)(sym_addr - note->pc) + disp;
		} else if (has_sym) {
			/* an absolute address (non-PIC code): also relative to the location,
			 * so that it follows the load bias */
			if (a->reg != CG_USDT_NOREG || a->index != CG_USDT_NOREG)
				goto bad;
			a->reg = RM(pc);
			a->val = (int64_t)(sym_addr - note->pc) + disp;
		} else {
			a->val = disp;
		}
		if (a->reg == CG_USDT_NOREG && a->index == CG_USDT_NOREG && !has_sym)
			goto bad; /* a bare number: an absolute address no compiler emits */
	}
	if (*s && *s != ' ')
		goto bad;
	*p = s;
	return 0;
bad:
	snprintf(err, errlen, "cannot parse argument '%.*s'", (int)(sp - *p), *p);
	return -EINVAL;
}

int usdt_args_parse(struct elf_file *f, const struct usdt_note *note, struct cg_usdt_spec *spec,
		    char *err, size_t errlen)
{
	const char *s = note->args;
	memset(spec, 0, sizeof(*spec));
	for (;;) {
		while (*s == ' ')
			s++;
		if (!*s)
			return 0;
		if (spec->nargs == CG_USDT_MAX_ARGS) {
			snprintf(err, errlen, "more than %d arguments", CG_USDT_MAX_ARGS);
			return -EINVAL;
		}
		if (parse_one(f, note, &s, &spec->args[spec->nargs], err, errlen))
			return -EINVAL;
		spec->nargs++;
	}
}

/* ---- resolving attach points ------------------------------------------ */

/* The function symbol around pc (the smallest one, when several overlap). */
static int func_around(struct elf_file *f, uint64_t pc, uint64_t *start, uint64_t *size)
{
	Elf *e = f->elf;
	bool found = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, i, &s) || s.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size)
				continue;
			if (s.st_value <= pc && pc < s.st_value + s.st_size &&
			    (!found || s.st_size < *size)) {
				*start = s.st_value;
				*size = s.st_size;
				found = true;
			}
		}
	}
	return found ? 0 : -ENOENT;
}

static bool has_wild(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/*
 * A library or program named without a path: resolve.c's search (the
 * process's mappings, PATH, ld.so.cache, the library directories), seen
 * through /proc/PID/root with -p so a container's files are the ones read.
 */
static char *find_by_name(pid_t pid, const char *name)
{
	char *found = att_find_binary(pid, name);
	if (found && pid > 0) {
		char *in_root = xasprintf("/proc/%d/root%s", pid, found);
		if (!access(in_root, F_OK)) {
			free(found);
			return in_root;
		}
		free(in_root);
	}
	return found;
}

/* The highest argN a probe's code reads, or -1. */
static int max_arg(const struct ast_node *n, const struct ast_node **where)
{
	if (!n)
		return -1;
	int m = -1;
	if (n->kind == AST_BUILTIN && !strncmp(n->str, "arg", 3) && isdigit((unsigned char)n->str[3])) {
		m = n->builtin_arg;
		*where = n;
	}
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els, n->pred};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++) {
		const struct ast_node *w = NULL;
		int k = max_arg(sub[i], &w);
		if (k > m) {
			m = k;
			*where = w;
		}
	}
	for (int i = 0; i < n->nkids; i++) {
		const struct ast_node *w = NULL;
		int k = max_arg(n->kids[i], &w);
		if (k > m) {
			m = k;
			*where = w;
		}
	}
	return m;
}

/* The variant index of spec in the probe's list, adding it if new. */
static int variant_of(struct att_session *s, int probe_index, const struct cg_usdt_spec *spec)
{
	struct cg_usdt_variants *v = NULL;
	for (int i = 0; i < s->nusdt; i++)
		if (s->usdt[i].probe_index == probe_index)
			v = &s->usdt[i];
	if (!v) {
		s->usdt = xrealloc(s->usdt, (s->nusdt + 1) * sizeof(*s->usdt));
		v = &s->usdt[s->nusdt++];
		memset(v, 0, sizeof(*v));
		v->probe_index = probe_index;
	}
	for (int i = 0; i < v->nspecs; i++)
		if (!memcmp(&v->specs[i], spec, sizeof(*spec)))
			return i;
	v->specs = xrealloc(v->specs, (v->nspecs + 1) * sizeof(*v->specs));
	v->specs[v->nspecs] = *spec;
	return v->nspecs++;
}

struct usdt_pattern {
	const char *target, *provider, *name; /* provider NULL when omitted */
};

/* "usdt:BIN:[PROV:]NAME" (or "U:...") -> its parts; text is modified. */
static int split_pattern(char *text, struct usdt_pattern *pat)
{
	char *parts[4];
	int n = 0;
	/* usdt:"/lib/libstdc++.so.6":p:n - a quoted part is taken as is */
	char *w = text;
	for (char *r = text; *r; r++)
		if (*r != '"')
			*w++ = *r;
	*w = 0;
	char *p = strchr(text, ':');
	if (!p)
		return -EINVAL;
	p++;
	for (; n < 4;) {
		parts[n++] = p;
		char *c = strchr(p, ':');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	if (n == 2) {
		*pat = (struct usdt_pattern){parts[0], NULL, parts[1]};
		return 0;
	}
	if (n == 3) {
		*pat = (struct usdt_pattern){parts[0], parts[1], parts[2]};
		return 0;
	}
	return -EINVAL;
}

static bool note_matches(const struct usdt_pattern *pat, const struct usdt_note *n)
{
	return (!pat->provider || !fnmatch(pat->provider, n->provider, 0)) &&
	       !fnmatch(pat->name, n->name, 0);
}

static int add_location(const struct ast_node *probe, int index, const struct ast_node *a,
			struct att_session *s, struct elf_file *f, const char *path,
			const struct usdt_note *note, struct diags *diags)
{
	struct cg_usdt_spec spec;
	char err[160];
	uint64_t fstart = 0, fsize = 0;
	if (usdt_args_parse(f, note, &spec, err, sizeof(err))) {
		diag_error(diags, a->loc, "usdt probe %s:%s in %s: %s", note->provider, note->name,
			   path, err);
		return -EINVAL;
	}
	const struct ast_node *where = NULL;
	int need = max_arg(probe->pred, &where);
	const struct ast_node *w2 = NULL;
	int need2 = max_arg(probe->body, &w2);
	if (need2 > need) {
		need = need2;
		where = w2;
	}
	if (need >= spec.nargs) {
		diag_error(diags, where->loc, "couldn't get argument %d for %s:%s:%s (it has %d)",
			   need, path, note->provider, note->name, spec.nargs);
		return -EINVAL;
	}
	if (func_around(f, note->pc, &fstart, &fsize)) {
		/* no symbol (stripped): only the location itself can be checked */
		fstart = note->pc;
		fsize = 0;
	}
	s->points = xrealloc(s->points, (s->npoints + 1) * sizeof(*s->points));
	struct att_point *p = &s->points[s->npoints++];
	memset(p, 0, sizeof(*p));
	p->probe = probe;
	p->attach = a;
	p->probe_index = index;
	p->path = xstrdup(path);
	p->func = xasprintf("%s:%s", note->provider, note->name);
	p->vaddr = note->pc;
	p->usdt = true;
	p->func_vaddr = fstart;
	p->func_size = fsize;
	p->sema = note->sema;
	p->variant = variant_of(s, index, &spec);
	p->dev = f->dev;
	p->ino = f->ino;
	return 0;
}

/* One binary: every note matching pat.  *nmatched counts the probes matched. */
static int resolve_in_file(const struct ast_node *probe, int index, const struct ast_node *a,
			   struct att_session *s, const char *path, const struct usdt_pattern *pat,
			   int *nmatched, struct diags *diags)
{
	struct elf_file f;
	struct usdt_notes notes;
	if (elf_file_open(&f, path)) {
		diag_error(diags, a->loc, "usdt target file '%s' is not an ELF file", path);
		return -ENOEXEC;
	}
	if (usdt_notes_read(&f, &notes)) {
		diag_error(diags, a->loc, "usdt target file '%s': malformed .note.stapsdt", path);
		elf_file_close(&f);
		return -EINVAL;
	}
	/* provider omitted and a plain name: it must name one provider's probe */
	if (!pat->provider && !has_wild(pat->name)) {
		const char *prov = NULL;
		int nprov = 0;
		for (int i = 0; i < notes.n; i++)
			if (note_matches(pat, &notes.v[i]) &&
			    (!prov || strcmp(prov, notes.v[i].provider))) {
				prov = notes.v[i].provider;
				nprov++;
			}
		if (nprov > 1) {
			struct diag *dg = diag_error(
			    diags, a->loc, "namespace for %s not specified, matched %d probes",
			    a->str, nprov);
			diag_hint(dg, "please specify a unique namespace or use '*' to attach "
					 "to all matched probes");
			usdt_notes_free(&notes);
			elf_file_close(&f);
			return -EINVAL;
		}
	}
	int ret = 0;
	for (int i = 0; i < notes.n && !ret; i++) {
		if (!note_matches(pat, &notes.v[i]))
			continue;
		(*nmatched)++;
		ret = add_location(probe, index, a, s, &f, path, &notes.v[i], diags);
	}
	usdt_notes_free(&notes);
	elf_file_close(&f);
	return ret;
}

int att_usdt_resolve(const struct ast_node *probe, int index, const struct ast_node *a,
		     struct att_session *s, struct diags *diags)
{
	struct usdt_pattern pat;
	char *text = xstrdup(a->str);
	int ret = 0, nmatched = 0;
	glob_t g = {0};
	if (split_pattern(text, &pat)) {
		diag_error(diags, a->loc, "usdt probe type requires 2 or 3 arguments");
		free(text);
		return -EINVAL;
	}
	if (has_wild(pat.target)) {
		if (glob(pat.target, 0, NULL, &g) || !g.gl_pathc) {
			diag_error(diags, a->loc, "usdt target file '%s' does not exist", pat.target);
			ret = -ENOENT;
			goto out;
		}
		for (size_t i = 0; i < g.gl_pathc && !ret; i++)
			ret = resolve_in_file(probe, index, a, s, g.gl_pathv[i], &pat, &nmatched,
					      diags);
	} else {
		char *found = NULL;
		const char *path = pat.target;
		if (!strchr(path, '/') && (found = find_by_name(s->pid_hint, path)))
			path = found;
		struct stat st;
		if (stat(path, &st) || !S_ISREG(st.st_mode)) {
			diag_error(diags, a->loc, "usdt target file '%s' does not exist", pat.target);
			free(found);
			ret = -ENOENT;
			goto out;
		}
		ret = resolve_in_file(probe, index, a, s, path, &pat, &nmatched, diags);
		free(found);
	}
	if (!ret && !nmatched && !has_wild(pat.name) &&
	    !(pat.provider && has_wild(pat.provider))) {
		diag_error(diags, a->loc, "usdt probe not found: %s", a->str);
		ret = -ENOENT;
	}
out:
	globfree(&g);
	free(text);
	return ret;
}

void att_usdt_free(struct att_session *s)
{
	for (int i = 0; i < s->nusdt; i++) {
		free(s->usdt[i].specs);
		att_probe_names_free(&s->usdt[i]);
	}
	free(s->usdt);
	s->usdt = NULL;
	s->nusdt = s->nsemas = 0;
}

/* ---- semaphores ------------------------------------------------------- */

static int sema_add(struct att_session *s, uint64_t addr)
{
	for (int i = 0; i < s->nsemas; i++)
		if (s->semas[i].addr == addr)
			return 0;
	if (s->nsemas == ATT_MAX_SEMAS) {
		diag_sys(NULL, "more than %d usdt semaphores", ATT_MAX_SEMAS);
		return -E2BIG;
	}
	s->semas[s->nsemas++] = (struct att_sema){addr, false};
	return 0;
}

/*
 * The semaphores live in the session's shared memory, so the watchdog
 * (watchdog.c) sees `held` and gives back what ubt took if ubt dies;
 * `held` is set right after each write: dying in between leaks one count
 * (the program computes probe arguments for nothing) rather than taking
 * away another tracer's.
 *
 * Every thread is stopped (att_arm, att_detach), so this read-modify-write
 * through /proc/PID/mem is atomic with respect to the target; another
 * tracer's kernel uprobe (ref_ctr_offset) adjusts the same counter the
 * same way, by adding and subtracting, so counts from both add up.
 */
static int sema_adjust(struct att_session *s, uint64_t addr, int delta)
{
	uint16_t v;
	int ret = tracee_read(&s->t, addr, &v, sizeof(v));
	if (ret)
		return ret;
	if (delta < 0 && v == 0)
		return -ERANGE; /* someone reset it: never wrap to 65535 */
	v = (uint16_t)(v + delta);
	return tracee_write(&s->t, addr, &v, sizeof(v));
}

int att_usdt_semas_take(struct att_session *s)
{
	for (int i = 0; i < s->nsemas; i++) {
		int ret = sema_adjust(s, s->semas[i].addr, +1);
		if (ret) {
			diag_sys(NULL, "pid %d: usdt semaphore at 0x%llx: %s", s->t.pid,
				 (unsigned long long)s->semas[i].addr, strerror(-ret));
			att_usdt_semas_release(s);
			return ret;
		}
		s->semas[i].held = true;
	}
	return 0;
}

void att_usdt_semas_release(struct att_session *s)
{
	for (int i = 0; i < s->nsemas; i++) {
		if (!s->semas[i].held)
			continue;
		/* cleared first: if ubt dies here, the watchdog leaves one count
		 * too many rather than taking one that another tracer holds */
		s->semas[i].held = false;
		__sync_synchronize();
		sema_adjust(s, s->semas[i].addr, -1);
	}
}

/* ---- planning --------------------------------------------------------- */

static int load_bias(struct att_session *s, const struct att_point *p, const struct proc_map *maps,
		     int nmaps, uint64_t *bias)
{
	struct elf_file f = {.dev = p->dev, .ino = p->ino};
	char *path = p->path[0] == '/' && strncmp(p->path, "/proc/", 6)
			     ? xasprintf("/proc/%d/root%s", s->t.pid, p->path)
			     : xstrdup(p->path);
	int ret = elf_file_open(&f, path);
	free(path);
	if (!ret) {
		ret = proc_load_bias(maps, nmaps, &f, bias);
		elf_file_close(&f);
	}
	if (ret)
		diag_sys(NULL, "pid %d: %s is not loaded in the process", s->t.pid, p->path);
	return ret ? -ENOENT : 0;
}

/* Slots of struct rt_regs_mid point p's argument list reads (bit = offset / 8). */
static uint32_t regs_read(const struct att_session *s, const struct att_point *p)
{
	uint32_t m = 0;
	for (int i = 0; i < s->nusdt; i++) {
		if (s->usdt[i].probe_index != p->probe_index)
			continue;
		const struct cg_usdt_spec *spec = &s->usdt[i].specs[p->variant];
		for (int k = 0; k < spec->nargs; k++) {
			if (spec->args[k].reg != CG_USDT_NOREG)
				m |= 1u << (spec->args[k].reg / 8);
			if (spec->args[k].index != CG_USDT_NOREG)
				m |= 1u << (spec->args[k].index / 8);
		}
	}
	return m;
}

/*
 * One site per distinct location address, planned as a mid-function site;
 * semaphores are recorded for att_arm().  Called by session.c's planning
 * with the target's mappings.
 */
int att_usdt_plan(struct att_session *s, const struct proc_map *maps, int nmaps)
{
	uint64_t *addrs = xcalloc(s->npoints + 1, sizeof(*addrs)), *bias = xcalloc(s->npoints + 1, 8);
	int ret = 0, n = 0;
	for (int i = 0; i < s->npoints && !ret; i++) {
		if (!s->points[i].usdt)
			continue;
		ret = load_bias(s, &s->points[i], maps, nmaps, &bias[i]);
		addrs[n++] = bias[i] + s->points[i].vaddr;
	}
	for (int i = 0; i < s->npoints && !ret; i++) {
		struct att_point *p = &s->points[i];
		if (!p->usdt)
			continue;
		uint64_t addr = bias[i] + p->vaddr, func = bias[i] + p->func_vaddr;
		if (p->sema && (ret = sema_add(s, bias[i] + p->sema)))
			break;
		struct att_site *site = NULL;
		for (int j = 0; j < s->nsites; j++)
			if (s->sites[j].plan.site == addr)
				site = &s->sites[j];
		if (site && !site->mid) {
			diag_sys(NULL, "%s: a uprobe and a usdt probe at the same address 0x%llx",
				 p->path, (unsigned long long)addr);
			ret = -EINVAL;
			break;
		}
		if (!site) {
			if (s->nsites == ATT_MAX_SITES) {
				diag_sys(NULL, "more than %d probed locations", ATT_MAX_SITES);
				ret = -E2BIG;
				break;
			}
			site = &s->sites[s->nsites++];
			memset(site, 0, sizeof(*site));
			site->mid = true;
			site->island = -1; /* not placed yet (placement.c groups sites by reach) */
			site->func_addr = func;
			site->func_len = p->func_size;
			size_t len = p->func_size ? p->func_size : (size_t)(addr - func) + ARCH_MAX_DISPLACED;
			uint8_t *code = xmalloc(len);
			ret = tracee_read(&s->t, func, code, len);
			if (!ret)
				ret = arch_plan_mid_site(code, p->func_size, func, addr, addrs, n,
							 &site->plan);
			free(code);
			if (ret) {
				diag_sys(NULL, "%s: usdt probe %s at 0x%llx: cannot decode its code: %s",
					 p->path, p->func, (unsigned long long)p->vaddr,
					 strerror(-ret));
				break;
			}
			if (site->plan.kind != ARCH_PATCH_JMP)
				fprintf(stderr,
					"WARNING: %s:%s at 0x%llx: using a breakpoint (about 2 us per "
					"hit) instead of a jump: %s\n",
					p->path, p->func, (unsigned long long)p->vaddr, site->plan.why);
		}
		if (site->nhandlers == (int)ARRAY_SIZE(site->handlers)) {
			diag_sys(NULL, "%s:%s: too many probes on one location", p->path, p->func);
			ret = -E2BIG;
			break;
		}
		site->variants[site->nhandlers] = p->variant;
		site->handlers[site->nhandlers++] = (uint64_t)p->probe_index;
		site->plan.mid_read |= regs_read(s, p);
	}
	free(addrs);
	free(bias);
	return ret;
}
