/*
 * ubt_args.h - the command line and the environment, as bpftrace 0.17
 * reads them (ubt_args.c).
 */
#ifndef UBT_TOOLS_ARGS_H
#define UBT_TOOLS_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct options {
	const char *program; /* -e */
	const char *file;    /* script path ("-": standard input) */
	pid_t pid;           /* -p */
	const char *cmd;     /* -c, as written */
	bool quiet, dry_run, list, unsafe;
	int verbose;          /* -v, -vv */
	int debug;            /* -d: 1, -dd: 2 (bpftrace's dry-run debug output) */
	unsigned dump;        /* --dump STAGE, -d STAGE: enum ubt_dump bits */
	bool json;            /* -f json */
	const char *out_file; /* -o */
	int buffering;        /* -B: _IONBF, _IOLBF, _IOFBF; -1 = default */
	char **params;        /* words after the script: positional parameters $1.. */
	int nparams;
	int helper_checks;    /* -k: 1, -kk: 2 (bpftrace's helper error warnings) */
	bool no_warnings;     /* --no-warnings */
	const char *search;   /* -l [search] ("*:*" when not given) */
	bool search_given;
	bool as_bpftrace;     /* run under the name `bpftrace` (the compat wrapper) */
};

/*
 * ubt's dumps of one stage each (--dump STAGE or -d STAGE, repeatable),
 * printed as the stage ends; the script then runs as usual.
 */
enum ubt_dump {
	UBT_DUMP_AST = 1 << 0,   /* ast: the parsed script (stdout) */
	UBT_DUMP_TYPES = 1 << 1, /* types: the script with its types (stdout) */
	UBT_DUMP_IR = 1 << 2,    /* ir: LLVM IR of the probes (stdout) */
	UBT_DUMP_ASM = 1 << 3,   /* asm: their machine code (stdout) */
	UBT_DUMP_SITES = 1 << 4, /* sites: each patched site as placed (stderr) */
	UBT_DUMP_LINK = 1 << 5,  /* link: sections and symbols of the linked code (stderr) */
	UBT_DUMP_RSYS = 1 << 6,  /* rsys: each remote system call and its result (stderr) */
};

/*
 * The BPFTRACE_* variables bpftrace 0.17 reads, checked as it checks them;
 * ubt honours those it has a use for.  Without BPFTRACE_MAX_PROBES ubt
 * has no limit of its own below what it can attach.
 */
struct env {
	uint64_t map_keys_max, perf_rb_pages, max_probes;
};

/* 0, or the exit code (after the message) for a command line ubt refuses. */
int ubt_parse_args(int argc, char **argv, struct options *o);
int ubt_env_read(struct env *e);
void ubt_usage(FILE *f);
char **ubt_split_cmd(const char *cmd);

#endif
