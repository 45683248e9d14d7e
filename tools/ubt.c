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
#include "ubt_compat.h"
#include "attach/attach.h"
#include "codegen/codegen.h"
#include "output/output.h"
#include "output/stack.h"
#include "output/sym.h"
#include "parser/ast.h"
#include "parser/sema.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

struct options {
	const char *program; /* -e */
	const char *file;    /* script path */
	pid_t pid;
	const char *cmd;
	bool quiet, dry_run, verbose, list, unsafe;
	const char *dump; /* -d */
	bool json;            /* -f json */
	const char *out_file; /* -o */
	int buffering;        /* -B: _IONBF, _IOLBF, _IOFBF; -1 = default */
	char **params;    /* words after the script: positional parameters $1.. */
	int helper_checks; /* -k: 1, -kk: 2 (bpftrace's helper error warnings) */
	int nparams;
	bool no_warnings; /* --no-warnings */
};

static volatile sig_atomic_t stop_requested, print_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		print_requested = 1;
	else
		stop_requested = 1;
}

/* Keep in step with man/ubt.8 (tests/e2e/spdk_docs.test compares the options). */
static void usage(FILE *f)
{
	fputs("USAGE:\n"
	      "    ubt [options] filename [ARG ...]\n"
	      "    ubt [options] - <stdin input>\n"
	      "    ubt [options] -e 'program' [ARG ...]   (ARGs are $1, $2, ...; $# counts them)\n"
	      "    ubt -l [-v] [-p PID] [search]\n"
	      "\n"
	      "OPTIONS:\n"
	      "    -e 'program'   execute this program\n"
	      "    -p PID         trace the process PID (it keeps running afterwards);\n"
	      "                   __EXE__ and __PID__ in the script name its executable and PID\n"
	      "    -c 'CMD'       run CMD with probes live before its main() and trace it\n"
	      "    -l [search]    list probes (uprobe, usdt; with -p those of the process)\n"
	      "    -v             verbose messages (with -l: arguments of functions)\n"
	      "    -q             keep messages quiet\n"
	      "    -o file        redirect the program's output to file\n"
	      "    -f FORMAT      output format: text, json\n"
	      "    -B MODE        output buffering mode: none, line, full\n"
	      "    -d STAGE       dump a stage: ast, types, ir, asm\n"
	      "    --dry-run      check and compile the script, attach nothing\n"
	      "    --unsafe       allow unsafe builtin functions (system)\n"
	      "    -k             warn per event when a map update fails (a full map)\n"
	      "    -kk            also warn per event when a read of the target's memory fails\n"
	      "    --info         print what this machine supports (ptrace, Yama, rseq, LLVM)\n"
	      "    -h, --help     show this help message\n"
	      "    -V, --version  ubt version\n"
	      "\n"
	      "ACCEPTED FOR BPFTRACE'S CALLERS:\n"
	      "    --usdt-file-activation\n"
	      "                   ignored (semaphores of the traced process are activated)\n"
	      "    --no-warnings  disable all warning messages\n"
	      "    -I DIR, --include FILE\n"
	      "                   refused: declare structs in the script\n"
	      "\n"
	      "ENVIRONMENT:\n"
	      "    BPFTRACE_MAP_KEYS_MAX    [default: 4096] max keys in a map\n"
	      "    BPFTRACE_PERF_RB_PAGES   [default: 16] pages of the event ring\n"
	      "    BPFTRACE_STRLEN          [default: 64] bytes read by str()\n"
	      "    BPFTRACE_NO_CPP_DEMANGLE [default: 0] disable C++ symbol demangling\n"
	      "\n"
	      "EXAMPLES:\n"
	      "ubt -p 1234 -e 'uprobe:/usr/bin/prog:handle { @calls = count(); }'\n"
	      "    count calls of handle() in process 1234 until Ctrl-C\n"
	      "ubt -c './prog 10' -e 'uprobe:./prog:f { @[arg0] = count(); }'\n"
	      "    run ./prog and count calls of f() by first argument\n"
	      "ubt -p $(pidof nvmf_tgt) scripts/bpf/send_msg.bt\n"
	      "    run an SPDK script as it is\n"
	      "\n"
	      "See man ubt.\n",
	      f);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"dry-run", no_argument, NULL, 1},
		{"unsafe", no_argument, NULL, 6},
		/* bpftrace's interface: accepted so that its callers run unchanged */
		{"info", no_argument, NULL, 2},
		{"include", required_argument, NULL, 3},
		{"usdt-file-activation", no_argument, NULL, 4},
		{"no-warnings", no_argument, NULL, 5},
		{NULL, 0, NULL, 0},
	};
	int c;
	o->buffering = -1;
	while ((c = getopt_long(argc, argv, "+e:p:c:qd:vhVlf:o:B:I:k", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': o->program = optarg; break;
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0) {
				diag_sys(NULL, "pid '%s' is not a valid process id", optarg);
				return -1;
			}
			o->pid = (pid_t)v;
			break;
		}
		case 'c': o->cmd = optarg; break;
		case 'q': o->quiet = true; break;
		case 'f':
			if (!strcmp(optarg, "json")) {
				o->json = true;
			} else if (strcmp(optarg, "text")) {
				diag_sys(NULL, "Invalid output format \"%s\"\nValid formats: 'text', 'json'",
					 optarg);
				return -1;
			}
			break;
		case 'o': o->out_file = optarg; break;
		case 'B':
			if (!strcmp(optarg, "none")) {
				o->buffering = _IONBF;
			} else if (!strcmp(optarg, "line")) {
				o->buffering = _IOLBF;
			} else if (!strcmp(optarg, "full")) {
				o->buffering = _IOFBF;
			} else {
				diag_sys(NULL, "Invalid buffering mode: %s", optarg);
				return -1;
			}
			break;
		case 'd': o->dump = optarg; break;
		case 'v': o->verbose = true; break;
		case 'k': o->helper_checks++; break; /* -k, -kk */
		case 'l': o->list = true; break;
		case 1: o->dry_run = true; break;
		case 6: o->unsafe = true; break;
		case 2: ubt_print_info(stdout); exit(0);
		case 'I': /* header search path, for #include in scripts */
		case 3:   /* --include FILE */
			diag_sys(NULL, "%s: #include of C headers is not supported; declare the "
				 "structs in the script", c == 'I' ? "-I" : "--include");
			return -1;
		case 4:   /* --usdt-file-activation */
			break;
		case 5: o->no_warnings = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("ubt v%s\n", UBT_VERSION); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (!o->program && optind < argc)
		o->file = argv[optind++];
	if (o->list)
		return 0; /* the optional argument is a search pattern */
	if (!o->program && !o->file) {
		usage(stderr);
		return -1;
	}
	/* bpftrace: the remaining words are the positional parameters */
	o->params = argv + optind;
	o->nparams = argc - optind;
	if (o->pid && o->cmd) {
		diag_sys(NULL, "-p and -c cannot be used together");
		return -1;
	}
	return 0;
}

