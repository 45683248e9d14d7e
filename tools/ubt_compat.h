/*
 * ubt_compat.h - helpers of the command line for bpftrace's workflow
 * (ubt_compat.c): placeholder substitution and --info.
 */
#ifndef UBT_TOOLS_COMPAT_H
#define UBT_TOOLS_COMPAT_H

#include <stdio.h>
#include <sys/types.h>

int ubt_subst_placeholders(char **src, size_t *len, pid_t pid);
void ubt_print_info(FILE *f);
struct diags;
void ubt_hint_spdk_maps(struct diags *d);

#endif
