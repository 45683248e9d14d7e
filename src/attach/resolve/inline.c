/*
 * inline.c - the inlined copies of a function, from the binary's DWARF
 * (DW_TAG_inlined_subroutine entries whose abstract origin names it), for
 * bpftrace 0.21's `config = { probe_inline = 1 }` and for the warning that
 * a probe on a function misses its inlined calls (resolve.c).
 *
 * Each copy's entry is DW_AT_entry_pc, else its low_pc, else the start of
 * its first range: the first instruction of the inlined body, in the
 * middle of the function it was inlined into (resolve.c makes it a
 * mid-function point).  One walk of the whole DWARF per binary: the last
 * binary's copies are kept, since a script's probes usually name one.
 */
#include "attach/session.h"
#include "elf/elfsym.h"
#include "resolve.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

struct copy {
	char *name;
	uint64_t entry;
};

static struct {
	char *path;
	struct copy *v;
	int n;
} cache;

static void cache_drop(void)
{
	for (int i = 0; i < cache.n; i++)
		free(cache.v[i].name);
	free(cache.v);
	free(cache.path);
	memset(&cache, 0, sizeof(cache));
}

static bool entry_of(Dwarf_Die *die, uint64_t *entry)
{
	Dwarf_Addr a, base, start, end;
	if (!dwarf_entrypc(die, &a)) {
		*entry = a;
		return true;
	}
	if (dwarf_ranges(die, 0, &base, &start, &end) > 0) {
		*entry = start;
		return true;
	}
	return false;
}

static void walk(Dwarf_Die *die, uint64_t bias, int depth)
{
	if (depth > 64)
		return;
	Dwarf_Die kid;
	if (dwarf_child(die, &kid))
		return;
	do {
		int tag = dwarf_tag(&kid);
		uint64_t entry;
		const char *name;
		if (tag == DW_TAG_inlined_subroutine && (name = ef_dw_origin_name(&kid)) &&
		    entry_of(&kid, &entry)) {
			cache.v = xrealloc(cache.v, (size_t)(cache.n + 1) * sizeof(*cache.v));
			cache.v[cache.n].name = xstrdup(name);
			cache.v[cache.n++].entry = entry + bias;
		}
		/* copies sit in functions, lexical blocks and other copies */
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
		    tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			walk(&kid, bias, depth + 1);
	} while (!dwarf_siblingof(&kid, &kid));
}

static void load(const char *path)
{
	if (cache.path && !strcmp(cache.path, path))
		return;
	cache_drop();
	cache.path = xstrdup(path);
	struct att_dwarf *d = att_dwarf_open(path);
	uint64_t bias = 0;
	Dwarf *dw = d ? att_dwarf_handle(d, &bias) : NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dw && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu))
			walk(&cu, bias, 0);
		off = next;
	}
	if (d)
		att_dwarf_close(d);
}

int att_inline_copies(const char *path, const char *name, uint64_t **addrs)
{
	load(path);
	int n = 0;
	*addrs = NULL;
	for (int i = 0; i < cache.n; i++) {
		if (strcmp(cache.v[i].name, name))
			continue;
		bool dup = false;
		for (int k = 0; k < n && !dup; k++)
			dup = (*addrs)[k] == cache.v[i].entry;
		if (dup)
			continue;
		*addrs = xrealloc(*addrs, (size_t)(n + 1) * sizeof(**addrs));
		(*addrs)[n++] = cache.v[i].entry;
	}
	return n;
}

void att_inline_forget(void) { cache_drop(); }
