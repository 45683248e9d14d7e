/*
 * syscalls.h - attach/resolve/: the system-call tracepoints
 * (`tracepoint:syscalls:sys_enter_NAME`, `tracepoint:raw_syscalls:sys_enter`)
 * as files describe them: the kernel's format files under tracefs, or the
 * x86-64 table generated into syscall_tab.c when tracefs is not mounted.
 * Reads files only, like the rest of resolve/ (resolve.h).
 *
 * A format is a list of fields, each a C declaration with its place in the
 * record the kernel hands a tracepoint program:
 *
 *   $ cat /sys/kernel/tracing/events/syscalls/sys_enter_write/format
 *   name: sys_enter_write
 *   ...
 *   	field:int __syscall_nr;	offset:8;	size:4;	signed:1;
 *   	field:unsigned int fd;	offset:16;	size:8;	signed:0;
 *   	field:const char * buf;	offset:24;	size:8;	signed:0;
 *   	field:size_t count;	offset:32;	size:8;	signed:0;
 *
 * syscalls.c turns one into a struct ast_record (bpftrace 0.17's types,
 * attach_spec.c's patterns expanded) before sema, as dwarf.c does for a
 * uprobe's parameters.
 */
#ifndef UBT_ATTACH_RESOLVE_SYSCALLS_H
#define UBT_ATTACH_RESOLVE_SYSCALLS_H

#include <stdbool.h>

/* System-call numbers of x86-64 stay below this (470 in Linux 6.18). */
#define ATT_SYS_MAX_NR 1024

/* One system call of syscall_tab.c: the NAME of sys_enter_NAME, its x86-64
 * number, its arguments as `TYPE NAME; TYPE NAME; ...` (format order). */
struct att_sys_call {
	const char *name;
	int nr;
	const char *args;
};

extern const struct att_sys_call att_sys_tab[];
extern const int att_sys_tab_len;
/* Each x86-64 number's call name, with a tracepoint or not (the names of
 * <asm/unistd_64.h>: stat, not the tracepoint's newstat); NULL: none. */
extern const char *const att_sys_call_names[ATT_SYS_MAX_NR];

/* One field of a format. */
struct att_sys_field {
	char *type; /* as declared: "const char *", "unsigned long" */
	char *name; /* "buf"; "args" for `unsigned long args[6]` */
	int count;  /* array length, 0 if not an array */
	int offset, size;
};

struct att_sys_format {
	int nfields;
	struct att_sys_field *fields;
};

/*
 * The tracefs directory in use: $UBT_TRACEFS if set (a test points it at a
 * directory without events to force the table), else /sys/kernel/tracing,
 * else /sys/kernel/debug/tracing, whichever has events/syscalls; NULL
 * when none has (the table is used).
 */
const char *att_sys_tracefs(void);
/* The syscall_tab.c entry of sys_enter_NAME / sys_exit_NAME's NAME, or NULL. */
const struct att_sys_call *att_sys_find(const char *name);
/*
 * The events of category "syscalls" or "raw_syscalls" whose name matches
 * pattern (fnmatch, attach_spec.c's escapes), sorted, as a malloc'ed array
 * of malloc'ed names; *n their count.  From tracefs when mounted, else
 * from the table.
 */
char **att_sys_events(const char *category, const char *pattern, int *n);
/* The format of CATEGORY:EVENT; 0, or -ENOENT when there is no such event. */
int att_sys_format(const char *category, const char *event, struct att_sys_format *f);
void att_sys_format_free(struct att_sys_format *f);
/* "syscalls" and "raw_syscalls": the categories ubt serves in user space. */
bool att_sys_category(const char *category);

#endif
