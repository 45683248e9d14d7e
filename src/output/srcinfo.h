/*
 * srcinfo.h - source lines and inlined calls of code addresses (srcinfo.c),
 * for ustack under `config = { show_debug_info = 1 }`.
 */
#ifndef UBT_OUTPUT_SRCINFO_H
#define UBT_OUTPUT_SRCINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

/* config show_debug_info (or BPFTRACE_SHOW_DEBUG_INFO): set by the driver */
extern bool out_show_debug_info;

/*
 * Appends to b, each line starting with prefix, the inlined calls at addr
 * (innermost first: `[inlined] NAME@FILE:LINE`, perf: `NAME (inlined)`),
 * then in bpftrace's mode the frame's own line, `SYM@FILE:LINE` (sym: its
 * "name+off"); true if that line was written.  False, with nothing
 * written, when addr has no line information.  caller: addr is a return
 * address (every frame but a stack's first), looked up at its call.
 */
bool out_src_frames(struct buf *b, uint64_t addr, bool caller, const char *sym, const char *prefix,
		    bool perf);

#endif