static uint32_t env_u32(const char *name, uint32_t def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*end || n == 0 || n > (1u << 30)) {
		diag_sys(NULL, "environment variable %s=%s is not a valid number; using %u", name,
			 v, def);
		return def;
	}
	return (uint32_t)n;
}

/*
 * BPFTRACE_STRLEN: bpftrace 0.17 refuses more than 200 bytes (its strings
 * live on the 512-byte BPF stack).  ubt keeps the limit for another reason:
 * a probe's strings live on the stack of the target's thread it runs in,
 * which may be small (a sigaltstack, a coroutine).  Same error and exit
 * code as bpftrace.
 */
static int check_strlen_env(void)
{
	const char *v = getenv("BPFTRACE_STRLEN");
	char *end;
	if (!v)
		return 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (!*v || *end) { /* bpftrace 0.17 accepts 0 (and then uses 64) */
		diag_sys(NULL, "Env var 'BPFTRACE_STRLEN' did not contain a valid uint64_t, or was "
			       "zero-valued.");
		return -1;
	}
	if (n > 200) {
		diag_sys("strings live on the stack of the traced thread, which ubt must not "
			 "overflow", "'BPFTRACE_STRLEN' %llu exceeds the current maximum of 200 bytes.",
			 n);
		return -1;
	}
	return 0;
}

static void set_cg_options(struct cg_options *co)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	co->ncpu = ncpu > 0 ? (uint32_t)ncpu : 1;
	co->map_keys_max = env_u32("BPFTRACE_MAP_KEYS_MAX", 4096);
#ifdef UBT_SMALL_BUFFERS
	co->ring_size = 4096;
	co->nthreads = 16;
#else
	co->ring_size = env_u32("BPFTRACE_PERF_RB_PAGES", 64) * 4096u; /* bpftrace's default */
	co->nthreads = 256;
#endif
}

static int count_probes(const struct ast_node *prog, const struct att_session *s)
{
	int n = s->npoints;
	for (int i = 0; i < prog->nkids; i++)
		for (int j = 0; j < prog->kids[i]->nkids; j++) {
			const char *p = prog->kids[i]->kids[j]->attach.provider;
			if (!strcmp(p, "BEGIN") || !strcmp(p, "END") || !strcmp(p, "interval") ||
			    !strcmp(p, "profile"))
				n++;
		}
	return n;
}

