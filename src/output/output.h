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
#include <stdint.h>
#include "codegen/codegen.h"

struct out {
	FILE *f;
	const struct sema_info *info;
	const struct cg_layout *layout;
	uint8_t *data; /* the data part */
	uint64_t lost_reported;
};

void out_init(struct out *o, FILE *f, const struct sema_info *info, const struct cg_layout *layout,
	      uint8_t *data);
/* Prints every complete event in the rings; returns how many. */
int out_drain(struct out *o);
/* Prints "Lost N events" for drops not reported yet. */
void out_report_lost(struct out *o);
/* Prints every map, in name order, as bpftrace does at exit. */
void out_print_maps(struct out *o);

#endif
