/*
 * syscalls.c - the system-call tracepoints' formats, names and `args`
 * records: `tracepoint:syscalls:sys_enter_NAME` / `sys_exit_NAME` and
 * `tracepoint:raw_syscalls:sys_enter` / `sys_exit` (issue 16).
 *
 * Pipeline position: att_sys_args() runs after parse_script() and before
 * sema_check(), beside att_dwarf_args(): it expands each such attach point
 * (wildcards in the event's name), fails with bpftrace's "tracepoint not
 * found" when nothing matches, and gives every probe that reads `args`
 * the record of each tracepoint it matched (probe->tp_args; probe->args is
 * the first), which sema_args.c checks fields against.  att_sys_resolve(),
 * part of att_resolve(), then finds the sites in libc, and att_sys_objects(),
 * once the process is open, in its other objects (the program, ld.so, every
 * library): each function's
 * `syscall` instructions (arch_syscall_sites) whose number a point wants
 * become mid-function points, sys_enter at the `mov $NR, %eax` before the
 * instruction, sys_exit just after it:
 *
 *   write+0x09: b8 01 00 00 00   mov $0x1,%eax   <- sys_enter_write (jmp over the mov)
 *   write+0x0e: 0f 05            syscall         (stays: the kernel restarts here)
 *   write+0x10: 48 3d 00 f0 ...  cmp ...,%rax    <- sys_exit_write, ret = %rax
 *
 * Where no such `mov` loads the number (read's `xor %eax,%eax`, syscall(2)'s
 * `mov %rdi,%rax`, _exit's `mov %esi,%eax`) the one site is the `syscall`
 * itself (site_points below); where only %rax knows the number, sys_enter
 * reads it there when the site runs (struct cg_sys_dyn).
 *
 * Formats come from tracefs when it is mounted, so a newer kernel's field
 * is found; otherwise from syscall_tab.c, generated for x86-64 by
 * tools/gen_syscall_tab.py, whose formats all have one shape:
 *
 *   offset  syscalls:sys_enter_NAME   syscalls:sys_exit_NAME   raw_syscalls
 *   0       common_type, common_flags, common_preempt_count, common_pid
 *   8       int __syscall_nr          int __syscall_nr         long id
 *   16+8k   argument k (8 bytes)      long ret (k = 0)         args[6] / ret
 *
 * Types are bpftrace 0.17's (its tracepoint_format_parser): the declared
 * C type, except that an `int` field 8 bytes wide is int64 and `unsigned
 * int`, `unsigned`, `u32`, `pid_t`, `uid_t`, `gid_t` 8 bytes wide are
 * uint64; a typedef has its x86-64 kernel type (size_t: uint64, umode_t:
 * uint16, ...).  The record is named `struct _tracepoint_CATEGORY_EVENT`,
 * the name bpftrace's errors print.
 */
#include "syscalls.h"
#include "attach/session.h"
#include "elf/elfsym.h"
#include "elf/findlib.h"
#include "parser/ast.h"
#include "resolve.h"
#include "util/diag.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool att_sys_category(const char *category)
{
	return category && (!strcmp(category, "syscalls") || !strcmp(category, "raw_syscalls"));
}

const char *att_sys_tracefs(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	const char *env = getenv("UBT_TRACEFS");
	char path[512];
	struct stat st;
	for (size_t i = 0; i < (env ? 1 : ARRAY_SIZE(dirs)); i++) {
		const char *d = env ? env : dirs[i];
		snprintf(path, sizeof(path), "%s/events/syscalls", d);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			return d;
	}
	return NULL;
}

const char *const *att_sys_names(int *n)
{
	*n = ATT_SYS_MAX_NR;
	return att_sys_call_names;
}

const struct att_sys_call *att_sys_find(const char *name)
{
	for (int i = 0; i < att_sys_tab_len; i++)
		if (!strcmp(att_sys_tab[i].name, name))
			return &att_sys_tab[i];
	return NULL;
}

/* ---- event names --------------------------------------------------------------- */

struct names {
	char **v;
	int n, cap;
};

