/*
 * dump.c - the dumps of the attach stage: what ubt did to the target, to
 * see why a site took a breakpoint, where its code went, what was linked
 * and which remote system call failed.
 *
 *   -d sites  (att_dump_sites) every patched site as planned and placed,
 *             after att_install() (trampolines placed, patch bytes
 *             computed) and before att_arm(), and again for the sites of a
 *             library loaded later: its address as symbol+offset and file
 *             (named by the driver, which has the symbolizer), the function
 *             around it, jump or breakpoint and the reason the jump was
 *             refused, the displaced instructions, the trampoline's address
 *             in the main code or in an island (with the island's address),
 *             the relocated copy when there is one, and the patch bytes;
 *   -d link   (att_dump_link) the two linked images, the code run in the
 *             target and BEGIN/END's in ubt: each input section with its
 *             address and size, the GOT, the externs (ubt_shm, ubt_priv) and
 *             every global symbol;
 *   -d rsys   (att_dump_rsys, from att_rsys) each system call ubt makes in
 *             the target, as strace would print it, with its result:
 *
 *     rsys: pid 4242: mmap(0x7f3a1c000000, 1069056, PROT_READ|PROT_EXEC,
 *           MAP_SHARED|MAP_FIXED_NOREPLACE, 5, 0) = 0x7f3a1c000000
 *
 * Nothing here reads or writes the target: everything comes from the
 * session.  The driver prints them on stderr.
 */
#include "attach/session.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static void dump_insns(const struct att_site *site, FILE *out)
{
	const struct arch_site_plan *p = &site->plan;
	for (int i = 0; i < p->ninsns; i++) {
		int off = p->insn_off[i];
		int end = i + 1 < p->ninsns ? p->insn_off[i + 1] : p->orig_len;
		char text[96];
		if (arch_insn_text(p->orig + off, (size_t)(end - off), p->site + off, text,
				   sizeof(text)))
			snprintf(text, sizeof(text), "(not decoded)");
		fprintf(out, "    0x%llx:", (unsigned long long)(p->site + off));
		for (int k = off; k < end; k++)
			fprintf(out, " %02x", p->orig[k]);
		fprintf(out, "%*s%s\n", 3 * (8 - (end - off)) > 0 ? 3 * (8 - (end - off)) : 1, "",
			text);
	}
}

static void dump_function(const struct att_site *site, FILE *out)
{
	if (site->mid && !site->func_len) /* neither a symbol nor .eh_frame holds it */
		fprintf(out,
			"  function: unknown (no symbol or .eh_frame entry covers the site)\n");
	else if (site->func_len && site->mid && site->func_from != EF_BOUNDS_NONE)
		fprintf(out, "  function: 0x%llx, %llu bytes (%s)\n",
			(unsigned long long)site->func_addr, (unsigned long long)site->func_len,
			ef_bounds_name(site->func_from));
	else if (site->func_len)
		fprintf(out, "  function: 0x%llx, %llu bytes\n", (unsigned long long)site->func_addr,
			(unsigned long long)site->func_len);
	else
		fprintf(out, "  function: 0x%llx, size unknown\n", (unsigned long long)site->func_addr);
}

