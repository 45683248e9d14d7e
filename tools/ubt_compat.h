/*
 * ubt_compat.h - helpers of the command line for bpftrace's workflow
 * (ubt_compat.c): placeholder substitution and --info.
 */
#ifndef UBT_TOOLS_COMPAT_H
#define UBT_TOOLS_COMPAT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

int ubt_subst_placeholders(char **src, size_t *len, pid_t pid);
void ubt_print_info(FILE *f);
struct diags;
void ubt_hint_spdk_maps(struct diags *d);

/*
 * Without -p or -c: the process the script names through its probes'
 * paths, `uprobe:/proc/N/root/PATH:f`, `/proc/N/cwd/...` or `/proc/N/exe`,
 * as kubectl-trace's runner writes them (it substitutes $container_pid and
 * runs bpftrace with no -p).  N when every uprobe, uretprobe and usdt probe
 * names the same N so; else 0.  Unless quiet, warns when other processes
 * map that file (bpftrace's probes belong to the file: it traces them too).
 */
struct ast_node;
pid_t ubt_pid_from_paths(const struct ast_node *prog, bool quiet);

#endif