static void names_add(struct names *ns, const char *pattern, char *name)
{
	if (fnmatch(pattern, name, 0)) {
		free(name);
		return;
	}
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? 2 * ns->cap : 64;
		ns->v = xrealloc(ns->v, (size_t)ns->cap * sizeof(*ns->v));
	}
	ns->v[ns->n++] = name;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **att_sys_events(const char *category, const char *pattern, int *n)
{
	struct names ns = {0};
	const char *tfs = att_sys_tracefs();
	if (tfs) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/events/%s", tfs, category);
		DIR *d = opendir(dir);
		for (struct dirent *e; d && (e = readdir(d));)
			if (e->d_type == DT_DIR && e->d_name[0] != '.')
				names_add(&ns, pattern, xstrdup(e->d_name));
		if (d)
			closedir(d);
	} else if (!strcmp(category, "raw_syscalls")) {
		names_add(&ns, pattern, xstrdup("sys_enter"));
		names_add(&ns, pattern, xstrdup("sys_exit"));
	} else if (!strcmp(category, "syscalls")) {
		for (int i = 0; i < att_sys_tab_len; i++) {
			names_add(&ns, pattern, xasprintf("sys_enter_%s", att_sys_tab[i].name));
			names_add(&ns, pattern, xasprintf("sys_exit_%s", att_sys_tab[i].name));
		}
	}
	if (ns.n)
		qsort(ns.v, (size_t)ns.n, sizeof(*ns.v), cmp_name);
	*n = ns.n;
	return ns.v;
}

/* ---- formats ------------------------------------------------------------------- */

static void field_add(struct att_sys_format *f, const char *decl, int offset, int size)
{
	f->fields = xrealloc(f->fields, (size_t)(f->nfields + 1) * sizeof(*f->fields));
	struct att_sys_field *fl = &f->fields[f->nfields++];
	memset(fl, 0, sizeof(*fl));
	/* "const char * buf", "unsigned long args[6]": the name is the last word */
	const char *sp = strrchr(decl, ' ');
	const char *tab = strrchr(decl, '\t');
	if (tab > sp)
		sp = tab;
	const char *name = sp ? sp + 1 : decl;
	size_t tlen = sp ? (size_t)(sp - decl) : 0;
	while (tlen && (decl[tlen - 1] == ' ' || decl[tlen - 1] == '\t'))
		tlen--;
	fl->type = xstrndup(decl, tlen);
	const char *br = strchr(name, '[');
	fl->name = xstrndup(name, br ? (size_t)(br - name) : strlen(name));
	if (br)
		fl->count = atoi(br + 1);
	fl->offset = offset;
	fl->size = size;
}

static void common_fields(struct att_sys_format *f)
{
	field_add(f, "unsigned short common_type", 0, 2);
	field_add(f, "unsigned char common_flags", 2, 1);
	field_add(f, "unsigned char common_preempt_count", 3, 1);
	field_add(f, "int common_pid", 4, 4);
}

/* The table's format of CATEGORY:EVENT (the shape in the header comment). */
static int table_format(const char *category, const char *event, struct att_sys_format *f)
{
	bool raw = !strcmp(category, "raw_syscalls");
	bool enter = !strncmp(event, "sys_enter", 9);
	const struct att_sys_call *c = NULL;
	if (raw ? strcmp(event, "sys_enter") && strcmp(event, "sys_exit")
		: !(c = att_sys_find(event + (enter ? 10 : 9))) ||
		      (strncmp(event, "sys_enter_", 10) && strncmp(event, "sys_exit_", 9)))
		return -ENOENT;
	common_fields(f);
	field_add(f, raw ? "long id" : "int __syscall_nr", 8, raw ? 8 : 4);
	if (!enter) {
		field_add(f, "long ret", 16, 8);
	} else if (raw) {
		field_add(f, "unsigned long args[6]", 16, 48);
	} else {
		/* "int fd; const char * buf" */
		char *decls = xstrdup(c->args), *save = NULL;
		int k = 0;
		for (char *d = strtok_r(decls, ";", &save); d; d = strtok_r(NULL, ";", &save)) {
			while (*d == ' ')
				d++;
			if (*d)
				field_add(f, d, 16 + 8 * k++, 8);
		}
		free(decls);
	}
	return 0;
}

/* "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;" */
static void tracefs_line(struct att_sys_format *f, const char *line)
{
	const char *fp = strstr(line, "field:");
	const char *op = fp ? strstr(fp, "offset:") : NULL;
	const char *sp = op ? strstr(op, "size:") : NULL;
	const char *semi = fp ? strchr(fp, ';') : NULL;
	if (!sp || !semi || semi > op)
		return;
	char *decl = xstrndup(fp + 6, (size_t)(semi - fp - 6));
	field_add(f, decl, atoi(op + 7), atoi(sp + 5));
	free(decl);
}

