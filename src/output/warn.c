/*
 * warn.c - what ubt reports about operations that failed inside probes:
 * bpftrace's per-event helper warnings (-k, -kk) and the updates full maps
 * dropped.
 *
 * Pipeline position: output, called by out_drain() for RT_EV_WARN records
 * (runtime/rt_warn.c writes them) and by the driver at the end of a trace.
 *
 * A warning is printed on the output stream, where bpftrace 0.17 prints it,
 * in the thread's event order, in its format:
 *
 *   stdin:1:71-80: WARNING: Failed to probe_read_user_str: Bad address (-14)
 *   uprobe:./t:f { printf("%s\n", str(arg2)); }
 *                                  ~~~~~~~~~
 *
 * Full maps: bpftrace 0.17 drops the update silently (only -k shows it,
 * per event).  DESIGN.md promises that no drop is silent, so at the end
 * ubt says on stderr how many updates each map dropped; stdout stays
 * bpftrace's.
 */
#include "output.h"
#include "output_internal.h"
#include "util/diag.h"

#include <string.h>

static const char *helper_name(uint32_t helper)
{
	switch (helper) {
	case RT_WH_PROBE_READ: return "probe_read";
	case RT_WH_PROBE_READ_STR: return "probe_read_str";
	case RT_WH_PROBE_READ_USER: return "probe_read_user";
	case RT_WH_PROBE_READ_USER_STR: return "probe_read_user_str";
	case RT_WH_MAP_UPDATE: return "map_update_elem";
	case RT_WH_MAP_DELETE: return "map_delete_elem";
	default: return "helper";
	}
}

void out_print_warn(struct out *o, const uint8_t *rec)
{
	struct rt_ev_warn w;
	memcpy(&w, rec + sizeof(struct rt_event_hdr), sizeof(w));
	struct diags one;
	if (o->diags)
		diag_init(&one, o->diags->filename, o->diags->source, o->diags->source_len);
	else
		diag_init(&one, "stdin", NULL, 0);
	struct src_loc loc = {(int)w.line, (int)w.col, (int)w.end_line, (int)w.end_col};
	int err = -w.err;
	diag_warning(&one, loc, "Failed to %s: %s (%d)", helper_name(w.helper), strerror(err), w.err);
	fflush(o->f);
	diag_print(&one, o->f);
	diag_free(&one);
}

/*
 * Once, at the end: "WARNING: map @m: 12 updates dropped: it is full (4
 * keys; BPFTRACE_MAP_KEYS_MAX)".  An insert that found the map's insert
 * lock busy for its whole bounded spin is dropped too (runtime/rt_map.c).
 */
void out_report_map_drops(const struct out *o, FILE *f)
{
	const struct cg_layout *l = o->layout;
	for (int i = 0; i < l->nmaps; i++) {
		const struct cg_map_layout *ml = &l->maps[i];
		if (!ml->map)
			continue;
		const struct rt_map *m = (const struct rt_map *)(o->data + ml->off);
		uint64_t drops = __atomic_load_n(&m->drops, __ATOMIC_RELAXED);
		if (!drops)
			continue;
		fprintf(f, "WARNING: map %s: %llu update%s dropped: ", ml->map->name,
			(unsigned long long)drops, drops == 1 ? "" : "s");
		if (m->used >= m->cap)
			fprintf(f, "it is full (%u keys; BPFTRACE_MAP_KEYS_MAX)\n", m->cap);
		else
			fprintf(f, "its insert lock stayed busy\n");
	}
}
