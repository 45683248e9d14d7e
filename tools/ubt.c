/*
 * ubt.c - the command line: chains the stages, then hands the session to
 * the trace loop (ubt_trace.c).
 *
 *   options (ubt_args.c) -> the script's text
 *   -> parse    parse_script                      -d ast, -d
 *   -> sema     att_dwarf_args, att_sys_args,     -d types, -d
 *               sema_check
 *   -> resolve  att_resolve: attach points -> places in files, probe count
 *   -> layout   cg_layout: shared memory
 *   -> open     att_open: -p PID, or -c CMD started
 *   -> compile  cg_compile (target, host)         -d ir|asm, -d, -dd
 *   -> install  att_install: memory, code, trampolines in the target
 *   -> trace    (ubt_trace.c) -d link, -d sites -> BEGIN -> att_arm
 *               -> [drain events until stop] -> att_detach -> END -> maps
 *
 * -d rsys prints each remote system call from open on.
 *
 * Each stage is a function stage_NAME(struct run *) (ubt_run.h) that
 * returns 0 or the exit code; the chain stops after the first stage that
 * reported errors.  Exit codes follow bpftrace: 0 after a normal stop
 * (including SIGINT/SIGTERM), 1 for script errors and "No probes to
 * attach", 255 when attaching fails.
 */
#include "attach/attach.h"
#include "attach/features/features.h"
#include "codegen/codegen.h"
#include "output/srcinfo.h"
#include "parser/ast.h"
#include "sema/sema.h"
#include "ubt_args.h"
#include "ubt_compat.h"
#include "ubt_config.h"
#include "ubt_run.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Threads of process pid now (its /proc/PID/task entries), 0 if unknown. */
static uint32_t task_count(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	uint32_t n = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The thread table has a slot (and an event ring) per thread that hits a
 * probe at the same time: 1,024, or twice the threads a -p target has now
 * if that is more, within 1 GiB of rings.  A thread that exits leaves its
 * slot to the next one (runtime/thread/rt_thread.c); a hit that finds none is
 * skipped and reported.
 */
static uint32_t table_threads(pid_t pid, uint32_t ring_size)
{
	uint64_t n = 1024, live = pid > 0 ? task_count(pid) : 0;
	while (n < 2 * live)
		n <<= 1;
	while (n > 256 && n * ring_size > (1ull << 30))
		n >>= 1;
	return (uint32_t)n;
}

static void set_cg_options(struct cg_options *co, const struct env *env, pid_t pid)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	co->ncpu = ncpu > 0 ? (uint32_t)ncpu : 1;
	co->map_keys_max = (uint32_t)env->map_keys_max;
#ifdef UBT_SMALL_BUFFERS
	co->ring_size = 4096;
	co->nthreads = 16;
	(void)table_threads;
#else
	co->ring_size = (uint32_t)env->perf_rb_pages * 4096u; /* bpftrace's default: 64 */
	co->nthreads = table_threads(pid, co->ring_size);
#endif
}

/* Probes of attach point a: its resolved locations, or 1 for a host or profile probe. */
static int probes_of(const struct ast_node *a, const struct att_session *s)
{
	const char *p = a->attach.provider;
	if (!strcmp(p, "BEGIN") || !strcmp(p, "END") || !strcmp(p, "interval") ||
	    !strcmp(p, "profile"))
		return 1;
	return att_points_of(s, a);
}

static int count_probes(const struct ast_node *prog, const struct att_session *s)
{
	int n = 0;
	for (int i = 0; i < prog->nkids; i++)
		for (int j = 0; j < prog->kids[i]->nkids; j++)
			n += probes_of(prog->kids[i]->kids[j], s);
	return n;
}

/*
 * More probes than BPFTRACE_MAX_PROBES: bpftrace 0.17's message, at the
 * attach point that went past the limit (a wildcard, usually), before
 * anything is compiled or attached.
 */
