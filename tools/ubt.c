/*
 * ubt.c - the command line: chains the stages and runs the session.
 *
 *   script -> parse_script -> att_dwarf_args -> sema_check -> att_resolve -> cg_layout
 *          -> att_open -> cg_compile (target, host) -> att_install
 *          -> BEGIN -> att_arm -> [drain events until stop] -> att_detach
 *          -> END -> print maps
 *
 * Stops after the first stage that reports errors.  Exit codes follow
 * bpftrace: 0 after a normal stop (including SIGINT/SIGTERM), 1 for script
 * errors and "No probes to attach", 255 when attaching fails.
 */
#include "ubt_config.h"
#include "ubt_args.h"
#include "ubt_compat.h"
#include "attach/attach.h"
#include "attach/features/features.h"
#include "codegen/codegen.h"
#include "output/output.h"
#include "output/stack.h"
#include "output/sym.h"
#include "parser/ast.h"
#include "sema/sema.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested, print_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		print_requested = 1;
	else
		stop_requested = 1;
}

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
 * slot to the next one (runtime/rt_thread.c); a hit that finds none is
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
	int n = 0;
	for (int i = 0; i < s->npoints; i++)
		n += s->points[i].attach == a;
	return n;
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

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * A -c child outlives the trace only when it ends by itself: after exit()
 * or a signal, bpftrace terminates it, and so does ubt (SIGTERM, then
 * SIGKILL if it is still there after a second).
 */
static void end_child(struct att_session *s)
{
	int status;
	if (!s->has_target || !s->t.is_child || tracee_wait_exit(&s->t, 0, &status) == 1)
		return;
	kill(s->t.pid, SIGTERM);
	if (tracee_wait_exit(&s->t, 1000, &status) != 1) {
		kill(s->t.pid, SIGKILL);
		tracee_wait_exit(&s->t, -1, &status);
	}
}

/*
 * The traced process ended by itself during the trace: if a signal killed
 * it, say which, as a shell would have for the program run alone (under
 * ubt nobody else sees its wait status).  bpftrace says nothing.
 */
static void report_target_death(struct att_session *s)
{
	int st;
	if (!s->has_target || tracee_wait_exit(&s->t, 0, &st) != 1 || st == -1 ||
	    !WIFSIGNALED(st))
		return;
	int sig = WTERMSIG(st);
	const char *abbrev = sigabbrev_np(sig);
	fprintf(stderr, "WARNING: pid %d was killed by signal %d (%s%s%s%s)%s\n", s->t.pid, sig,
		abbrev ? "SIG" : "", abbrev ? abbrev : "", abbrev ? ": " : "", strsignal(sig),
		WCOREDUMP(st) ? ", core dumped" : "");
}

static void sym_alias_sites(const struct att_session *s, int first);

/* Sites armed in a library loaded after attach: its symbols, its trampolines. */
static void sym_late_sites(const struct att_session *s, int first)
{
	out_sym_init(s->t.pid);
	sym_alias_sites(s, first);
	out_stack_loaded(); /* ustack walks through the new library */
}

/*
 * interval:s|ms|us|hz:N probes run in ubt, like BEGIN and END, from the
 * trace loop when their time comes (bpftrace runs them on one CPU, in no
 * process in particular).  The first run is one period after the start.
 */
#define MAX_TIMERS 64

struct timer {
	att_host_fn fn;
	uint64_t period, next; /* ns, CLOCK_MONOTONIC */
};