int att_sys_format(const char *category, const char *event, struct att_sys_format *f)
{
	memset(f, 0, sizeof(*f));
	const char *tfs = att_sys_tracefs();
	if (!tfs)
		return table_format(category, event, f);
	char path[768];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tfs, category, event);
	FILE *in = fopen(path, "r");
	if (!in)
		return -ENOENT;
	char line[1024];
	while (fgets(line, sizeof(line), in))
		tracefs_line(f, line);
	fclose(in);
	return 0;
}

void att_sys_format_free(struct att_sys_format *f)
{
	for (int i = 0; i < f->nfields; i++) {
		free(f->fields[i].type);
		free(f->fields[i].name);
	}
	free(f->fields);
	memset(f, 0, sizeof(*f));
}

/* ---- bpftrace's types of the fields --------------------------------------------- */

/* C integer types and the x86-64 kernel's typedefs of the syscalls' formats */
static const struct {
	const char *name;
	int size;
	bool is_signed;
} int_types[] = {
    {"char", 1, true},
    {"signed char", 1, true},
    {"unsigned char", 1, false},
    {"short", 2, true},
    {"unsigned short", 2, false},
    {"int", 4, true},
    {"unsigned int", 4, false},
    {"unsigned", 4, false},
    {"long", 8, true},
    {"unsigned long", 8, false},
    {"long long", 8, true},
    {"unsigned long long", 8, false},
    {"s8", 1, true},
    {"u8", 1, false},
    {"s16", 2, true},
    {"u16", 2, false},
    {"s32", 4, true},
    {"u32", 4, false},
    {"s64", 8, true},
    {"u64", 8, false},
    {"__s8", 1, true},
    {"__u8", 1, false},
    {"__s16", 2, true},
    {"__u16", 2, false},
    {"__s32", 4, true},
    {"__u32", 4, false},
    {"__s64", 8, true},
    {"__u64", 8, false},
    {"size_t", 8, false},
    {"ssize_t", 8, true},
    {"loff_t", 8, true},
    {"off_t", 8, true},
    {"pid_t", 4, true},
    {"uid_t", 4, false},
    {"gid_t", 4, false},
    {"qid_t", 4, false},
    {"umode_t", 2, false},
    {"key_t", 4, true},
    {"mqd_t", 4, true},
    {"timer_t", 4, true},
    {"clockid_t", 4, true},
    {"aio_context_t", 8, false},
    {"rwf_t", 4, true},
    {"key_serial_t", 4, true},
    {"time_t", 8, true},
};

/* "const char *" -> "char", depth 1; "const __u32" -> "__u32" (buf: len bytes) */
static int base_type(const char *type, char *buf, size_t len)
{
	int depth = 0;
	size_t w = 0;
	const char *p = type;
	while (*p) {
		if (*p == '*') {
			depth++;
			p++;
		} else if (!strncmp(p, "const", 5) && (!p[5] || p[5] == ' ' || p[5] == '*')) {
			p += 5;
		} else if (!strncmp(p, "volatile", 8) && (!p[8] || p[8] == ' ' || p[8] == '*')) {
			p += 8;
		} else if (*p == ' ') {
			if (w && buf[w - 1] != ' ' && w + 1 < len)
				buf[w++] = ' ';
			p++;
		} else {
			while (*p && *p != ' ' && *p != '*') {
				if (w + 1 < len)
					buf[w++] = *p;
				p++;
			}
		}
	}
	while (w && buf[w - 1] == ' ')
		w--;
	buf[w] = 0;
	return depth;
}

static bool int_type(const char *base, struct ast_type *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(int_types); i++)
		if (!strcmp(int_types[i].name, base)) {
			*t = (struct ast_type){.kind = TY_INT,
					       .size = int_types[i].size,
					       .is_signed = int_types[i].is_signed};
			return true;
		}
	return false;
}

