/*
 * sym.h - symbolization of target addresses for usym(), func and ustack
 * (sym.c).  The driver calls out_sym_init(pid) once the target is open
 * (a snapshot of its mappings, kept after it exits) and out_sym_alias()
 * for each trampoline, so addresses inside ubt's code name their site.
 */
#ifndef UBT_OUTPUT_SYM_H
#define UBT_OUTPUT_SYM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

void out_sym_init(pid_t pid);
/* Addresses in [lo, hi) stand for `to` (a trampoline and its site). */
void out_sym_alias(uint64_t lo, uint64_t hi, uint64_t to);
uint64_t out_sym_unalias(uint64_t addr);
/* "name" (with_off: "name+off"), or "0x..." when unknown; malloc'ed. */
char *out_sym_text(uint64_t addr, bool with_off);
/* The file mapped at addr, "unknown" if none (ustack(perf)). */
const char *out_sym_path(uint64_t addr);

/* For ustack (stack.c): the snapshot, and an object's function symbols. */
struct proc_map;
struct out_sym_func {
	uint64_t value, size; /* link-time */
	char *name;
};
const struct proc_map *out_sym_maps(int *n);
int out_sym_funcs(uint64_t addr, const struct out_sym_func **funcs, int *n, uint64_t *bias,
		  void **elf);
/* A new descriptor (close-on-exec, the caller's) of the file mapped at addr,
 * as the target sees it, and in *path the name it was opened by; -errno. */
int out_sym_dup(uint64_t addr, const char **path);

#endif
