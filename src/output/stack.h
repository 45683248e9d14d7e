/*
 * stack.h - ustack on ubt's side (stack.c): the facts the runtime's walk
 * needs (written before probes are armed), and the frames and text of a
 * stack id, unwound with the target's CFI where frame pointers were
 * missing.
 */
#ifndef UBT_OUTPUT_STACK_H
#define UBT_OUTPUT_STACK_H

#include <stdint.h>
#include "codegen/codegen.h"
#include "parser/ast.h"

/* The shared data part and its layout (out_init calls it); before it,
 * stacks print empty. */
void out_stack_bind(uint8_t *data, const struct cg_layout *l);
/* After out_sym_init() (the snapshot), before probes are armed: the facts
 * the runtime's walk reads (the main stack, code ranges). */
void out_stack_prepare(void);
/* After a library loaded (attach/features/dlopen.c) and out_sym_init() saw it: its
 * code ranges join the facts. */
void out_stack_loaded(void);
/* bpftrace's text of a stack of type t (its mode and frames); malloc'ed. */
char *out_stack_text(uint64_t id, const struct ast_type *t, int indent);
/* Says on stderr how many stacks the table had no room for, if any. */
void out_stack_report_drops(void);
/* One id for all ids whose stacks print the same. */
uint64_t out_stack_canon(uint64_t id, const struct ast_type *t);

#endif