static int check_max_probes(const struct ast_node *prog, const struct att_session *s,
			    uint64_t limit, struct diags *d)
{
	int total = count_probes(prog, s);
	if ((uint64_t)total <= limit)
		return 0;
	uint64_t n = 0;
	const struct ast_node *at = NULL;
	for (int i = 0; i < prog->nkids && !at; i++)
		for (int j = 0; j < prog->kids[i]->nkids && !at; j++) {
			n += (uint64_t)probes_of(prog->kids[i]->kids[j], s);
			if (n > limit)
				at = prog->kids[i]->kids[j];
		}
	struct diag *dg = diag_error(d, at->loc, "Can't attach to %d probes because it exceeds the "
				     "current limit of %llu probes.", total,
				     (unsigned long long)limit);
	diag_hint(dg, "You can increase the limit through the BPFTRACE_MAX_PROBES environment "
		      "variable.");
	return -1;
}

/*
 * profile probes are called by the runtime's signal handler, with the
 * interrupted registers (attach/features/profile.c): a probe block cannot also be a
 * uprobe, whose handlers are called by trampolines in another convention.
 */
static int check_profile(const struct ast_node *prog)
{
	for (int i = 0; i < prog->nkids; i++) {
		const struct ast_node *pr = prog->kids[i];
		int nprof = 0;
		for (int j = 0; j < pr->nkids; j++)
			nprof += !strcmp(pr->kids[j]->attach.provider, "profile");
		if (nprof && nprof != pr->nkids) {
			diag_sys("write the profile attach points as a probe of their own",
				 "%s: a probe with profile attach points cannot have other attach "
				 "points", pr->kids[0]->str);
			return -EINVAL;
		}
	}
	return 0;
}

static int dump_object(const char *what, const struct cg_object *obj)
{
	const char *text = !strcmp(what, "ir") ? obj->ir : obj->asm_text;
	if (text)
		fputs(text, stdout);
	return 0;
}

/*
 * bpftrace's -d / -dd end with the LLVM IR of the probes (-dd: before and
 * after optimization); ubt prints the IR of the code that runs in the
 * target and of the code that runs in ubt (BEGIN, END, interval), and
 * with -dd their machine code.
 */
static void dump_debug(int level, const struct cg_object *tobj, const struct cg_object *hobj)
{
	const struct cg_object *objs[] = {tobj, hobj};
	const char *names[] = {"probes run in the target", "probes run in ubt"};
	for (int i = 0; i < 2; i++) {
		printf("\nIR: %s\n-------------------\n", names[i]);
		dump_object("ir", objs[i]);
		if (level > 1) {
			printf("\nMachine code: %s\n-------------------\n", names[i]);
			dump_object("asm", objs[i]);
		}
	}
}

/*
 * ubt -l [SEARCH]: SEARCH is parsed as the attach points of a script (with
 * a wildcard probe type allowed, parse_listing), so a bad one gets the
 * script's messages (`-l '\n'`: invalid character).
 */
static int list_probes(const struct options *o)
{
	struct diags d;
	struct ast_node *prog = NULL;
	if (!o->search_given && o->pid <= 0) {
		/* bpftrace lists every kernel probe; ubt has nothing to list */
		diag_sys("ubt lists the probes of a program or library (ubt -l 'uprobe:BIN:*', "
			 "'usdt:BIN:*') or of a process (ubt -l -p PID); bpftrace -l lists kernel "
			 "probes", "nothing to list: name a binary or a process");
		return 1;
	}
	char *text = xasprintf("%s {}", o->search);
	diag_init(&d, "stdin", o->search, strlen(o->search));
	parse_listing = true;
	parse_have_pid = o->pid > 0;
	int ret = parse_script(text, strlen(text), &d, &prog) ||
		  att_list(prog, o->pid, o->verbose, stdout, &d);
	diag_print(&d, stderr);
	if (prog)
		ast_free(prog);
	diag_free(&d);
	free(text);
	return ret ? 1 : 0;
}

static bool dump_is(const struct run *r, enum ubt_dump stage)
{
	return (r->o.dump & stage) != 0;
}

