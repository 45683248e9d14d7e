/*
 * output.h - what the user sees: printf events from the rings and maps
 * from shared memory, in bpftrace 0.17's text format.
 *
 * Pipeline position: last.  Reads the data part of shared memory (through
 * ubt's own mapping) using the layout codegen chose and the types sema
 * found.  Never writes to anything the target reads except ring tails.
 */
#ifndef UBT_OUTPUT_H
#define UBT_OUTPUT_H

#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include "codegen/codegen.h"
#include "util/util.h"

struct out {
	FILE *f;
	const struct sema_info *info;
	const struct cg_layout *layout;
	uint8_t *data; /* the data part */
	uint64_t lost_reported;
	bool json; /* -f json: one JSON object per line */
	struct buf ob; /* formatted events not written yet */
	const struct diags *diags; /* script name and text, for -k warnings (warn.c) */
	/* an exit() record was read: what is read after it is dropped, as
	 * bpftrace drops events after its exit event (until END runs) */
	bool finalized;
};

void out_init(struct out *o, FILE *f, const struct sema_info *info, const struct cg_layout *layout,
	      uint8_t *data);
/* Prints every complete event in the rings; returns how many. */
int out_drain(struct out *o);
/* Writes anything buffered and frees o's memory. */
void out_fini(struct out *o);
/* Prints "Lost N events" for drops not reported yet. */
void out_report_lost(struct out *o);
/* Warns on stderr about map updates that were dropped (full or busy maps). */
void out_report_map_drops(struct out *o);
/* Prints every map, in name order, as bpftrace does at exit. */
void out_print_maps(struct out *o);
/* print(@m, top, div): one map; top 0 = all entries, div 0 = 1. */
void out_print_map(struct out *o, const struct cg_map_layout *ml, uint64_t top, uint64_t div);
/* clear(@m) / zero(@m) (enum rt_map_op). */
void out_map_op(struct out *o, const struct cg_map_layout *ml, uint32_t op);
/* warn.c: a -k/-kk warning record (RT_EV_WARN), as bpftrace prints it. */
void out_print_warn(struct out *o, const uint8_t *rec);

#endif
