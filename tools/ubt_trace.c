/*
 * ubt_trace.c - the trace: from an installed session (tools/ubt.c's stage
 * chain ends with att_install) to ubt's exit code.
 *
 *   start   output and symbols set up, -d link, -d sites, BEGIN, att_arm
 *   loop    drain the rings, run interval probes, watch the target, until
 *           exit(), SIGINT/SIGTERM, or the target's end
 *   finish  drain, att_detach, the -c child ended, END, the reports of
 *           lost events and bad records, the maps, exit()'s code
 *
 * The order of what is printed is bpftrace's: "Attaching N probes..."
 * (ubt.c), BEGIN's output, the events, END's output, two blank lines on
 * stdout, the maps.
 */
#include "ubt_run.h"
#include "attach/attach.h"
#include "attach/features/features.h"
#include "codegen/codegen.h"
#include "output/output.h"
#include "output/stack.h"
#include "output/sym.h"
#include "parser/ast.h"
#include "util/util.h"

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

void ubt_signals_install(void)
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
	if (!att_target_is_child(s) || att_target_wait_exit(s, 0, &status) == 1)
		return;
	kill(att_target_pid(s), SIGTERM);
	if (att_target_wait_exit(s, 1000, &status) != 1) {
		kill(att_target_pid(s), SIGKILL);
		att_target_wait_exit(s, -1, &status);
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
	if (!att_has_target(s) || att_target_wait_exit(s, 0, &st) != 1 || st == -1 ||
	    !WIFSIGNALED(st))
		return;
	int sig = WTERMSIG(st);
	const char *abbrev = sigabbrev_np(sig);
	fprintf(stderr, "WARNING: pid %d was killed by signal %d (%s%s%s%s)%s\n", att_target_pid(s), sig,
		abbrev ? "SIG" : "", abbrev ? abbrev : "", abbrev ? ": " : "", strsignal(sig),
		WCOREDUMP(st) ? ", core dumped" : "");
}

static void sym_alias_sites(const struct att_session *s, int first);
static char *site_name(uint64_t addr);

/* -d sites: the late sites too (sym_late_sites has the dlopen poll's signature) */
static bool dump_late_sites;