/* The script's text, placeholders replaced; 0, or the exit code. */
static int read_script(struct run *r)
{
	const struct options *o = &r->o;
	if (o->program) {
		r->src = xstrdup(o->program);
		r->len = strlen(r->src);
	} else if (read_file(strcmp(o->file, "-") ? o->file : "/dev/stdin", &r->src, &r->len)) {
		diag_sys(NULL, "failed to open file '%s': %s", o->file, strerror(errno));
		return 255; /* bpftrace 0.17: -1 */
	}
	/* SPDK's scripts name the target __EXE__ and __PID__ (scripts/bpftrace.sh) */
	r->spdk_script = strstr(r->src, "__EXE__") || strstr(r->src, "__PID__");
	int serr = o->pid ? ubt_subst_placeholders(&r->src, &r->len, o->pid) : 0;
	if (serr) {
		if (kill(o->pid, 0) && errno == ESRCH)
			diag_sys(NULL, "pid %d: no such process", o->pid);
		else
			diag_sys(NULL, "pid %d: cannot read /proc/%d/exe for __EXE__: %s", o->pid,
				 o->pid, strerror(-serr));
		free(r->src);
		return 1;
	}
	diag_init(&r->d, o->program || !strcmp(o->file, "-") ? "stdin" : o->file, r->src, r->len);
	return 0;
}

/* parse: the script's text -> AST */
/*
 * The config block's values ubt uses (bpftrace 0.22's names, with or
 * without BPFTRACE_, any case), each unless its environment variable is
 * set, which wins as in bpftrace: max_map_keys, max_probes, max_strlen
 * (sema reads BPFTRACE_STRLEN: set from here), print_maps_on_exit.  The
 * other names sema knows are accepted and change nothing in ubt.
 */