/* One field's type.  cap_user_header_t and cap_user_data_t are pointer typedefs. */
static struct ast_type field_type(struct ast_program *prog, const struct att_sys_field *f)
{
	static const char *const widened_u64[] = {"unsigned int", "unsigned", "u32",
						  "pid_t",	  "uid_t",    "gid_t"};
	char base[128];
	struct ast_type t = {.kind = TY_NONE};
	int depth = base_type(f->type, base, sizeof(base));
	if (!strcmp(base, "cap_user_header_t") || !strcmp(base, "cap_user_data_t"))
		depth++;
	if (!depth && !f->count && f->size == 8) {
		/* bpftrace matches the declared text, `const int` not included */
		if (!strcmp(f->type, "int"))
			return (struct ast_type){.kind = TY_INT, .size = 8, .is_signed = true};
		for (size_t i = 0; i < ARRAY_SIZE(widened_u64); i++)
			if (!strcmp(f->type, widened_u64[i]))
				return (struct ast_type){.kind = TY_INT, .size = 8};
	}
	if (!int_type(base, &t)) {
		if (depth)
			t = (struct ast_type){.kind = TY_NONE}; /* void *, struct x * */
		else if (!strncmp(base, "enum ", 5))
			t = (struct ast_type){.kind = TY_INT, .size = 4};
		else /* a typedef ubt does not know: an integer of the field's size */
			t = (struct ast_type){.kind = TY_INT, .size = f->size >= 8 ? 8 : f->size};
	}
	for (int i = 0; i < depth; i++)
		t = ast_ptr_to(prog, t);
	if (f->count > 0) {
		struct ast_type *e = ast_arena_alloc(prog, sizeof(*e));
		*e = t;
		t = (struct ast_type){
		    .kind = TY_ARRAY, .size = e->size * f->count, .elem = e, .count = f->count};
	}
	return t;
}

static char *arena_str(struct ast_program *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *r = ast_arena_alloc(p, n);
	memcpy(r, s, n);
	return r;
}

/* The record of one format, named struct _tracepoint_CATEGORY_EVENT. */
static const struct ast_record *format_record(struct ast_program *prog, const char *category,
					      const char *event, const struct att_sys_format *f)
{
	struct ast_record *r = ast_arena_alloc(prog, sizeof(*r));
	char *name = xasprintf("struct _tracepoint_%s_%s", category, event);
	r->name = arena_str(prog, name);
	free(name);
	r->complete = true;
	r->align = 8;
	r->members =
	    ast_arena_alloc(prog, (size_t)(f->nfields ? f->nfields : 1) * sizeof(*r->members));
	for (int i = 0; i < f->nfields; i++) {
		struct ast_member *m = &r->members[r->nmembers++];
		memset(m, 0, sizeof(*m));
		m->name = arena_str(prog, f->fields[i].name);
		m->type = field_type(prog, &f->fields[i]);
		/* bpftrace: raw_syscalls' fields are the kernel's, syscalls' the user's */
		m->type.as = strcmp(category, "raw_syscalls") ? AS_USER : AS_KERNEL;
		m->offset = f->fields[i].offset;
		if (f->fields[i].offset + f->fields[i].size > r->size)
			r->size = f->fields[i].offset + f->fields[i].size;
	}
	r->size = (r->size + 7) / 8 * 8;
	return r;
}

/* ---- attach points before sema ------------------------------------------------------ */

static bool is_sys_point(const struct ast_node *a)
{
	return a->attach.provider && !strcmp(a->attach.provider, "tracepoint") &&
	       !a->attach.kernel && att_sys_category(a->attach.target);
}

static void tp_args_add(struct ast_program *prog, struct ast_node *probe,
			const struct ast_record *r)
{
	for (int i = 0; i < probe->ntp_args; i++)
		if (!strcmp(probe->tp_args[i]->name, r->name))
			return;
	const struct ast_record **v =
	    ast_arena_alloc(prog, (size_t)(probe->ntp_args + 1) * sizeof(*v));
	if (probe->ntp_args)
		memcpy(v, probe->tp_args, (size_t)probe->ntp_args * sizeof(*v));
	v[probe->ntp_args++] = r;
	probe->tp_args = v;
	if (!probe->args)
		probe->args = r;
}

/* One attach point: its events, their records if the probe reads args. */
static int sys_point(struct ast_program *prog, struct ast_node *probe, const struct ast_node *a,
		     bool want_args, struct diags *diags)
{
	int n = 0, ret = 0;
	char **ev = att_sys_events(a->attach.target, a->attach.func, &n);
	if (!n) {
		char *plain = attach_plain(a->attach.func);
		diag_error(diags, a->loc, "tracepoint%s not found: %s:%s",
			   a->attach.wildcard ? "s" : "", a->attach.target,
			   a->attach.wildcard ? a->attach.func : plain);
		free(plain);
		ret = -ENOENT;
	}
	for (int i = 0; i < n; i++) {
		struct att_sys_format f;
		if (want_args && !ret && !att_sys_format(a->attach.target, ev[i], &f)) {
			tp_args_add(prog, probe, format_record(prog, a->attach.target, ev[i], &f));
			att_sys_format_free(&f);
		}
		free(ev[i]);
	}
	free(ev);
	return ret;
}