/* Sites armed in a library loaded after attach: its symbols, its trampolines. */
static void sym_late_sites(const struct att_session *s, int first)
{
	out_sym_init(att_target_pid(s));
	sym_alias_sites(s, first);
	out_stack_loaded(); /* ustack walks through the new library */
	if (dump_late_sites)
		att_dump_sites(s, first, stderr, site_name);
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
		if (att_has_target(s)) {
			/* exit is cheap to see (a pidfd); exec needs /proc/PID/maps */
			int status;
			if (att_target_wait_exit(s, 0, &status) == 1)
				break;
		}
		/* a probed library loaded after attach (attach/features/dlopen.c) */
		if (att_has_target(s))
			att_dl_poll(s, sym_late_sites);
		/* comm/uid/gid caches: raise ids_gen when a thread changed (attach/target/ids.c) */
		att_ids_poll(ids, &h->ids_gen);
		if (att_has_target(s) && ++checks % 20 == 0) {
			int st = att_check_target(s);
			if (st == ATT_EXECED) {
				/* a -c command still runs to its end, as under bpftrace */
				fprintf(stderr, "WARNING: pid %d called exec(); its probes went with the "
						"old program image\n", att_target_pid(s));
				if (!att_target_is_child(s))
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

/* What builtins read from the shared header: nsecs, elapsed, cpid, cgroup, ids_gen. */
static void set_builtin_facts(struct att_session *s, const struct options *o, uint64_t start_ns)
{
	struct rt_shm_header *h = (struct rt_shm_header *)att_data(s);
	h->start_ns = start_ns;
	if (att_has_target(s) && o->cmd)
		h->cpid = (uint32_t)att_target_pid(s);
	h->cgroup_id = att_cgroup_id(att_has_target(s) ? att_target_pid(s) : getpid());
	if (att_has_target(s))
		att_user_idmaps(att_target_pid(s), h);
	h->ids_gen = 1; /* a thread's empty comm/uid/gid cache has gen 0 */
}

/*
 * Symbolization (output/sym.c): a snapshot of the target's mappings, and
 * each trampoline as an alias of its site (func in a uprobe records an
 * address inside the trampoline).
 */
static void sym_setup(const struct att_session *s)
{
	if (!att_has_target(s))
		return;
	out_sym_init(att_target_pid(s));
	out_stack_prepare(); /* ustack: before arming */
	sym_alias_sites(s, 0);
}

/* -d sites: a site as "symbol+offset (file)", for att_dump_sites() */
static char *site_name(uint64_t addr)
{
	char *sym = out_sym_text(addr, true);
	const struct out_sym_func *funcs;
	int nfuncs;
	uint64_t bias;
	void *elf;
	if (!strncmp(sym, "0x", 2) && !out_sym_funcs(addr, &funcs, &nfuncs, &bias, &elf)) {
		/* no symbol (a stripped binary): the address readelf shows */
		free(sym);
		sym = xasprintf("no symbol, 0x%llx in the file", (unsigned long long)(addr - bias));
	}
	char *name = xasprintf("%s (%s)", sym, out_sym_path(addr));
	free(sym);
	return name;
}

/* Each trampoline from sites[first] on is an alias of its site (func). */
static void sym_alias_sites(const struct att_session *s, int first)
{
	int n = att_site_count(s);
	for (int i = first; i < n; i++) {
		struct att_site_info si, sj;
		att_site_get(s, i, &si);
		uint64_t lo = si.tramp, hi = lo + 4096;
		for (int j = 0; j < n; j++) {
			att_site_get(s, j, &sj);
			if (sj.tramp > lo && sj.tramp < hi)
				hi = sj.tramp;
		}
		if (lo)
			out_sym_alias(lo, hi, si.addr);
	}
}

/* -v: the script's sites; ubt's own (signal actions, the unwinder's
 * lookups, the loader) are said apart */
static void report_attach(const struct att_session *s)
{
	int n = att_site_count(s), ntraps = 0, nown = 0;
	for (int i = 0; i < n; i++) {
		struct att_site_info si;
		att_site_get(s, i, &si);
		if (si.own) {
			nown++;
			continue;
		}
		ntraps += si.breakpoint;
	}
	int nscript = n - nown;
	struct att_stop_times t;
	att_stop_times(s, &t);
	fprintf(stderr,
		"ubt: %d site%s patched (%d with a breakpoint); threads stopped for "
		"%.3f ms (%d threads)",
		nscript, nscript == 1 ? "" : "s", ntraps, t.attach_ns / 1e6, t.attach_nthreads);
	if (t.install_ns)
		fprintf(stderr, ", one of them %.3f ms before while ubt's code went in",
			t.install_ns / 1e6);
	fputc('\n', stderr);
	if (nown)
		fprintf(stderr, "ubt: %d site%s of ubt's own patched\n", nown, nown == 1 ? "" : "s");
}

/*
 * -v: where the time from start to probes live went: resolving the attach
 * points (with -p the process's libraries too), opening the target
 * (-c: starting the command), compiling (LLVM), and installing and arming (planning every site, the
 * runtime and trampolines in the target, the patches), of which threads were stopped the part
 * report_attach() gave.
 */
static void report_times(const struct run *r)
{
	uint64_t now;
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	fprintf(stderr,
		"ubt: probes live %.1f ms after start: resolve %.1f ms, open %.1f ms, "
		"compile %.1f ms, install and arm %.1f ms\n",
		(now - r->start_ns) / 1e6, (r->resolved_ns - r->start_ns) / 1e6,
		(r->opened_ns - r->resolved_ns) / 1e6, (r->compiled_ns - r->opened_ns) / 1e6,
		(now - r->compiled_ns) / 1e6);
}

/* -v: the detach's stop and the probe hits that took a breakpoint */
static void report_detach(struct att_session *s)
{
	struct att_stop_times t;
	att_stop_times(s, &t);
	if (t.detach_ns)
		fprintf(stderr, "ubt: threads stopped for %.3f ms while detaching\n",
			t.detach_ns / 1e6);
	fprintf(stderr, "ubt: %llu probe hits through a breakpoint\n",
		(unsigned long long)((struct rt_shm_header *)att_data(s))->trap_hits);
}

/*
 * The first part of the trace: the output and the symbols ready, BEGIN
 * run, the sites patched.  0, or 255 when arming failed.
 */
static int trace_start(struct run *r)
{
	struct att_session *s = r->s;
	out_init(&r->out, r->outf, &r->info, &r->layout, att_data(s));
	r->out.json = r->o.json;
	r->out.diags = &r->d; /* -k warnings quote the script */
	r->out.no_warnings = r->o.no_warnings;
	/* what the target writes into shared memory is checked (output/trust.c) */
	out_bad_init(att_target_pid(s));
	out_map_ops_from(&r->out, r->prog);
	set_builtin_facts(s, &r->o, r->start_ns);
	/* comm/uid/gid are cached per thread; the poll notices changes */
	pid_t pid = att_target_pid(s);
	if (pid && r->tobj.ids_used && att_ids_open(&r->ids, pid, r->tobj.ids_used))
		fprintf(stderr, "WARNING: pid %d: cannot read /proc/%d/task: comm, uid and gid "
				"keep the values each thread first showed\n",
			pid, pid);
	sym_setup(s); /* names for usym()/func, kept after the target exits */
	if (r->o.dump & UBT_DUMP_LINK)
		att_dump_link(s, stderr);
	if (r->o.dump & UBT_DUMP_SITES)
		att_dump_sites(s, 0, stderr, site_name);
	dump_late_sites = (r->o.dump & UBT_DUMP_SITES) != 0;
	att_run_host(s, &r->hobj, "BEGIN");
	/* bpftrace's runtime test engine waits for this line before it runs a
	 * test's AFTER command; ubt prints it where bpftrace does: once the
	 * probes are live, before BEGIN's output (bpftrace prints that when it
	 * starts polling), so that the engine drives ubt unchanged
	 * (tests/upstream).  Otherwise BEGIN's output is formatted before the
	 * probes can write any (its print()s see the maps as BEGIN left them)
	 * and printed once they are live, as bpftrace's: a script's
	 * `BEGIN { printf("live\n"); }` means the probes are in.  A -c
	 * command stands stopped until then: before it runs, as in bpftrace. */
	bool notify = getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED") != NULL;
	char *held = NULL;
	size_t nheld = 0;
	if (!notify && att_target_held(s)) {
		out_drain(&r->out);
	} else if (!notify) {
		FILE *f = r->out.f, *mem = open_memstream(&held, &nheld);
		if (mem)
			r->out.f = mem;
		out_drain(&r->out);
		if (mem) {
			fclose(mem);
			r->out.f = f;
		}
	}
	int armed = att_arm(s);
	if (nheld && !armed) { /* not when arming failed: the probes never went live */
		fwrite(held, 1, nheld, r->out.f);
		fflush(r->out.f);
	}
	free(held);
	if (armed) {
		out_fini(&r->out);
		return 255;
	}
	if (notify)
		fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stderr);
	if (r->o.verbose && att_has_target(s)) {
		report_attach(s);
		report_times(r);
	}
	return 0;
}

/*
 * The last part: what the probes wrote, the target restored, END run, the
 * reports and the maps printed.  Returns exit()'s code, 1 when the target
 * wrote nonsense into shared memory, else 0.
 */
static int trace_finish(struct run *r)
{
	struct att_session *s = r->s;
	struct out *out = &r->out;
	out_drain(out);
	att_detach(s);
	att_watchdog_stop(s);
	if (r->o.verbose && att_has_target(s))
		report_detach(s);
	report_target_death(s); /* (before end_child: our own SIGTERM is not news) */
	end_child(s);
	/* what the probes wrote up to the detach; after an exit() record it is
	 * dropped, and then END prints again, as in bpftrace */
	out_drain(out);
	out->finalized = false;
	att_run_host(s, &r->hobj, "END");
	out_drain(out);
	out_report_lost(out);
	out_report_map_drops(out);
	out_report_skipped(out);
	att_ret_report(s, r->o.verbose);
	/* bpftrace prints these two lines on stdout even with -o */
	fputs("\n\n", stdout);
	fflush(stdout);
	if (!r->no_exit_maps)
		out_print_maps(out);
	out_fini(out);
	if (r->outf != stdout)
		fclose(r->outf);
	/* exit(code); 1 when the target wrote nonsense into shared memory */
	const struct rt_shm_header *h = (const struct rt_shm_header *)att_data(s);
	int ret = h->exit_req ? h->exit_code & 0xff : 0;
	out_bad_summary();
	if (out_bad_count() && !ret)
		ret = 1;
	return ret;
}

/*
 * A script of bpftrace 0.25's lowercase `begin`/`end` probes and no other
 * probe ends after begin, as bpftrace does since 0.24; with uppercase
 * BEGIN/END only it waits for Ctrl-C, as 0.17 does (docs/compat.md).
 */
static bool ends_after_begin(const struct ast_node *prog)
{
	bool lower = false;
	for (int i = 0; i < prog->nkids; i++)
		for (int j = 0; j < prog->kids[i]->nkids; j++) {
			const struct ast_node *ap = prog->kids[i]->kids[j];
			const char *p = ap->attach.provider;
			if (!p || (strcmp(p, "BEGIN") && strcmp(p, "END")))
				return false;
			lower |= ap->str && (!strcmp(ap->str, "begin") || !strcmp(ap->str, "end"));
		}
	return lower;
}

int ubt_trace(struct run *r)
{
	int ret = trace_start(r);
	if (ret)
		return ret;
	if (ends_after_begin(r->prog))
		return trace_finish(r);
	struct timers timers;
	timers_setup(&timers, r->s, &r->hobj);
	trace_loop(r->s, &r->out, &timers, r->ids);
	return trace_finish(r);
}