struct timers {
	int n;
	struct timer t[MAX_TIMERS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t interval_period(const struct ast_attach *a)
{
	uint64_t f = a->freq ? a->freq : 1;
	if (!strcmp(a->target, "s"))
		return f * 1000000000ull;
	if (!strcmp(a->target, "ms"))
		return f * 1000000ull;
	if (!strcmp(a->target, "us"))
		return f * 1000ull;
	return 1000000000ull / f; /* hz */
}

static void timers_setup(struct timers *tm, struct att_session *s, const struct cg_object *hobj)
{
	uint64_t now = mono_ns();
	tm->n = 0;
	for (int i = 0; hobj && i < hobj->nprobes; i++) {
		const struct ast_node *probe = hobj->probes[i].probe;
		att_host_fn fn = att_host_probe(s, hobj, i);
		for (int j = 0; fn && j < probe->nkids && tm->n < MAX_TIMERS; j++) {
			const struct ast_attach *a = &probe->kids[j]->attach;
			if (strcmp(a->provider, "interval"))
				continue;
			struct timer *t = &tm->t[tm->n++];
			t->fn = fn;
			t->period = interval_period(a);
			if (t->period == 0)
				t->period = 1;
			t->next = now + t->period;
		}
	}
}

/* Runs the timers that are due; returns ns until the next one (or max). */
static uint64_t timers_run(struct timers *tm, uint64_t max)
{
	uint64_t now = mono_ns(), wait = max;
	for (int i = 0; i < tm->n; i++) {
		struct timer *t = &tm->t[i];
		if (now >= t->next) {
			struct rt_regs regs = {0};
			t->fn(&regs);
			t->next += t->period;
			if (t->next <= now) /* fell behind (ubt was stopped): skip, as a timer would */
				t->next = now + t->period;
		}
		if (t->next - now < wait)
			wait = t->next > now ? t->next - now : 0;
	}
	return wait;
}

/* Drains events until exit(), a signal, or the target's exit. */
static void trace_loop(struct att_session *s, struct out *o, struct timers *tm,
		       struct att_ids *ids)
{
	struct rt_shm_header *h = (struct rt_shm_header *)att_data(s);
	unsigned checks = 0;
	int idle_ms = 0;
	for (;;) {
		if (tm->n && !h->exit_req)
			timers_run(tm, 0);
		int n = out_drain(o);
		out_report_lost(o);
		if (print_requested) {
			/* SIGUSR1: every map now, without the leading blank lines */
			print_requested = 0;
			out_print_maps(o);
		}
		if (h->exit_req || stop_requested)
			break;
		if (s->has_target) {
			/* exit is cheap to see (a pidfd); exec needs /proc/PID/maps */
			int status;
			if (tracee_wait_exit(&s->t, 0, &status) == 1)
				break;
		}
		/* a probed library loaded after attach (attach/features/dlopen.c) */
		if (s->has_target)
			att_dl_poll(s, sym_late_sites);
		/* comm/uid/gid caches: raise ids_gen when a thread changed (attach/target/ids.c) */
		att_ids_poll(ids, &h->ids_gen);
		if (s->has_target && ++checks % 20 == 0) {
			int st = att_check_target(s);
			if (st == ATT_EXECED) {
				/* a -c command still runs to its end, as under bpftrace */
				fprintf(stderr, "WARNING: pid %d called exec(); its probes went with the "
						"old program image\n", s->t.pid);
				if (!s->t.is_child)
					break;
			}
			if (st == ATT_EXITED)
				break;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		h->heartbeat = (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;
		/* poll fast while events flow, back off to 8 ms when idle */
		if (n) {
			idle_ms = 0;
			continue;
		}
		idle_ms = idle_ms ? (idle_ms < 8 ? idle_ms * 2 : 8) : 1;
		uint64_t wait = (uint64_t)idle_ms * 1000000ull;
		if (tm->n)
			wait = timers_run(tm, wait);
		struct timespec ts = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
		if (wait)
			nanosleep(&ts, NULL);
	}
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t start_ns;

/* What builtins read from the shared header: nsecs, elapsed, cpid, cgroup, ids_gen. */
static void set_builtin_facts(struct att_session *s, const struct options *o)
{
	struct rt_shm_header *h = (struct rt_shm_header *)att_data(s);
	h->start_ns = start_ns;
	if (s->has_target && o->cmd)
		h->cpid = (uint32_t)s->t.pid;
	h->cgroup_id = att_cgroup_id(s->has_target ? s->t.pid : getpid());
	h->ids_gen = 1; /* a thread's empty comm/uid/gid cache has gen 0 */
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
 * Symbolization (output/sym.c): a snapshot of the target's mappings, and
 * each trampoline as an alias of its site (func in a uprobe records an
 * address inside the trampoline).
 */
static void sym_setup(const struct att_session *s)
{
	if (!s->has_target)
		return;
	out_sym_init(s->t.pid);
	out_stack_prepare(); /* ustack: before arming */
	sym_alias_sites(s, 0);
}

/* --dump sites: a site as "symbol+offset (file)", for att_dump_sites() */
static char *site_name(uint64_t addr)
{
	char *sym = out_sym_text(addr, true);
	char *name = xasprintf("%s (%s)", sym, out_sym_path(addr));
	free(sym);
	return name;
}

/* Each trampoline from sites[first] on is an alias of its site (func). */
static void sym_alias_sites(const struct att_session *s, int first)
{
	for (int i = first; i < s->nsites; i++) {
		uint64_t lo = s->sites[i].tramp, hi = lo + 4096;
		for (int j = 0; j < s->nsites; j++)
			if (s->sites[j].tramp > lo && s->sites[j].tramp < hi)
				hi = s->sites[j].tramp;
		if (lo)
			out_sym_alias(lo, hi, s->sites[i].plan.site);
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

int main(int argc, char **argv)
{
	struct options o = {0};
	struct diags d;
	char *src = NULL;
	size_t len = 0;
	struct ast_node *prog = NULL;
	struct sema_info info = {0};
	struct att_session *s = NULL;
	char **cargv = NULL; /* -c CMD split into words */
	struct cg_layout layout = {0};
	struct cg_object tobj = {0}, hobj = {0};
	struct att_ids *ids = NULL;
	int ret = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	start_ns = boottime_ns();
	struct env env;
	if ((ret = ubt_parse_args(argc, argv, &o)))
		return ret;
	if (ubt_env_read(&env))
		return 1;
	if (o.list)
		return list_probes(&o);
	/* before the script is read: a SIGINT or SIGTERM while it compiles (a
	 * caller's `kill -INT` right after starting ubt, a Ctrl-C) ends the
	 * trace as soon as it is attached, END and maps printed, rather than
	 * being lost (a shell's background job starts with SIGINT ignored) */
	install_signals();
	if (o.program) {
		src = xstrdup(o.program);
		len = strlen(src);
	} else if (read_file(strcmp(o.file, "-") ? o.file : "/dev/stdin", &src, &len)) {
		diag_sys(NULL, "failed to open file '%s': %s", o.file, strerror(errno));
		return 255; /* bpftrace 0.17: -1 */
	}
	ret = 1;
	/* SPDK's scripts name the target __EXE__ and __PID__ (scripts/bpftrace.sh) */
	bool spdk_script = strstr(src, "__EXE__") || strstr(src, "__PID__");
	int serr = o.pid ? ubt_subst_placeholders(&src, &len, o.pid) : 0;
	if (serr) {
		if (kill(o.pid, 0) && errno == ESRCH)
			diag_sys(NULL, "pid %d: no such process", o.pid);
		else
			diag_sys(NULL, "pid %d: cannot read /proc/%d/exe for __EXE__: %s", o.pid,
				 o.pid, strerror(-serr));
		free(src);
		return 1;
	}
	diag_init(&d, o.program || !strcmp(o.file, "-") ? "stdin" : o.file, src, len);
	if (!(s = att_session_new()))
		goto out;
	parse_have_pid = o.pid > 0;
	if (parse_script_params(src, len, o.nparams, o.params, &d, &prog)) {
		diag_print(&d, stderr);
		goto out;
	}
	if (o.debug)
		fputs("AST after: parser\n-------------------\n", stdout);
	if (o.debug || (o.dump && !strcmp(o.dump, "ast")))
		ast_dump(prog, false, stdout);
	sema_unsafe = o.unsafe;
	/* the `probe` builtin's longest name at each probe's sites (names.c) */
	att_probe_name_sizes(prog, o.pid);
	/* a uprobe's `args`: typed from the binary's DWARF before sema */
	if (att_dwarf_args(prog, o.pid, &d) || sema_check(prog, &d, &info)) {
		if (spdk_script)
			ubt_hint_spdk_maps(&d);
		diag_print(&d, stderr);
		goto out;
	}
	if (!o.no_warnings)
		diag_print(&d, stderr); /* warnings */
	if (o.debug)
		fputs("\nAST after: Semantic\n-------------------\n", stdout);
	if (o.debug || (o.dump && !strcmp(o.dump, "types")))
		ast_dump(prog, true, stdout);
	s->pid_hint = o.pid;
	if (att_resolve(prog, s, &d)) {
		diag_print(&d, stderr);
		goto out;
	}
	if (check_profile(prog))
		goto out;
	if (check_max_probes(prog, s, env.max_probes, &d)) {
		diag_print(&d, stderr);
		goto out;
	}
	int nprobes = count_probes(prog, s);
	if (nprobes == 0) {
		if (!o.quiet)
			printf("No probes to attach\n");
		goto out;
	}
	bool dry_run = o.dry_run || o.debug; /* bpftrace's -d, -dd: a dry run */
	if (s->npoints && !o.pid && !o.cmd && !dry_run) {
		diag_sys("ubt traces processes: add -p PID or -c 'CMD'",
			 "uprobe probes need a process to attach to");
		goto out;
	}
	if (att_profile_wanted(prog) && !o.pid && !o.cmd && !dry_run) {
		diag_sys("ubt samples the threads of one process: add -p PID or -c 'CMD'",
			 "profile probes need a process to sample");
		goto out;
	}
	struct cg_options co;
	set_cg_options(&co, &env, o.pid);
	co.helper_checks = o.no_warnings ? 0 : o.helper_checks; /* -k, -kk */
	cg_layout(&info, &co, &layout);
	bool keep = o.debug || (o.dump && (!strcmp(o.dump, "ir") || !strcmp(o.dump, "asm")));
	struct cg_facts tfacts, hfacts;
	if (!dry_run && (o.pid || o.cmd)) {
		if (o.cmd && !(cargv = ubt_split_cmd(o.cmd)))
			goto out;
		if (att_open(s, o.pid, cargv)) {
			ret = o.pid ? 1 : 255;
			goto out;
		}
	}
	/* profile probes: a real-time signal the target leaves alone (attach/features/profile.c) */
	if (att_profile_plan(s, prog))
		goto out_detach;
	/* uaddr("sym"): the global's address in the target, now that it is open */
	if (att_uaddr_bind(s, prog))
		goto out_detach;
	att_facts(s, false, &tfacts);
	att_facts(s, true, &hfacts);
	if (cg_compile(prog, &info, &layout, &tfacts, CG_SIDE_TARGET, keep, &tobj, &d) ||
	    cg_compile(prog, &info, &layout, &hfacts, CG_SIDE_HOST, keep, &hobj, &d)) {
		diag_print(&d, stderr);
		goto out_detach;
	}
	if (o.debug) {
		dump_debug(o.debug, &tobj, &hobj);
	} else if (keep) {
		dump_object(o.dump, &tobj);
		dump_object(o.dump, &hobj);
	}
	if (dry_run) {
		ret = 0;
		goto out;
	}
	FILE *outf = stdout;
	if (o.out_file && !(outf = fopen(o.out_file, "w"))) {
		diag_sys(NULL, "failed to open output file '%s': %s", o.out_file, strerror(errno));
		goto out_detach;
	}
	if (o.buffering >= 0)
		setvbuf(outf, NULL, o.buffering, 0);
	else if (outf != stdout)
		setvbuf(outf, NULL, _IOLBF, 0);
	if (o.json && !o.quiet)
		fprintf(outf, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n", nprobes);
	else if (!o.quiet)
		fprintf(outf, "Attaching %d probe%s...\n", nprobes, nprobes == 1 ? "" : "s");
	fflush(outf);
	ret = 255;
	if (att_install(s, &layout, &tobj, &hobj))
		goto out_detach;
	struct out out;
	out_init(&out, outf, &info, &layout, att_data(s));
	out.json = o.json;
	out.diags = &d; /* -k warnings quote the script */
	/* what the target writes into shared memory is checked (output/trust.c) */
	out_bad_init(s->has_target ? s->t.pid : 0);
	out_map_ops_from(&out, prog);
	set_builtin_facts(s, &o);
	/* comm/uid/gid are cached per thread; the poll notices changes */
	if (s->has_target && tobj.ids_used && att_ids_open(&ids, s->t.pid, tobj.ids_used))
		fprintf(stderr, "WARNING: pid %d: cannot read /proc/%d/task: comm, uid and gid "
				"keep the values each thread first showed\n",
			s->t.pid, s->t.pid);
	sym_setup(s); /* names for usym()/func, kept after the target exits */
	if (o.dump && !strcmp(o.dump, "sites"))
		att_dump_sites(s, stderr, site_name);
	att_run_host(s, &hobj, "BEGIN");
	/* bpftrace's runtime test engine waits for this line before it runs a
	 * test's AFTER command; ubt prints it where bpftrace does: once the
	 * probes are live, before BEGIN's output (bpftrace prints that when it
	 * starts polling), so that the engine drives ubt unchanged
	 * (tests/upstream).  Otherwise BEGIN's output is printed before the
	 * probes can write any. */
	bool notify = getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED") != NULL;
	if (!notify)
		out_drain(&out);
	if (att_arm(s)) {
		out_fini(&out);
		goto out_detach;
	}
	if (notify)
		fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stderr);
	if (o.verbose && s->has_target) {
		/* the script's sites; ubt's own (signal actions, the unwinder's
		 * lookups, the loader) are said apart */
		int ntraps = 0, nown = 0;
		for (int i = 0; i < s->nsites; i++) {
			if (s->sites[i].internal) {
				nown++;
				continue;
			}
			ntraps += s->sites[i].plan.kind == ARCH_PATCH_INT3;
		}
		int nscript = s->nsites - nown;
		fprintf(stderr, "ubt: %d site%s patched (%d with a breakpoint); threads stopped for "
			"%.3f ms (%d threads)\n",
			nscript, nscript == 1 ? "" : "s", ntraps, s->attach_stop_ns / 1e6,
			s->attach_nthreads);
		if (nown)
			fprintf(stderr, "ubt: %d site%s of ubt's own patched\n", nown,
				nown == 1 ? "" : "s");
	}
	struct timers timers;
	timers_setup(&timers, s, &hobj);
	trace_loop(s, &out, &timers, ids);
	out_drain(&out);
	att_detach(s);
	att_watchdog_stop(s);
	if (o.verbose && s->has_target && s->detach_stop_ns)
		fprintf(stderr, "ubt: threads stopped for %.3f ms while detaching\n",
			s->detach_stop_ns / 1e6);
	if (o.verbose && s->has_target)
		fprintf(stderr, "ubt: %llu probe hits through a breakpoint\n",
			(unsigned long long)((struct rt_shm_header *)att_data(s))->trap_hits);
	report_target_death(s); /* (before end_child: our own SIGTERM is not news) */
	end_child(s);
	/* what the probes wrote up to the detach; after an exit() record it is
	 * dropped, and then END prints again, as in bpftrace */
	out_drain(&out);
	out.finalized = false;
	att_run_host(s, &hobj, "END");
	out_drain(&out);
	out_report_lost(&out);
	out_report_map_drops(&out);
	out_report_skipped(&out);
	att_ret_report(s, o.verbose);
	/* bpftrace prints these two lines on stdout even with -o */
	fputs("\n\n", stdout);
	fflush(stdout);
	out_print_maps(&out);
	out_fini(&out);
	if (outf != stdout)
		fclose(outf);
	/* exit(code); 1 when the target wrote nonsense into shared memory */
	ret = ((struct rt_shm_header *)att_data(s))->exit_req
		      ? ((struct rt_shm_header *)att_data(s))->exit_code & 0xff : 0;
	out_bad_summary();
	if (out_bad_count() && !ret)
		ret = 1;
out_detach:
	if (ret) {
		att_detach(s);
		att_watchdog_stop(s);
	}
out:
	if (s)
		att_close(s);
	att_ids_close(ids);
	cg_object_free(&tobj);
	cg_object_free(&hobj);
	cg_layout_free(&layout);
	sema_info_free(&info);
	if (prog)
		ast_free(prog);
	diag_free(&d);
	free(src);
	for (char **a = cargv; a && *a; a++)
		free(*a);
	free(cargv);
	return ret;
}
