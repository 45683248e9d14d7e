/*
 * warn.c - bpftrace's per-event helper warnings (-k, -kk): reads of target
 * memory and map updates that failed inside probes.
 *
 * Pipeline position: output, called by out_drain() for RT_EV_WARN records
 * (runtime/rt_warn.c writes them).
 *
 * A warning is printed on the output stream, where bpftrace 0.17 prints it,
 * in the thread's event order, in its format:
 *
 *   stdin:1:71-80: WARNING: Failed to probe_read_user_str: Bad address (-14)
 *   uprobe:./t:f { printf("%s\n", str(arg2)); }
 *                                  ~~~~~~~~~
 *
 * With -f json it is bpftrace's record instead:
 *
 *   {"type": "helper_error", "helper": "probe_read", "retcode": -14, "line": 1, "col": 37}
 *
 * Full maps: bpftrace 0.17 drops the update silently (only -k shows it,
 * per event, with RT_WH_MAP_UPDATE here); the count at the end is
 * out_report_map_drops() (output.c).
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
	case RT_WH_MAP_LOOKUP: return "map_lookup_elem";
	default: return "helper";
	}
}

void out_print_warn(struct out *o, const uint8_t *rec)
{
	struct rt_ev_warn w;
	memcpy(&w, rec + sizeof(struct rt_event_hdr), sizeof(w));
	if (o->json) { /* bpftrace's JSON record: the start of the location only */
		fprintf(o->f,
			"{\"type\": \"helper_error\", \"helper\": \"%s\", \"retcode\": %d, "
			"\"line\": %u, \"col\": %u}\n",
			helper_name(w.helper), (int)w.err, (unsigned)w.line, (unsigned)w.col);
		return;
	}
	struct diags one;
	if (o->diags)
		diag_init(&one, o->diags->filename, o->diags->source, o->diags->source_len);
	else
		diag_init(&one, "stdin", NULL, 0);
	struct src_loc loc = {(int)w.line, (int)w.col, (int)w.end_line, (int)w.end_col};
	int err = -w.err;
	if (w.err >= 0) /* map_lookup_elem: bpftrace prints the bare return value */
		diag_warning(&one, loc, "Failed to %s: %d", helper_name(w.helper), w.err);
	else
		diag_warning(&one, loc, "Failed to %s: %s (%d)", helper_name(w.helper), strerror(err),
			     w.err);
	fflush(o->f);
	diag_print(&one, o->f);
	diag_free(&one);
}