static int apply_config(struct run *r)
{
	const char *pi = getenv("BPFTRACE_PROBE_INLINE");
	sema_probe_inline = pi && (!strcmp(pi, "1") || !strcmp(pi, "true"));
	/* reg("ax") at an entry: every uprobe point a mid-function one */
	sema_all_regs = sema_program_wants_all_regs(r->prog);
	const char *sdi = getenv("BPFTRACE_SHOW_DEBUG_INFO");
	out_show_debug_info = sdi && (!strcmp(sdi, "1") || !strcmp(sdi, "true"));
	const struct ast_node *cfg = r->prog && r->prog->prog ? r->prog->prog->config : NULL;
	for (int i = 0; cfg && i < cfg->nkids; i++) {
		const struct ast_node *a = cfg->kids[i];
		char name[64];
		const char *n = a->lhs->str;
		if (!strncasecmp(n, "bpftrace_", 9))
			n += 9;
		snprintf(name, sizeof(name), "%s", n);
		for (char *p = name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		uint64_t v;
		if (a->rhs->kind == AST_INT)
			v = a->rhs->uval;
		else if (a->rhs->kind == AST_IDENT &&
			 (!strcmp(a->rhs->str, "true") || !strcmp(a->rhs->str, "false")))
			v = !strcmp(a->rhs->str, "true"); /* 0.24's booleans */
		else
			continue;
		if (!strcmp(name, "show_debug_info") && !getenv("BPFTRACE_SHOW_DEBUG_INFO")) {
			out_show_debug_info = v != 0; /* ustack's inlined calls and lines */
		} else if (!strcmp(name, "probe_inline") && !getenv("BPFTRACE_PROBE_INLINE")) {
			sema_probe_inline = v != 0; /* resolve reads the config itself */
		} else if (!strcmp(name, "print_maps_on_exit") &&
			   !getenv("BPFTRACE_PRINT_MAPS_ON_EXIT")) {
			r->no_exit_maps = v == 0;
		} else if (!strcmp(name, "max_map_keys") && !getenv("BPFTRACE_MAP_KEYS_MAX") &&
			   !getenv("BPFTRACE_MAX_MAP_KEYS")) {
			if (v < 1 || v > 1u << 30) {
				diag_sys(NULL, "config max_map_keys is %llu; ubt takes 1 to %u",
					 (unsigned long long)v, 1u << 30);
				return 1;
			}
			r->env.map_keys_max = v;
		} else if (!strcmp(name, "max_probes") && !getenv("BPFTRACE_MAX_PROBES")) {
			r->env.max_probes = v;
		} else if (!strcmp(name, "max_strlen") && !getenv("BPFTRACE_STRLEN") &&
			   !getenv("BPFTRACE_MAX_STRLEN")) {
			if (v > 200) {
				diag_sys(NULL,
					 "config max_strlen %llu exceeds the current maximum of "
					 "200 bytes.",
					 (unsigned long long)v);
				return 1;
			}
			char val[24];
			snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
			setenv("BPFTRACE_STRLEN", val, 1);
		}
	}
	return 0;
}

/*
 * Named parameters (bpftrace 0.24): in a script that calls getopt(), the
 * words after the script that start with `--` are `--name[=value]` for it,
 * not positional parameters ($1 counts the others).  In any other script
 * every word stays positional, as in bpftrace 0.17.
 */
static void split_named_params(struct run *r)
{
	if (!memmem(r->src, r->len, "getopt(", 7))
		return;
	char **pos = xcalloc((size_t)r->o.nparams + 1, sizeof(char *));
	int npos = 0;
	sema_named_args = xcalloc((size_t)r->o.nparams + 1, sizeof(char *));
	for (int i = 0; i < r->o.nparams; i++) {
		char *p = r->o.params[i];
		if (!strncmp(p, "--", 2) && p[2])
			sema_named_args[sema_nnamed_args++] = p;
		else
			pos[npos++] = p;
	}
	r->o.params = pos;
	r->o.nparams = npos;
	r->named_split = pos;
}

static int stage_parse(struct run *r)
{
	split_named_params(r);
	parse_have_pid = r->o.pid > 0;
	if (parse_script_params(r->src, r->len, r->o.nparams, r->o.params, &r->d, &r->prog)) {
		diag_print(&r->d, stderr);
		return 1;
	}
	/* no -p, no -c: the process its probes' /proc/N/root/... paths name */
	if (r->o.pid <= 0 && !r->o.cmd &&
	    (r->o.pid = ubt_pid_from_paths(r->prog, r->o.no_warnings)) > 0)
		parse_have_pid = true;
	if (r->o.debug)
		fputs("AST after: parser\n-------------------\n", stdout);
	if (r->o.debug || dump_is(r, UBT_DUMP_AST))
		ast_dump(r->prog, false, stdout);
	return apply_config(r);
}

/* sema: types (`args` from a uprobe's DWARF or a tracepoint's format first), maps, formats */
static int stage_sema(struct run *r)
{
	sema_unsafe = r->o.unsafe;
	/* the `probe` builtin's longest name at each probe's sites (names.c) */
	att_probe_name_sizes(r->prog, r->o.pid);
	if (att_dwarf_args(r->prog, r->o.pid, &r->d) || att_sys_args(r->prog, &r->d) ||
	    sema_check(r->prog, &r->d, &r->info)) {
		if (r->spdk_script)
			ubt_hint_spdk_maps(&r->d);
		diag_print(&r->d, stderr);
		return 1;
	}
	if (!r->o.no_warnings)
		diag_print(&r->d, stderr); /* warnings */
	if (r->o.debug)
		fputs("\nAST after: Semantic\n-------------------\n", stdout);
	if (r->o.debug || dump_is(r, UBT_DUMP_TYPES))
		ast_dump(r->prog, true, stdout);
	return 0;
}

/* resolve: attach points -> places in files; the probes counted and checked */
static int stage_resolve(struct run *r)
{
	const struct options *o = &r->o;
	att_set_pid_hint(r->s, o->pid);
	att_set_quiet(r->s, o->no_warnings);
	int first = r->d.n; /* sema's warnings are printed */
	if (att_resolve(r->prog, r->s, &r->d)) {
		diag_print(&r->d, stderr);
		return 1;
	}
	if (!o->no_warnings)
		diag_print_from(&r->d, first, stderr); /* resolve's warnings (inlined copies) */
	if (check_profile(r->prog))
		return 1;
	if (check_max_probes(r->prog, r->s, r->env.max_probes, &r->d)) {
		diag_print(&r->d, stderr);
		return 1;
	}
	r->nprobes = count_probes(r->prog, r->s);
	if (r->nprobes == 0) {
		if (!o->quiet)
			printf("No probes to attach\n");
		return 1;
	}
	r->dry_run = o->dry_run || o->debug; /* bpftrace's -d, -dd: a dry run */
	if (att_point_count(r->s) && !o->pid && !o->cmd && !r->dry_run) {
		diag_sys("ubt traces processes: add -p PID or -c 'CMD'",
			 "uprobe probes need a process to attach to");
		return 1;
	}
	if (att_profile_wanted(r->prog) && !o->pid && !o->cmd && !r->dry_run) {
		diag_sys("ubt samples the threads of one process: add -p PID or -c 'CMD'",
			 "profile probes need a process to sample");
		return 1;
	}
	return 0;
}

/* layout: where each map, ring and thread slot goes in shared memory */
static int stage_layout(struct run *r)
{
	struct cg_options co;
	set_cg_options(&co, &r->env, r->o.pid);
	co.helper_checks = r->o.no_warnings ? 0 : r->o.helper_checks; /* -k, -kk */
	cg_layout(&r->info, &co, &r->layout);
	return 0;
}

/* open: -p PID seized, or -c CMD started and stopped at its entry point */
static int stage_open(struct run *r)
{
	const struct options *o = &r->o;
	if (r->dry_run && o->pid > 0 && kill(o->pid, 0) && errno == ESRCH) {
		/* a dry run opens nothing, but the process must exist (bpftrace 0.23) */
		diag_sys(NULL, "pid %d: no such process", (int)o->pid);
		return 1;
	}
	if (r->dry_run || (!o->pid && !o->cmd))
		return 0;
	if (o->cmd && !(r->cargv = ubt_split_cmd(o->cmd)))
		return 1;
	if (o->dump & UBT_DUMP_RSYS)
		att_trace_rsys(r->s, stderr);
	if (att_open(r->s, o->pid, r->cargv))
		return o->pid ? 1 : 255;
	return 0;
}

/* compile: the probes for the target and for ubt (BEGIN, END, interval) */
static int stage_compile(struct run *r)
{
	const struct options *o = &r->o;
	bool keep = o->debug || dump_is(r, UBT_DUMP_IR | UBT_DUMP_ASM);
	struct cg_facts tfacts, hfacts;
	/* profile probes: a real-time signal the target leaves alone (attach/features/profile.c) */
	if (att_profile_plan(r->s, r->prog))
		return 1;
	/* uaddr("sym"): the global's address in the target, now that it is open */
	if (att_uaddr_bind(r->s, r->prog))
		return 1;
	att_facts(r->s, false, &tfacts);
	att_facts(r->s, true, &hfacts);
	tfacts.sys_names = hfacts.sys_names = att_sys_names(&tfacts.nsys_names);
	hfacts.nsys_names = tfacts.nsys_names;
	if (cg_compile(r->prog, &r->info, &r->layout, &tfacts, CG_SIDE_TARGET, keep, &r->tobj,
		       &r->d) ||
	    cg_compile(r->prog, &r->info, &r->layout, &hfacts, CG_SIDE_HOST, keep, &r->hobj,
		       &r->d)) {
		diag_print(&r->d, stderr);
		return 1;
	}
	if (o->debug) {
		dump_debug(o->debug, &r->tobj, &r->hobj);
	} else {
		for (int i = 0; i < 2; i++) { /* --dump ir, --dump asm: IR first */
			const char *what = i ? "asm" : "ir";
			if (!dump_is(r, i ? UBT_DUMP_ASM : UBT_DUMP_IR))
				continue;
			dump_object(what, &r->tobj);
			dump_object(what, &r->hobj);
		}
	}
	return 0;
}

/* install: the output opened, "Attaching N probes...", the code put in place */
static int stage_install(struct run *r)
{
	const struct options *o = &r->o;
	r->outf = stdout;
	if (o->out_file && !(r->outf = fopen(o->out_file, "w"))) {
		diag_sys(NULL, "failed to open output file '%s': %s", o->out_file, strerror(errno));
		return 1;
	}
	if (o->buffering >= 0)
		setvbuf(r->outf, NULL, o->buffering, 0);
	else if (r->outf != stdout)
		setvbuf(r->outf, NULL, _IOLBF, 0);
	if (o->json && !o->quiet)
		fprintf(r->outf, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n",
			r->nprobes);
	else if (!o->quiet)
		fprintf(r->outf, "Attaching %d probe%s...\n", r->nprobes, r->nprobes == 1 ? "" : "s");
	fflush(r->outf);
	if (att_install(r->s, &r->layout, &r->tobj, &r->hobj))
		return 255;
	return 0;
}

/*
 * --dry-run (bpftrace 0.22): everything up to the code compiled, nothing
 * put into a target, no probe run; what bpftrace 0.23 prints: the
 * attaching line and the two empty lines of an exit without maps.
 */
static void dry_run_done(const struct run *r)
{
	const struct options *o = &r->o;
	FILE *f = o->out_file ? fopen(o->out_file, "w") : stdout;
	if (!f) {
		diag_sys(NULL, "failed to open output file '%s': %s", o->out_file, strerror(errno));
		return;
	}
	if (o->json && !o->quiet)
		fprintf(f, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n",
			r->nprobes);
	else if (!o->json && !o->quiet)
		fprintf(f, "Attaching %d probe%s...\n", r->nprobes, r->nprobes == 1 ? "" : "s");
	if (!o->json) /* the empty lines of an exit, also under -q (0.23) */
		fputs("\n\n", f);
	if (f != stdout)
		fclose(f);
}

/*
 * The chain.  Once a target may be open (after stage_open), a stage that
 * fails, or a trace that ends with a nonzero exit code, detaches before
 * ubt exits (att_detach does nothing when there is nothing to undo).
 */
static uint64_t boottime_ns(void);

static int run_stages(struct run *r)
{
	int ret;
	if ((ret = stage_parse(r)) || (ret = stage_sema(r)) || (ret = stage_resolve(r)))
		return ret;
	r->resolved_ns = boottime_ns();
	if ((ret = stage_layout(r)) || (ret = stage_open(r)))
		return ret;
	r->opened_ns = boottime_ns();
	if (!(ret = stage_compile(r)))
		r->compiled_ns = boottime_ns();
	if (!ret && r->dry_run && r->o.dry_run && !r->o.debug)
		dry_run_done(r);
	if (!ret && !r->dry_run && !(ret = stage_install(r)))
		ret = ubt_trace(r);
	if (ret) {
		att_detach(r->s);
		att_watchdog_stop(r->s);
	}
	return ret;
}

static void run_free(struct run *r)
{
	if (r->s)
		att_close(r->s);
	att_ids_close(r->ids);
	cg_object_free(&r->tobj);
	cg_object_free(&r->hobj);
	cg_layout_free(&r->layout);
	sema_info_free(&r->info);
	if (r->prog)
		ast_free(r->prog);
	diag_free(&r->d);
	free(r->src);
	free(r->named_split);
	free(sema_named_args);
	for (char **a = r->cargv; a && *a; a++)
		free(*a);
	free(r->cargv);
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct run r = {0};
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r.start_ns = boottime_ns();
	if ((ret = ubt_parse_args(argc, argv, &r.o)))
		return ret;
	if (ubt_env_read(&r.env))
		return 1;
	if (r.o.list)
		return list_probes(&r.o);
	/* before the script is read: a SIGINT or SIGTERM while it compiles (a
	 * caller's `kill -INT` right after starting ubt, a Ctrl-C) ends the
	 * trace as soon as it is attached, END and maps printed, rather than
	 * being lost (a shell's background job starts with SIGINT ignored) */
	ubt_signals_install();
	if ((ret = read_script(&r)))
		return ret;
	ret = (r.s = att_session_new()) ? run_stages(&r) : 1;
	run_free(&r);
	return ret;
}
