/*
 * xref.c - branches from one function into another's first bytes, which a
 * function-entry jump must not cover.
 *
 * Pipeline position: att_plan_sites() (session.c) plans each function
 * entry from the function's own bytes (arch_plan_site_padded), which sees
 * every branch inside the function, but not one from a neighbour.
 * Hand-written assembly has those.  glibc's memmove-vec-unaligned-erms.S:
 *
 *   __mempcpy_avx512_unaligned_erms:
 *       mov  %rdi,%rax
 *       add  %rdx,%rax
 *       jmp  __memmove_avx512_unaligned_erms+3     <- L(start_erms)
 *   __memmove_avx512_unaligned_erms:
 *       mov  %rdi,%rax                             (3 bytes)
 *       cmp  $0x40,%rdx                            <- entered here
 *
 * A 5-byte jump at __memmove_..._erms covers +3: every mempcpy() then ran
 * the jump's last two bytes as code, and `uprobe:libc:*` killed a program
 * that copies memory (SIGSEGV, SIGILL, SIGTRAP) within a second.  So the
 * functions around each entry site are decoded (arch_branches_out) and
 * the direct branches that leave their function into another's first bytes are kept; a jump whose
 * displaced bytes one of them enters past the first byte becomes a
 * breakpoint, with the reason.  Only the functions within 64 KiB of a
 * site are decoded (each once per run): a single probe in libc costs
 * ~60 functions, `uprobe:libc:*` all of them (~130 ms).  A jump table or
 * a computed address in another function stays unseen (as inside one's
 * own function, where the planner refuses functions with indirect
 * jumps), and so does a direct branch from further away.
 */
#include "attach/inject/session_internal.h"
#include "attach/session.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One file's functions (sorted by address, each decoded at most once) and
 * the branches found so far that enter one of them past its first byte,
 * within the bytes a jump may displace: in libc a handful.
 */
struct xfunc {
	uint64_t value, size;
	bool decoded;
};

struct att_xref {
	char *path; /* as the point names it */
	struct ef_file f;
	bool open;
	struct xfunc *fn;
	size_t nfn, capfn;
	uint64_t *into;
	size_t ninto;
};

/* Functions of the neighbourhood decoded for one site: glibc's entries
 * into a neighbour stay inside one source file's functions. */
#define XREF_NEAR (64u << 10)

static void add_func(const struct ef_func *fn, void *arg)
{
	struct att_xref *x = arg;
	if (!fn->size || fn->plt || fn->size > (1u << 24))
		return;
	if (x->nfn == x->capfn) {
		x->capfn = x->capfn ? 2 * x->capfn : 1024;
		x->fn = xrealloc(x->fn, x->capfn * sizeof(*x->fn));
	}
	x->fn[x->nfn++] = (struct xfunc){fn->value, fn->size, false};
}

static int cmp_fn(const void *a, const void *b)
{
	uint64_t x = ((const struct xfunc *)a)->value, y = ((const struct xfunc *)b)->value;
	return (x > y) - (x < y);
}

/* The index of the first function starting at or after v. */
static size_t first_at(const struct att_xref *x, uint64_t v)
{
	size_t a = 0, b = x->nfn;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (x->fn[m].value < v)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* t enters a function in its first bytes, past the first: keep it */
static void note_target(struct att_xref *x, uint64_t t)
{
	size_t i = first_at(x, t + 1); /* the last function starting at or before t */
	if (!i)
		return;
	uint64_t off = t - x->fn[i - 1].value;
	if (!off || off >= ARCH_MAX_DISPLACED)
		return;
	for (size_t k = 0; k < x->ninto; k++)
		if (x->into[k] == t)
			return;
	x->into = xrealloc(x->into, (x->ninto + 1) * sizeof(*x->into));
	x->into[x->ninto++] = t;
}

static void decode(struct att_xref *x, struct xfunc *fn)
{
	fn->decoded = true;
	uint8_t *code = xmalloc(fn->size);
	if (!ef_read_vaddr(&x->f, fn->value, code, fn->size)) {
		uint64_t out[256];
		int n = arch_branches_out(code, fn->size, fn->value, out, 256);
		for (int i = 0; i < n && i < 256; i++)
			note_target(x, out[i]);
	}
	free(code);
}

/* The file's functions, listed on first use (never decoded all at once). */
static struct att_xref *xref_of(struct att_session *s, const struct att_point *p)
{
	for (int i = 0; i < s->nxrefs; i++)
		if (!strcmp(s->xrefs[i].path, p->path))
			return &s->xrefs[i];
	s->xrefs = xrealloc(s->xrefs, (size_t)(s->nxrefs + 1) * sizeof(*s->xrefs));
	struct att_xref *x = &s->xrefs[s->nxrefs++];
	memset(x, 0, sizeof(*x));
	x->path = xstrdup(p->path);
	char *path = att_point_file(s, p);
	x->open = !ef_open(&x->f, path);
	free(path);
	if (x->open) {
		ef_foreach_func(&x->f, add_func, x);
		qsort(x->fn, x->nfn, sizeof(*x->fn), cmp_fn);
	}
	return x; /* unreadable: no branches known, the planner's own checks stand */
}

/*
 * Point p's entry site (planned with a jump, at vaddr in its file) turns
 * into a breakpoint when another function branches into its displaced
 * bytes past the first.  The functions within XREF_NEAR of it are decoded
 * first (those not decoded for an earlier site).  A mid-function site on a
 * function's first byte (probe_inline, a source line, reg("ax")) is an
 * entry for this: other functions jump to `func+1` as to `func+0`.
 */
void att_xref_check(struct att_session *s, const struct att_point *p, struct att_site *site)
{
	struct arch_site_plan *plan = &site->plan;
	if (plan->kind != ARCH_PATCH_JMP || (plan->mid && p->vaddr != p->func_vaddr))
		return;
	struct att_xref *x = xref_of(s, p);
	uint64_t v = p->vaddr;
	for (size_t i = first_at(x, v > XREF_NEAR ? v - XREF_NEAR : 0);
	     i < x->nfn && x->fn[i].value < v + XREF_NEAR; i++)
		if (!x->fn[i].decoded)
			decode(x, &x->fn[i]);
	for (size_t k = 0; k < x->ninto; k++)
		if (x->into[k] > v && x->into[k] < v + (uint64_t)plan->orig_len) {
			arch_plan_to_int3(plan,
					  "another function branches to func+0x%llx, inside the "
					  "%d patched bytes",
					  (unsigned long long)(x->into[k] - v), plan->orig_len);
			return;
		}
}

void att_xref_free(struct att_session *s)
{
	for (int i = 0; i < s->nxrefs; i++) {
		free(s->xrefs[i].path);
		free(s->xrefs[i].fn);
		free(s->xrefs[i].into);
		if (s->xrefs[i].open)
			ef_close(&s->xrefs[i].f);
	}
	free(s->xrefs);
	s->xrefs = NULL;
	s->nxrefs = 0;
}