/*
 * profile probes are called by the runtime's signal handler, with the
 * interrupted registers (attach/profile.c): a probe block cannot also be a
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

static char **split_cmd(const char *cmd)
{
	wordexp_t we;
	if (wordexp(cmd, &we, WRDE_NOCMD) || we.we_wordc == 0) {
		diag_sys(NULL, "cannot parse the command '%s'", cmd);
		return NULL;
	}
	char **argv = xcalloc(we.we_wordc + 1, sizeof(char *));
	for (size_t i = 0; i < we.we_wordc; i++)
		argv[i] = xstrdup(we.we_wordv[i]);
	wordfree(&we);
	return argv;
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
		/* a probed library loaded after attach (attach/dlopen.c) */
		if (s->has_target)
			att_dl_poll(s, sym_late_sites);
		/* comm/uid/gid caches: raise ids_gen when a thread changed (attach/ids.c) */
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
	if (parse_args(argc, argv, &o) || check_strlen_env())
		return 1;
	if (o.list)
		return att_list(o.program ? o.program : o.file, o.pid, o.verbose, stdout) ? 1 : 0;
	if (o.program) {
		src = xstrdup(o.program);
		len = strlen(src);
	} else if (read_file(strcmp(o.file, "-") ? o.file : "/dev/stdin", &src, &len)) {
		diag_sys(NULL, "failed to open file '%s': %s", o.file, strerror(errno));
		return 1;
	}
	/* SPDK's scripts name the target __EXE__ and __PID__ (scripts/bpftrace.sh) */
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
	diag_init(&d, o.program ? "stdin" : o.file, src, len);
	if (!(s = att_session_new()))
		goto out;
	if (parse_script(src, len, &d, &prog)) {
		diag_print(&d, stderr);
		goto out;
	}
	prog->prog->nparams = o.nparams;
	prog->prog->params = xcalloc(o.nparams ? o.nparams : 1, sizeof(char *));
	for (int i = 0; i < o.nparams; i++)
		prog->prog->params[i] = xstrdup(o.params[i]);
	if (o.dump && !strcmp(o.dump, "ast"))
		ast_dump(prog, false, stdout);
	sema_unsafe = o.unsafe;
	/* the `probe` builtin's longest name at each probe's sites (names.c) */
	att_probe_name_sizes(prog, o.pid);
	/* a uprobe's `args`: typed from the binary's DWARF before sema */
	if (att_dwarf_args(prog, o.pid, &d) || sema_check(prog, &d, &info)) {
		diag_print(&d, stderr);
		goto out;
	}
	if (!o.no_warnings)
		diag_print(&d, stderr); /* warnings */
	if (o.dump && !strcmp(o.dump, "types"))
		ast_dump(prog, true, stdout);
	s->pid_hint = o.pid;
	if (att_resolve(prog, s, &d)) {
		diag_print(&d, stderr);
		goto out;
	}
	if (check_profile(prog))
		goto out;
	int nprobes = count_probes(prog, s);
	if (nprobes == 0) {
		printf("No probes to attach\n");
		goto out;
	}
	if (s->npoints && !o.pid && !o.cmd && !o.dry_run) {
		diag_sys("ubt traces processes: add -p PID or -c 'CMD'",
			 "uprobe probes need a process to attach to");
		goto out;
	}
	if (att_profile_wanted(prog) && !o.pid && !o.cmd && !o.dry_run) {
		diag_sys("ubt samples the threads of one process: add -p PID or -c 'CMD'",
			 "profile probes need a process to sample");
		goto out;
	}
	struct cg_options co;
	set_cg_options(&co);
	co.helper_checks = o.no_warnings ? 0 : o.helper_checks; /* -k, -kk */
	cg_layout(&info, &co, &layout);
	bool keep = o.dump && (!strcmp(o.dump, "ir") || !strcmp(o.dump, "asm"));
	struct cg_facts tfacts, hfacts;
	if (!o.dry_run && (o.pid || o.cmd)) {
		if (o.cmd && !(cargv = split_cmd(o.cmd)))
			goto out;
		if (att_open(s, o.pid, cargv)) {
			ret = o.pid ? 1 : 255;
			goto out;
		}
	}
	/* profile probes: a real-time signal the target leaves alone (attach/profile.c) */
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
	if (keep) {
		dump_object(o.dump, &tobj);
		dump_object(o.dump, &hobj);
	}
	if (o.dry_run) {
		ret = 0;
		goto out;
	}
	install_signals();
	FILE *outf = stdout;
	if (o.out_file && !(outf = fopen(o.out_file, "w"))) {
		diag_sys(NULL, "failed to open output file '%s': %s", o.out_file, strerror(errno));
		goto out_detach;
	}
	if (o.buffering >= 0)
		setvbuf(outf, NULL, o.buffering, 0);
	else if (outf != stdout)
		setvbuf(outf, NULL, _IOLBF, 0);
	if (o.json)
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
	att_run_host(s, &hobj, "BEGIN");
	out_drain(&out); /* BEGIN's output comes before any probe's */
	if (att_arm(s)) {
		out_fini(&out);
		goto out_detach;
	}
	if (o.verbose && s->has_target) {
		int ntraps = 0;
		for (int i = 0; i < s->nsites; i++)
			ntraps += s->sites[i].plan.kind == ARCH_PATCH_INT3;
		fprintf(stderr, "ubt: %d site%s patched (%d with a breakpoint); threads stopped for "
			"%.3f ms (%d threads)\n",
			s->nsites, s->nsites == 1 ? "" : "s", ntraps, s->attach_stop_ns / 1e6,
			s->attach_nthreads);
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
	att_run_host(s, &hobj, "END");
	out_drain(&out);
	out_report_lost(&out);
	out_report_map_drops(&out);
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
