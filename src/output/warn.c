/*
 * warn.c - bpftrace's per-event helper warnings (-k, -kk): reads of target
 * memory and map updates that failed inside probes.
 *
 * Pipeline position: output, called by out_drain() for RT_EV_WARN records
 * (runtime/data/rt_warn.c writes them).
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

/* Bytes of line `line` (1-based) of the script, or -1 past its end. */
static long line_len(const struct diags *d, uint32_t line)
{
	const char *p = d->source, *end = p ? p + d->source_len : NULL;
	if (!p || !line)
		return -1;
	for (uint32_t l = 1; l < line; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -1;
		p = nl + 1;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return (nl ? nl : end) - p;
}

/* A location inside the script (the record is the target's to write: an
 * underline of 2^31 columns must not be printed). */
static bool loc_ok(const struct diags *d, const struct rt_ev_warn *w)
{
	long len = d ? line_len(d, w->line) : -1;
	if (len < 0 || w->col < 1 || w->col > (uint64_t)len + 1)
		return false;
	if (w->end_line == 0 || w->end_line == w->line)
		return w->end_col >= w->col && w->end_col <= (uint64_t)len + 2;
	return w->end_line > w->line && line_len(d, w->end_line) >= 0;
}

/* A diagnostic list that quotes the script (its name and text, when known). */
void out_diag_init(const struct out *o, struct diags *d)
{
	if (o->diags)
		diag_init(d, o->diags->filename, o->diags->source, o->diags->source_len);
	else
		diag_init(d, "stdin", NULL, 0);
}

void out_print_warn(struct out *o, const uint8_t *rec)
{
	struct rt_ev_warn w;
	memcpy(&w, rec + sizeof(struct rt_event_hdr), sizeof(w));
	bool placed = loc_ok(o->diags, &w);
	if (!placed)
		out_bad("warning location", "a -k warning at line %u, columns %u-%u, which the "
			"script does not have; printed without it", w.line, w.col, w.end_col);
	if (o->json) { /* bpftrace's JSON record: the start of the location only */
		fprintf(o->f,
			"{\"type\": \"helper_error\", \"helper\": \"%s\", \"retcode\": %d, "
			"\"line\": %u, \"col\": %u}\n",
			helper_name(w.helper), (int)w.err, placed ? (unsigned)w.line : 0,
			placed ? (unsigned)w.col : 0);
		return;
	}
	struct diags one;
	out_diag_init(o, &one);
	struct src_loc loc = {0};
	if (placed)
		loc = (struct src_loc){(int)w.line, (int)w.col, (int)w.end_line, (int)w.end_col};
	/* bpftrace's helper_error: the error's text for a negative code, the
	 * code alone else (a lookup that found nothing: "... map_lookup_elem: 0");
	 * the code is the target's to write, so only errno's range gets a text */
	if (w.err < 0 && w.err > -4096)
		diag_warning(&one, loc, "Failed to %s: %s (%d)", helper_name(w.helper),
			     strerror(-w.err), w.err);
	else
		diag_warning(&one, loc, "Failed to %s: %d", helper_name(w.helper), w.err);
	fflush(o->f);
	diag_print(&one, o->f);
	diag_free(&one);
}