void att_dump_sites(const struct att_session *s, int first, FILE *out,
		    char *(*name)(uint64_t addr))
{
	int n = s->nsites - first;
	if (first)
		fprintf(out, "%d more site%s (a library loaded after attach)\n", n, n == 1 ? "" : "s");
	else
		fprintf(out, "%d site%s\n", n, n == 1 ? "" : "s");
	for (int i = first; i < s->nsites; i++) {
		const struct att_site *site = &s->sites[i];
		const struct arch_site_plan *p = &site->plan;
		char *where = name ? name(p->site) : NULL;
		fprintf(out, "site %d: 0x%llx %s\n", i, (unsigned long long)p->site,
			where ? where : "");
		free(where);
		if (site->internal)
			fprintf(out, "  ubt's own probe: %s\n", site->internal);
		else
			fprintf(out, "  %s: %d probe%s, %d return probe%s\n",
				site->mid ? "inside the function" : "function entry", site->nhandlers,
				site->nhandlers == 1 ? "" : "s", site->nrhandlers,
				site->nrhandlers == 1 ? "" : "s");
		dump_function(site, out);
		if (p->kind == ARCH_PATCH_JMP && p->short_jmp)
			fprintf(out, "  jump: 2 bytes to a hop at 0x%llx\n",
				(unsigned long long)p->hop[0].at);
		else if (p->kind == ARCH_PATCH_JMP)
			fprintf(out, "  jump\n");
		else
			fprintf(out, "  breakpoint: %s\n", p->why);
		if (p->mid_at) /* plan_before: the jump starts at the instruction before */
			fprintf(out, "  location: 0x%llx, after the first displaced instruction\n",
				(unsigned long long)(p->site + p->mid_at));
		for (int k = 0; k < p->nredirs; k++) {
			const struct arch_redirect *r = &p->redir[k];
			if (r->len == 1 && r->hop >= 0 && r->hop < p->nhops)
				fprintf(
				    out,
				    "  branch redirected: 0x%llx (to 0x%llx, now a hop at 0x%llx "
				    "to its copy)\n",
				    (unsigned long long)r->insn, (unsigned long long)r->target,
				    (unsigned long long)p->hop[r->hop].at);
			else
				fprintf(out,
					"  branch redirected: 0x%llx (to 0x%llx, now its copy)\n",
					(unsigned long long)r->insn, (unsigned long long)r->target);
		}
		fprintf(out, "  displaced: %d byte%s, %d instruction%s\n", p->orig_len,
			p->orig_len == 1 ? "" : "s", p->ninsns, p->ninsns == 1 ? "" : "s");
		dump_insns(site, out);
		if (site->island > 0)
			fprintf(out, "  trampoline: 0x%llx (island %d at 0x%llx)\n",
				(unsigned long long)site->tramp, site->island,
				(unsigned long long)s->islands[site->island - 1].addr);
		else
			fprintf(out, "  trampoline: 0x%llx (main code at 0x%llx)\n",
				(unsigned long long)site->tramp, (unsigned long long)s->remote_code);
		if (site->copy_addr)
			fprintf(out, "  relocated copy: 0x%llx\n", (unsigned long long)site->copy_addr);
		fprintf(out, "  patch:");
		for (int k = 0; k < p->orig_len; k++)
			fprintf(out, " %02x", site->patch[k]);
		fprintf(out, "\n");
	}
}

/* ---- -d link ---------------------------------------------------------- */

static int sym_by_addr(const void *a, const void *b)
{
	const struct link_symbol *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : strcmp(x->name, y->name);
}

static int sym_by_name(const void *a, const void *b)
{
	return strcmp(((const struct link_symbol *)a)->name, ((const struct link_symbol *)b)->name);
}

static struct link_symbol *sorted_copy(const struct link_symbol *syms, int n,
				       int (*cmp)(const void *, const void *))
{
	struct link_symbol *copy = xmalloc((n + 1) * sizeof(*copy));
	memcpy(copy, syms, n * sizeof(*copy));
	qsort(copy, n, sizeof(*copy), cmp);
	return copy;
}

static void dump_image(const struct link_image *img, const char *what, FILE *out)
{
	fprintf(out, "link: %s: 0x%llx, %zu bytes\n", what, (unsigned long long)img->base,
		img->size);
	fprintf(out, "  sections:\n");
	for (int i = 0; i < img->nsecs; i++) {
		const struct link_section *sec = &img->secs[i];
		const char *perms = sec->exec ? "r-x" : "r--";
		if (sec->write)
			perms = "rw-";
		fprintf(out, "    0x%llx %8llu %s %-8s %s\n", (unsigned long long)sec->addr,
			(unsigned long long)sec->size, perms, sec->input, sec->name);
	}
	if (img->ngot)
		fprintf(out, "  GOT: 0x%llx, %d entr%s\n", (unsigned long long)img->got, img->ngot,
			img->ngot == 1 ? "y" : "ies");
	struct link_symbol *ext = sorted_copy(img->externs, img->nexterns, sym_by_name);
	for (int i = 0; i < img->nexterns; i++)
		fprintf(out, "  extern %s = 0x%llx\n", ext[i].name, (unsigned long long)ext[i].addr);
	free(ext);
	struct link_symbol *syms = sorted_copy(img->syms, img->nsyms, sym_by_addr);
	fprintf(out, "  %d symbol%s:\n", img->nsyms, img->nsyms == 1 ? "" : "s");
	for (int i = 0; i < img->nsyms; i++)
		fprintf(out, "    0x%llx %s\n", (unsigned long long)syms[i].addr, syms[i].name);
	free(syms);
}

void att_dump_link(const struct att_session *s, FILE *out)
{
	if (s->image.bytes)
		dump_image(&s->image, "probes run in the target", out);
	if (s->host_image.bytes)
		dump_image(&s->host_image, "probes run in ubt (BEGIN, END, interval)", out);
	if (!s->image.bytes && !s->host_image.bytes)
		fprintf(out, "link: nothing linked\n");
}

/* ---- -d rsys ---------------------------------------------------------- */

struct flag_name {
	uint64_t bit;
	const char *name;
};

