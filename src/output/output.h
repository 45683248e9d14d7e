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
	bool no_warnings;	   /* --no-warnings: warnf() prints nothing (calls.c) */
	/* an exit() record was read: what is read after it is dropped, as
	 * bpftrace drops events after its exit event (until END runs) */
	bool finalized;
	bool exits; /* the script calls exit(): RT_EV_EXIT records are its */
	/* ubt's own state of the rings (trust.c: nothing read back from shared
	 * memory decides where ubt reads) */
	uint64_t *tails;  /* bytes of ring i consumed; ring_tail in shared memory is a copy */
	uint8_t *rec;     /* a private copy of the record being printed */
	size_t rec_size;  /* its size: ring_size plus the most any record type reads */
	uint8_t *map_ops; /* per map: bit op set when the script has print/clear/zero of it */
	struct out_id {   /* per printf id (sema_printf): */
		uint32_t need;  /* bytes of payload its formatting reads at most */
		uint16_t type;  /* the record type its call sends (enum rt_event_type) */
	} *ids;
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
/* Warns on stderr about probe hits that did not run to their end (DESIGN.md 13). */
void out_report_skipped(struct out *o);
/* Prints every map, in name order, as bpftrace does at exit. */
void out_print_maps(struct out *o);
/* print(@m, top, div): one map; top 0 = all entries, div 0 = 1. */
void out_print_map(struct out *o, const struct cg_map_layout *ml, uint64_t top, uint64_t div);
/* clear(@m) / zero(@m) (enum rt_map_op). */
void out_map_op(struct out *o, const struct cg_map_layout *ml, uint32_t op);
/* warn.c: a -k/-kk warning record (RT_EV_WARN), as bpftrace prints it. */
void out_print_warn(struct out *o, const uint8_t *rec);
/* The map operations (print, clear, zero) that the probes of prog contain:
 * an RT_EV_MAP record asking for another one is corrupt.  Without this
 * call every operation is accepted. */
void out_map_ops_from(struct out *o, const struct ast_node *prog);

/*
 * trust.c: a value read back from shared memory that cannot be right
 * (DESIGN.md decision 10).  kind (a string literal) names the check; the
 * first corruption of each kind is said on stderr with the text of fmt,
 * later ones are only counted.
 */
void out_bad_init(int pid);
void out_bad(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* corrupt values seen so far */
uint64_t out_bad_count(void);
/* at exit: how many corrupt values were ignored, if any */
void out_bad_summary(void);

#endif
