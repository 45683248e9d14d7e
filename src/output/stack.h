/*
 * stack.h - ustack on ubt's side (stack.c): the facts the runtime's walk
 * needs (written before probes are armed), and the frames and text of a
 * stack id, unwound with the target's CFI where frame pointers were
 * missing.
 */
#ifndef UBT_OUTPUT_STACK_H
#define UBT_OUTPUT_STACK_H

#include <stdint.h>
#include "parser/ast.h"

/* data: the shared data part; after out_sym_init() (the snapshot).  Before
 * it, stacks print empty. */
void out_stack_prepare(void *data);
/* After a library loaded (attach/dlopen.c) and out_sym_init() saw it: its
 * code ranges join the facts. */
void out_stack_loaded(void *data);
/* The frames of stack id (sites, return addresses); 0 if unknown. */
int out_stack_frames(const uint8_t *data, uint64_t id, const uint64_t **frames);
/* bpftrace's text of a stack of type t (its mode and frames); malloc'ed. */
char *out_stack_text(uint64_t id, const struct ast_type *t, int indent);
/* Says on stderr how many stacks the table had no room for, if any. */
void out_stack_report_drops(const uint8_t *data);
/* One id for all ids whose stacks print the same. */
uint64_t out_stack_canon(uint64_t id, const struct ast_type *t);

#endif