int att_sys_args(struct ast_node *prog, struct diags *diags)
{
	int ret = 0;
	if (!prog->prog)
		prog->prog = xcalloc(1, sizeof(*prog->prog));
	for (int i = 0; i < prog->nkids; i++) {
		struct ast_node *probe = prog->kids[i];
		bool want = att_uses_args(probe->pred, 0) || att_uses_args(probe->body, 0);
		for (int j = 0; j < probe->nkids; j++)
			if (is_sys_point(probe->kids[j]) &&
			    sys_point(prog->prog, probe, probe->kids[j], want, diags))
				ret = -ENOENT;
	}
	return ret;
}

int att_sys_name_len(const struct ast_node *a)
{
	int n = 0, len = 0;
	if (!is_sys_point(a))
		return 0;
	char **ev = att_sys_events(a->attach.target, a->attach.func, &n);
	for (int i = 0; i < n; i++) {
		int l = (int)(strlen("tracepoint::") + strlen(a->attach.target) + strlen(ev[i]));
		if (l > len)
			len = l;
		free(ev[i]);
	}
	free(ev);
	return len;
}

/* ---- sites in libc ------------------------------------------------------------------ */

/* The calls one attach point wants: nr -> enter/exit bits, nr -1 for every call (raw). */
struct sys_want {
	uint8_t kind[ATT_SYS_MAX_NR]; /* bit 1 << CG_SYS_ENTER, 1 << CG_SYS_EXIT */
	const char *event[ATT_SYS_MAX_NR][3];
	char **ev;
	int nev;
};

static void want_events(const struct ast_node *a, struct sys_want *w)
{
	memset(w, 0, sizeof(*w));
	bool raw = !strcmp(a->attach.target, "raw_syscalls");
	w->ev = att_sys_events(a->attach.target, a->attach.func, &w->nev);
	for (int i = 0; i < w->nev; i++) {
		const char *e = w->ev[i];
		int kind = !strncmp(e, "sys_enter", 9) ? CG_SYS_ENTER : CG_SYS_EXIT;
		for (int k = 0; k < att_sys_tab_len; k++) {
			const struct att_sys_call *c = &att_sys_tab[k];
			if (c->nr < 0 || c->nr >= ATT_SYS_MAX_NR)
				continue;
			if (!raw && strcmp(c->name, e + (kind == CG_SYS_ENTER ? 10 : 9)))
				continue;
			w->kind[c->nr] |= (uint8_t)(1 << kind);
			w->event[c->nr][kind] = e;
		}
	}
}

struct sys_scan {
	struct ef_file *f;
	const char *path;
	const struct ast_node *probe, *a;
	int index;
	struct att_session *s;
	const struct sys_want *w;
	bool raw;
	const struct cg_sys_dyn *dyn[3]; /* per kind, for the dynamic sites (NULL: none) */
	enum ef_bounds from;		 /* EH_FRAME while scanning .eh_frame's FDEs */
};

static bool point_at(const struct att_session *s, const struct ast_node *a, uint64_t vaddr,
		     int kind, int nr)
{
	for (int i = 0; i < s->npoints; i++)
		if (s->points[i].attach == a && s->points[i].vaddr == vaddr &&
		    s->points[i].sys_kind == kind && s->points[i].sys_nr == nr)
			return true;
	return false;
}

static void sys_point_add(struct sys_scan *sc, const struct ef_func *fn, uint64_t vaddr, int nr,
			  int kind, bool at_insn)
{
	struct att_session *s = sc->s;
	if (point_at(s, sc->a, vaddr, kind, nr))
		return; /* an alias of a function seen before (write, __write) */
	s->points = xrealloc(s->points, (s->npoints + 1) * sizeof(*s->points));
	struct att_point *p = &s->points[s->npoints++];
	memset(p, 0, sizeof(*p));
	p->probe = sc->probe;
	p->attach = sc->a;
	p->probe_index = sc->index;
	p->path = xstrdup(sc->path);
	if (sc->raw && nr != CG_SYS_SAVE)
		p->func = xstrdup(kind == CG_SYS_ENTER ? "sys_enter" : "sys_exit");
	else if (nr < 0) /* the variant's `probe` is the call's (cg_sys_probe_name) */
		p->func = xstrdup(sc->a->attach.func);
	else
		p->func = xstrdup(sc->w->event[nr][kind]);
	p->vaddr = vaddr;
	p->dev = sc->f->dev;
	p->ino = sc->f->ino;
	p->mid = true;
	p->func_vaddr = fn->value;
	p->func_size = fn->size;
	p->func_from = sc->from ? sc->from : fn->dynamic ? EF_BOUNDS_DYNSYM : EF_BOUNDS_SYMTAB;
	p->variant = -1;
	p->sys_kind = (uint8_t)kind;
	p->sys_nr = nr;
	p->sys_at_insn = at_insn;
	p->sys_after = at_insn && kind == CG_SYS_EXIT;
	p->sys_dyn = nr == -1 ? sc->dyn[kind] : NULL;
}