static const struct flag_name prot_flags[] = {
	{PROT_READ, "PROT_READ"}, {PROT_WRITE, "PROT_WRITE"}, {PROT_EXEC, "PROT_EXEC"}, {0, NULL}};
static const struct flag_name map_flags[] = {
	{MAP_SHARED, "MAP_SHARED"},       {MAP_PRIVATE, "MAP_PRIVATE"},
	{MAP_FIXED, "MAP_FIXED"},         {MAP_ANONYMOUS, "MAP_ANONYMOUS"},
	{MAP_NORESERVE, "MAP_NORESERVE"}, {MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"},
	{0, NULL}};
static const struct flag_name memfd_flags[] = {
	{MFD_CLOEXEC, "MFD_CLOEXEC"}, {MFD_ALLOW_SEALING, "MFD_ALLOW_SEALING"}, {0, NULL}};

/* v as NAME|NAME|0xREST, "0" (or none) when no bit is set */
static void print_flags(FILE *out, uint64_t v, const struct flag_name *f, const char *none)
{
	const char *sep = "";
	if (!v) {
		fputs(none, out);
		return;
	}
	for (; f->name; f++)
		if ((v & f->bit) == f->bit) {
			fprintf(out, "%s%s", sep, f->name);
			sep = "|";
			v &= ~f->bit;
		}
	if (v)
		fprintf(out, "%s0x%llx", sep, (unsigned long long)v);
}

/*
 * The calls ubt makes in the target, each argument by kind: x an address
 * (hex), d a number, p mmap's prot, m mmap's flags, f memfd_create's flags,
 * s a signal, a madvise's advice.
 */
static const struct rsys_call {
	long nr;
	const char *name, *args;
} rsys_calls[] = {
	{SYS_mmap, "mmap", "xdpmdd"},
	{SYS_munmap, "munmap", "xd"},
	{SYS_madvise, "madvise", "xda"},
	{SYS_memfd_create, "memfd_create", "xf"},
	{SYS_ftruncate, "ftruncate", "dd"},
	{SYS_close, "close", "d"},
	{SYS_rt_sigaction, "rt_sigaction", "sxxd"},
	{SYS_timer_create, "timer_create", "dxx"},
	{SYS_timer_settime, "timer_settime", "ddxx"},
	{SYS_timer_delete, "timer_delete", "d"},
};

static void print_arg(FILE *out, char kind, uint64_t v)
{
	const char *abbrev;
	switch (kind) {
	case 'p': print_flags(out, v, prot_flags, "PROT_NONE"); break;
	case 'm': print_flags(out, v, map_flags, "0"); break;
	case 'f': print_flags(out, v, memfd_flags, "0"); break;
	case 's':
		abbrev = sigabbrev_np((int)v);
		if (abbrev)
			fprintf(out, "SIG%s", abbrev);
		else
			fprintf(out, "%lld", (long long)v);
		break;
	case 'a':
		if (v == MADV_WIPEONFORK)
			fputs("MADV_WIPEONFORK", out);
		else
			fprintf(out, "%lld", (long long)v);
		break;
	case 'x': fprintf(out, v ? "0x%llx" : "%llu", (unsigned long long)v); break;
	default: fprintf(out, "%lld", (long long)(int64_t)v); break;
	}
}

void att_trace_rsys(struct att_session *s, FILE *out)
{
	s->rsys_out = out;
}

void att_dump_rsys(const struct att_session *s, long nr, const uint64_t args[6], int err,
		   int64_t result)
{
	FILE *out = s->rsys_out;
	const struct rsys_call *c = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(rsys_calls) && !c; i++)
		if (rsys_calls[i].nr == nr)
			c = &rsys_calls[i];
	fprintf(out, "rsys: pid %d: ", s->t.pid);
	if (c) {
		fprintf(out, "%s(", c->name);
		for (int i = 0; c->args[i]; i++) {
			fputs(i ? ", " : "", out);
			print_arg(out, c->args[i], args[i]);
		}
	} else {
		fprintf(out, "syscall_%ld(", nr);
		for (int i = 0; i < 6; i++)
			fprintf(out, "%s0x%llx", i ? ", " : "", (unsigned long long)args[i]);
	}
	if (err) /* ptrace failed: the call may not have been made */
		fprintf(out, ") = ? (%s)\n", strerror(-err));
	else if (result < 0 && result > -4096)
		fprintf(out, ") = -1 %s (%s)\n", strerrorname_np((int)-result) ?: "?",
			strerror((int)-result));
	else if (nr == SYS_mmap)
		fprintf(out, ") = 0x%llx\n", (unsigned long long)result);
	else
		fprintf(out, ") = %lld\n", (long long)result);
}
