/*
 * dump.c - `--dump sites`: every patched site of the session as planned
 * and placed, to see why a site took a breakpoint and where its code went.
 *
 * Pipeline position: after att_install() (trampolines placed, patch bytes
 * computed), before att_arm(); the driver prints it on stderr.  Per site:
 * its address as symbol+offset and file (named by the driver, which has
 * the symbolizer), jump or breakpoint and the reason the jump was refused,
 * the displaced instructions, the trampoline's address and whether it is
 * in the main code or an island (with the island's address), the address
 * of the relocated copy when there is one, and the patch bytes.  Nothing
 * here reads or writes the target: everything comes from the session.
 */
#include "attach/session.h"
#include "attach/inject/session_internal.h"

#include <stdlib.h>

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

void att_dump_sites(const struct att_session *s, FILE *out, char *(*name)(uint64_t addr))
{
	fprintf(out, "%d site%s\n", s->nsites, s->nsites == 1 ? "" : "s");
	for (int i = 0; i < s->nsites; i++) {
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
		if (p->kind == ARCH_PATCH_JMP)
			fprintf(out, "  jump\n");
		else
			fprintf(out, "  breakpoint: %s\n", p->why);
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