/*
 * One system call site.  Where a `mov $NR, %eax` a jump can go over loads
 * the number (site != insn), sys_enter is at the `mov` and sys_exit just
 * after the `syscall`, two sites that leave the `syscall` in place.
 * Otherwise (read's 2-byte `xor %eax,%eax`, a number only %rax knows) one
 * site at the `syscall` itself, whose trampoline runs sys_enter before the
 * relocated `syscall` and sys_exit after it (arch mid.c, mid_after):
 *
 *   read+0x09: 31 c0      xor %eax,%eax
 *   read+0x0b: 0f 05      syscall           <- jmp (syscall and cmp displaced)
 *   read+0x0d: 48 3d ..   cmp $-4096,%rax
 *
 * At a dynamic site sys_enter reads the number from %rax (struct
 * cg_sys_dyn); for sys_exit, after the call no register holds it any more:
 * a CG_SYS_SAVE handler before the call keeps it in the thread's slot, the
 * exit variant reads it there (codegen/cg_args.c).
 */
static void site_points(struct sys_scan *sc, const struct ef_func *fn,
			const struct arch_sys_site *site)
{
	const struct sys_want *w = sc->w;
	int nr = site->nr;
	if (nr < 0) {
		if (sc->dyn[CG_SYS_ENTER])
			sys_point_add(sc, fn, site->insn, -1, CG_SYS_ENTER, true);
		if (sc->dyn[CG_SYS_EXIT]) { /* the number kept before the call, read after */
			sys_point_add(sc, fn, site->insn, CG_SYS_SAVE, CG_SYS_ENTER, true);
			sys_point_add(sc, fn, site->insn, -1, CG_SYS_EXIT, true);
		}
		return;
	}
	if (nr >= ATT_SYS_MAX_NR || !w->kind[nr])
		return;
	bool enter = w->kind[nr] & (1 << CG_SYS_ENTER), exit_ = w->kind[nr] & (1 << CG_SYS_EXIT);
	bool own = site->site == site->insn; /* no mov to jump over */
	if (enter)
		sys_point_add(sc, fn, site->site, nr, CG_SYS_ENTER, own);
	if (exit_)
		sys_point_add(sc, fn, own ? site->insn : site->insn + 2, nr, CG_SYS_EXIT, own);
}

/* One function of libc: its sites whose number the point wants. */
static void scan_func(const struct ef_func *fn, void *arg)
{
	struct sys_scan *sc = arg;
	if (!fn->size || fn->plt || fn->size > (1u << 20))
		return;
	uint8_t *code = xmalloc(fn->size);
	struct arch_sys_site sites[64];
	int n = 0;
	if (!ef_read_vaddr(sc->f, fn->value, code, fn->size))
		n = arch_syscall_sites(code, fn->size, fn->value, sites, 64);
	free(code);
	for (int i = 0; i < n && i < 64; i++)
		site_points(sc, fn, &sites[i]);
}

/*
 * The FDEs of .eh_frame too: a stripped library's static functions have no
 * symbol (libc's start_thread, which ends a thread with exit at a `mov
 * %r8d,%eax; syscall`).  A site a symbol's function gave already is not
 * added twice (sys_point_add).
 */
static void scan_fde(const struct ef_range *r, void *arg)
{
	struct ef_func fn = {.value = r->start, .size = r->end - r->start};
	struct sys_scan *sc = arg;
	sc->from = EF_BOUNDS_EH_FRAME;
	scan_func(&fn, arg);
	sc->from = EF_BOUNDS_NONE;
}

