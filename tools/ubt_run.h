/*
 * ubt_run.h - what the driver's stages hand each other: one struct run
 * carries the options, the script, each stage's product and the session
 * from tools/ubt.c's stage chain (parse -> sema -> resolve -> layout ->
 * open -> compile -> install) to tools/ubt_trace.c (BEGIN, arm, the trace
 * loop, and the finish: drain, detach, END, maps, exit code).
 *
 * A stage is a function `int stage_NAME(struct run *r)` that returns 0 to
 * go on or the exit code ubt ends with (bpftrace's: 1 for script errors,
 * 255 when attaching fails), after printing why.
 */
#ifndef UBT_TOOLS_RUN_H
#define UBT_TOOLS_RUN_H

#include "ubt_args.h"
#include "codegen/codegen.h"
#include "output/output.h"
#include "sema/sema.h"
#include "util/diag.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct att_ids;
struct att_session;

struct run {
	struct options o;
	struct env env;
	uint64_t start_ns; /* CLOCK_BOOTTIME when ubt started: the `elapsed` builtin's 0 */
	/* the script */
	char *src;
	size_t len;
	bool spdk_script; /* names __EXE__ or __PID__ (SPDK's scripts) */
	bool no_exit_maps; /* config = { print_maps_on_exit = 0 } */
	char **named_split; /* the positional parameters when getopt() took some (malloc'ed) */
	struct diags d;
	/* the stages' products */
	struct ast_node *prog;       /* parse */
	struct sema_info info;       /* sema */
	int nprobes;                 /* resolve: probes to attach */
	bool dry_run;                /* --dry-run, -d, -dd: stop after compile */
	struct cg_layout layout;     /* layout */
	char **cargv;                /* open: -c CMD split into words */
	struct cg_object tobj, hobj; /* compile: code for the target, code for ubt */
	struct att_session *s;       /* made before parse, closed at the end */
	/* install and after */
	FILE *outf; /* -o FILE, else stdout */
	struct out out;
	struct att_ids *ids; /* comm/uid/gid freshness (attach/target/ids.c) */
	/* -v: CLOCK_BOOTTIME at the end of resolve, open, compile */
	uint64_t resolved_ns, opened_ns, compiled_ns;
};

/*
 * ubt_trace.c: SIGINT/SIGTERM end the trace, SIGUSR1 prints the maps
 * (installed before the script is read, so that a signal sent while it
 * compiles is not lost).
 */
void ubt_signals_install(void);

/*
 * ubt_trace.c: the session installed (att_install done): BEGIN, arm, the
 * trace loop until exit(), a signal or the target's end, then detach, END
 * and the maps.  Returns the exit code: exit()'s, 1 when the target wrote
 * nonsense into shared memory, 255 when arming failed.
 */
int ubt_trace(struct run *r);

#endif
