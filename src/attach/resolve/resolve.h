/*
 * resolve.h - attach/resolve/: from script text to places in files.
 *
 * Room rule: resolve reads files only (ELF and DWARF through src/elf and
 * libdw, /proc/PID/maps, paths seen through /proc/PID/root) and never the
 * target's memory: no ptrace, nothing of attach/target/, attach/inject/ or
 * attach/features/ (tests/layers/check.py fails on such an include or a
 * tracee_* call).  It runs before any process is touched, so that bad
 * input fails here, with errors at the script's locations (struct diags).
 * Its output is the session's att_point list and USDT argument lists
 * (attach/session.h); inject/ turns those into sites once the process is open.
 */
#ifndef UBT_ATTACH_RESOLVE_H
#define UBT_ATTACH_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ast_node;
struct att_session;
struct cg_usdt_variants;
struct diags;

/* Resolves every uprobe attach point; errors go to diags. */
int att_resolve(const struct ast_node *prog, struct att_session *s, struct diags *diags);

/* resolve.c: resolves one uprobe attach point a of probe (index) into s->points. */
int att_resolve_one(const struct ast_node *probe, int index, const struct ast_node *a,
		    struct att_session *s, struct diags *diags);
/* resolve.c: the path to open for a file the -p process names (its /proc/PID/root view). */
char *att_open_path(pid_t pid, const char *path);
/*
 * dwarf.c: for every uprobe probe whose body reads `args`, the record of
 * its function's parameters (probe->args), from the binary's DWARF; errors
 * (no debuginfo, functions with different parameters) go to diags.
 * Runs after parse_script() and before sema_check().
 */
int att_dwarf_args(struct ast_node *prog, pid_t pid, struct diags *diags);
/* dwarf.c: does the subtree read the `args` builtin? (depth: the caller's, 0 at a probe) */
bool att_uses_args(const struct ast_node *n, int depth);
/*
 * dwarf.c: uaddr("sym") nodes get the symbol found in the probe's binary
 * (att_dwarf_args does this too); att_uaddr_bind() then sets each one's
 * address in the target (cval), or the link-time address without one.
 */
int att_uaddr_bind(const struct att_session *s, struct ast_node *prog);
/*
 * dwarf.c, for `-lv`: bpftrace's parameter lines of the function at vaddr
 * in an open DWARF handle ("\n    int id\n    const char* name"), "" when
 * unknown.  malloc'ed.
 */
struct att_dwarf;
struct att_dwarf *att_dwarf_open(const char *path);
char *att_dwarf_params_text(struct att_dwarf *d, uint64_t vaddr);
void att_dwarf_close(struct att_dwarf *d);
/* The libdw handle of an open file and its load bias (0: link-time addresses). */
struct Dwarf;
struct Dwarf *att_dwarf_handle(struct att_dwarf *d, uint64_t *bias);
/*
 * srcline.c: the link-time addresses of source line FILE:LINE[:COL] in the
 * binary at path (uprobe:BIN@FILE:LINE): the first statement of the line
 * in each function it is in, its out-of-line copy and every inlined copy
 * apart.  0 and *addrs (malloc'ed, ascending), or -1 with *err set to
 * bpftrace's message (malloc'ed).
 */
/*
 * inline.c: the entries of the inlined copies of function `name` in the
 * binary at path (link-time, malloc'ed in *addrs); their number, 0 when
 * there are none or no DWARF.  att_inline_forget() frees what it keeps.
 */
int att_inline_copies(const char *path, const char *name, uint64_t **addrs);
void att_inline_forget(void);
int att_src_line_addrs(const char *path, const char *file, uint32_t line, uint32_t col,
		       uint64_t **addrs, int *naddrs, char **err);
/* srcline.c: the lines of source FILE that have a statement in the binary
 * at path (ubt -l 'uprobe:BIN@FILE:*'), ascending, malloc'ed in *lines; 0,
 * or -1 with *err as att_src_line_addrs sets it. */
int att_src_lines(const char *path, const char *file, uint32_t **lines, int *n, char **err);

/*
 * names.c: probes that read the `probe` builtin get one compiled variant
 * per distinct full name among their points (att_point.variant); run at
 * the end of att_resolve().  att_probe_names_free() frees a list's names.
 */
void att_probe_names(const struct ast_node *prog, struct att_session *s);
/* The same again for the probes with system-call sites (att_sys_objects added some). */
void att_probe_names_sys(struct att_session *s);
void att_probe_names_free(struct cg_usdt_variants *v);
/* names.c, before sema_check(): sets probe_name_len of probes that read `probe`. */
void att_probe_name_sizes(struct ast_node *prog, pid_t pid);

/*
 * syscalls.c, before sema_check(): expands each tracepoint:syscalls:* and
 * tracepoint:raw_syscalls:* attach point (bpftrace's "tracepoint not
 * found" when nothing matches) and gives probes that read `args` the
 * records of their tracepoints' formats (probe->args, probe->tp_args).
 */
int att_sys_args(struct ast_node *prog, struct diags *diags);
/* syscalls.c: the longest full name (`tracepoint:syscalls:sys_enter_write`)
 * among a system-call tracepoint point's events; 0 for other points. */
int att_sys_name_len(const struct ast_node *a);
/* x86-64's system-call names by number (syscall_tab.c), NULL where a number
 * has none, *n numbers: for syscall_name() (cg_facts.sys_names) */
const char *const *att_sys_names(int *n);
/* syscalls.c: the events a system-call tracepoint point matches; 0 for other points. */
int att_sys_event_count(const struct ast_node *a);
/*
 * syscalls.c: the sites of one system-call tracepoint attach point in
 * libc (the -p process's, else the one ld.so would load): a mid-function
 * point at each wrapper's `mov $NR, %eax` (sys_enter) or after its
 * `syscall` (sys_exit), for every call the point's events name; where no
 * `mov` a jump can go over loads the number, at the `syscall` itself (the
 * number from %rax when only it knows).  att_sys_dyn_free frees what the
 * dynamic sites' variants share (struct cg_sys_dyn).
 */
int att_sys_resolve(const struct ast_node *probe, int index, const struct ast_node *a,
		    struct att_session *s, struct diags *diags);
void att_sys_dyn_free(struct att_session *s);
/* syscalls.c: the same points in every other object of process pid, once open;
 * -ENOTSUP (said) if pid does not map the libc they were resolved in. */
int att_sys_objects(struct att_session *s, pid_t pid);
/*
 * syscalls.c: the same for the objects pid mapped since (dlopen): new
 * points, pending (armed by att_arm_late), each with the variant and name
 * of a point of the same call and kind made at attach (the probe code is
 * compiled: a call no site had then cannot be served, and its sites are
 * counted in *unserved).  Returns the number of new points.
 */
int att_sys_late(struct att_session *s, pid_t pid, int *unserved);

/* usdt.c: resolves one usdt attach point into s->points (one per location). */
int att_usdt_resolve(const struct ast_node *probe, int index, const struct ast_node *a,
		     struct att_session *s, struct diags *diags);
void att_usdt_free(struct att_session *s);

/*
 * list.c: `ubt -l [SEARCH] [-p PID]`: prints the uprobe, uretprobe and usdt
 * probes matching the attach points parsed from SEARCH (parse_listing), in
 * bpftrace's format.  0, or -errno with the reason in diags.
 */
int att_list(const struct ast_node *prog, pid_t pid, bool verbose, FILE *out,
	     struct diags *diags);

#endif