/* The calls of one kind the point wants at a dynamic site, or NULL for none. */
static const struct cg_sys_dyn *dyn_of(struct att_session *s, const struct sys_want *w, bool raw,
				       int kind)
{
	struct cg_sys_dyn *d = xcalloc(1, sizeof(*d));
	for (int nr = 0; nr < ATT_SYS_MAX_NR; nr++) {
		if (!(w->kind[nr] & (1 << kind)))
			continue;
		if (raw) /* every call, under one name */
			break;
		d->nr = xrealloc(d->nr, (size_t)(d->n + 1) * sizeof(*d->nr));
		d->names = xrealloc(d->names, (size_t)(d->n + 1) * sizeof(*d->names));
		d->nr[d->n] = nr;
		d->names[d->n++] = xasprintf("tracepoint:syscalls:%s", w->event[nr][kind]);
	}
	bool any = d->n > 0;
	for (int nr = 0; raw && nr < ATT_SYS_MAX_NR && !any; nr++)
		any = w->kind[nr] & (1 << kind);
	if (!any) {
		free(d);
		return NULL;
	}
	s->sys_dyns = xrealloc(s->sys_dyns, (size_t)(s->nsys_dyns + 1) * sizeof(*s->sys_dyns));
	s->sys_dyns[s->nsys_dyns++] = d;
	return d;
}

void att_sys_dyn_free(struct att_session *s)
{
	for (int i = 0; i < s->nsys_dyns; i++) {
		struct cg_sys_dyn *d = s->sys_dyns[i];
		for (int k = 0; k < d->n; k++)
			free(d->names[k]);
		free(d->names);
		free(d->nr);
		free(d);
	}
	free(s->sys_dyns);
	s->sys_dyns = NULL;
	s->nsys_dyns = 0;
	free(s->sys_attach);
	s->sys_attach = NULL;
	s->nsys_attach = 0;
	free(s->sys_seen);
	s->sys_seen = NULL;
	s->nsys_seen = 0;
}

/* The sites of one attach point in one file (path: the name shown). */
static void scan_file(struct att_session *s, const struct att_sys_attach *at, struct ef_file *f,
		      const char *path)
{
	struct sys_want *w = xmalloc(sizeof(*w));
	want_events(at->a, w);
	bool raw = !strcmp(at->a->attach.target, "raw_syscalls");
	struct sys_scan sc = {f, path, at->probe, at->a, at->index, s, w, raw};
	sc.dyn[CG_SYS_ENTER] = at->dyn;
	sc.dyn[CG_SYS_EXIT] = at->dyn_exit;
	ef_foreach_func(f, scan_func, &sc);
	ef_foreach_fde(f, scan_fde, &sc);
	for (int i = 0; i < w->nev; i++)
		free(w->ev[i]);
	free(w->ev);
	free(w);
}

int att_sys_resolve(const struct ast_node *probe, int index, const struct ast_node *a,
		    struct att_session *s, struct diags *diags)
{
	if (!is_sys_point(a))
		return 0;
	char *path = ef_find_binary(s->pid_hint, "libc");
	if (!path) {
		diag_error(diags, a->loc, "tracepoint:%s:%s: no libc to find system calls in",
			   a->attach.target, a->attach.func);
		return -ENOENT;
	}
	char *open = att_open_path(s->pid_hint, path);
	struct ef_file f;
	int ret = ef_open(&f, open);
	free(open);
	if (ret) {
		diag_error(diags, a->loc, "tracepoint:%s:%s: cannot read %s", a->attach.target,
			   a->attach.func, path);
		free(path);
		return ret;
	}
	struct sys_want *w = xmalloc(sizeof(*w));
	want_events(a, w);
	s->sys_attach =
	    xrealloc(s->sys_attach, (size_t)(s->nsys_attach + 1) * sizeof(*s->sys_attach));
	struct att_sys_attach *at = &s->sys_attach[s->nsys_attach++];
	*at = (struct att_sys_attach){probe, a, index, NULL, NULL};
	at->dyn = dyn_of(s, w, !strcmp(a->attach.target, "raw_syscalls"), CG_SYS_ENTER);
	at->dyn_exit = dyn_of(s, w, !strcmp(a->attach.target, "raw_syscalls"), CG_SYS_EXIT);
	for (int i = 0; i < w->nev; i++)
		free(w->ev[i]);
	free(w->ev);
	free(w);
	s->sys_libc_dev = f.dev;
	s->sys_libc_ino = f.ino;
	scan_file(s, at, &f, path);
	ef_close(&f);
	free(path);
	return 0;
}

/*
 * Once the process is open (-p, or -c stopped at its entry point, its
 * libraries loaded): the `syscall` instructions of every other object it
 * has mapped executable, the program's own (inline asm, a static wrapper)
 * and those of every library but libc, which att_sys_resolve scanned.  The
 * vDSO is no file and is left out (its calls that enter the kernel are the
 * fallbacks of clock_gettime & co.).  The new points' variants are named
 * again (names.c) before codegen compiles them.
 */
/* Remembers a scanned file; false if it was scanned before. */
static bool first_scan(struct att_session *s, dev_t dev, ino_t ino)
{
	for (int i = 0; i < s->nsys_seen; i++)
		if (s->sys_seen[i].dev == dev && s->sys_seen[i].ino == ino)
			return false;
	s->sys_seen = xrealloc(s->sys_seen, (size_t)(s->nsys_seen + 1) * sizeof(*s->sys_seen));
	s->sys_seen[s->nsys_seen++] = (struct att_file_id){dev, ino};
	return true;
}

/* Scans every object of pid not scanned yet (libc: att_sys_resolve). */
static void scan_objects(struct att_session *s, pid_t pid)
{
	char **files = NULL;
	int n = 0;
	if (!s->nsys_attach || proc_objects(pid, &files, &n))
		return;
	first_scan(s, s->sys_libc_dev, s->sys_libc_ino);
	char *root = xasprintf("/proc/%d/root", (int)pid);
	for (int i = 0; i < n; i++) {
		struct ef_file f;
		if (ef_open(&f, files[i]))
			continue;
		const char *shown = files[i];
		if (!strncmp(shown, root, strlen(root)))
			shown += strlen(root);
		if (first_scan(s, f.dev, f.ino))
			for (int k = 0; k < s->nsys_attach; k++)
				scan_file(s, &s->sys_attach[k], &f, shown);
		ef_close(&f);
	}
	free(root);
	proc_objects_free(files, n);
}

/* libc, as att_sys_resolve scanned it, is one of pid's objects */
static bool libc_mapped(const struct att_session *s, pid_t pid)
{
	char **files = NULL;
	int n = 0;
	bool found = false;
	if (proc_objects(pid, &files, &n))
		return true; /* the process is gone: attach says so */
	for (int i = 0; i < n && !found; i++) {
		struct stat st;
		found = !stat(files[i], &st) && st.st_dev == s->sys_libc_dev &&
			st.st_ino == s->sys_libc_ino;
	}
	proc_objects_free(files, n);
	return found;
}

int att_sys_objects(struct att_session *s, pid_t pid)
{
	int before = s->npoints;
	if (!s->nsys_attach)
		return 0;
	/*
	 * A static program (or one with another libc): its system calls are
	 * made from its own code, whose probes would run before it has set
	 * up its thread pointer (reading %fs killed the program with
	 * SIGSEGV) and read the thread's ids at the shared libc's offsets
	 * (wrong pid and tid).  Refused until that is handled.
	 */
	if (!libc_mapped(s, pid)) {
		const struct ast_node *a = s->sys_attach[0].a;
		diag_sys("trace it with bpftrace, whose tracepoints are the kernel's",
			 "tracepoint:%s:%s: pid %d does not use the shared libc (a statically "
			 "linked program?): ubt does not trace its system calls yet",
			 a->attach.target, a->attach.func, (int)pid);
		return -ENOTSUP;
	}
	scan_objects(s, pid);
	if (s->npoints != before)
		att_probe_names_sys(s);
	return 0;
}

/* The point made at attach that serves the calls of new point p, or NULL. */
static const struct att_point *served_by(const struct att_session *s, int before,
					 const struct att_point *p)
{
	for (int i = 0; i < before; i++) {
		const struct att_point *q = &s->points[i];
		if (q->sys_kind && q->probe_index == p->probe_index && q->attach == p->attach &&
		    q->sys_kind == p->sys_kind && q->sys_nr == p->sys_nr &&
		    q->sys_dyn == p->sys_dyn && !strcmp(q->func, p->func))
			return q;
	}
	return NULL;
}

int att_sys_late(struct att_session *s, pid_t pid, int *unserved)
{
	int before = s->npoints, kept = before;
	*unserved = 0;
	scan_objects(s, pid);
	for (int i = before; i < s->npoints; i++) {
		struct att_point *p = &s->points[i];
		const struct att_point *q = served_by(s, before, p);
		if (!q || s->nsites + (kept - before) >= s->max_sites) {
			++*unserved;
			free(p->path);
			free(p->func);
			continue;
		}
		p->variant = q->variant;
		p->name_id = q->name_id;
		p->pending = true; /* att_arm_late plans it, in its library */
		s->points[kept++] = *p;
	}
	s->npoints = kept;
	return kept - before;
}

int att_sys_event_count(const struct ast_node *a)
{
	int n = 0;
	if (!is_sys_point(a))
		return 0;
	char **ev = att_sys_events(a->attach.target, a->attach.func, &n);
	for (int i = 0; i < n; i++)
		free(ev[i]);
	free(ev);
	return n;
}
