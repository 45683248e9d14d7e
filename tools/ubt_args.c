/*
 * ubt_args.c - the command line and the BPFTRACE_* environment, read as
 * bpftrace 0.17 reads them, so that its callers and its users' habits work
 * unchanged:
 *
 *   ubt script.bt -c ./prog 10 20     options anywhere (GNU getopt permutes):
 *                                     `-c ./prog` is an option, 10 and 20
 *                                     are $1 and $2
 *   ubt -p a1111 ...                  ERROR: pid 'a1111' is not a valid decimal number
 *   ubt -e ''                         ERROR: USAGE: filename or -e 'program' required.
 *   ubt -d / -dd                      bpftrace's dry run with debug output
 *   ubt -d sites / --dump sites       ubt's dump of one stage, then the run:
 *                                     -d takes the next word when it names a
 *                                     stage (a script file named `ast` is
 *                                     ./ast, as for bpftrace 0.20's -d STAGE)
 *   BPFTRACE_MAP_KEYS_MAX=many ubt    ERROR: Env var 'BPFTRACE_MAP_KEYS_MAX' did
 *                                     not contain a valid uint64_t, or was zero-valued.
 *
 * Pipeline position: first; tools/ubt.c calls ubt_parse_args() and
 * ubt_env_read() before anything else, and exits with the code they return.
 */
#include "ubt_args.h"
#include "ubt_compat.h"
#include "ubt_config.h"
#include "util/diag.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* Keep in step with man/ubt.8 (tests/e2e/spdk_docs.test compares the options). */
void ubt_usage(FILE *f)
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
	      "    -c 'CMD'       run CMD with probes live before any of its code runs, and\n"
	      "                   trace it (CMD is split at spaces, as bpftrace does)\n"
	      "    -l [search]    list probes (uprobe, uretprobe, usdt; with -p those of the\n"
	      "                   process)\n"
	      "    -v             verbose messages (with -l: arguments of functions)\n"
	      "    -q             keep messages quiet\n"
	      "    -o file        redirect the program's output to file\n"
	      "    -f FORMAT      output format: text, json\n"
	      "    -B MODE        output buffering mode: none, line, full\n"
	      "    -d, -dd        dry run: print the AST, the typed AST and the LLVM IR\n"
	      "                   (-dd: also the machine code), attach nothing\n"
	      "    -d STAGE, --dump STAGE\n"
	      "                   print one stage, then run: ast, types, ir, asm (stdout);\n"
	      "                   sites, link, rsys (stderr: patched sites, linked code,\n"
	      "                   remote system calls in the target)\n"
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
	      "    -b, --btf      ignored (ubt reads types from DWARF)\n"
	      "    -I DIR, --include FILE\n"
	      "                   refused: declare structs in the script\n"
	      "\n"
	      "ENVIRONMENT:\n"
	      "    BPFTRACE_MAP_KEYS_MAX    [default: 4096] max keys in a map\n"
	      "    BPFTRACE_PERF_RB_PAGES   [default: 64] pages of each thread's event ring\n"
	      "    BPFTRACE_STRLEN          [default: 64] bytes read by str()\n"
	      "    BPFTRACE_CAT_BYTES_MAX   [default: 10k] max bytes read by cat()\n"
	      "    BPFTRACE_MAX_PROBES      [default: 512] max number of probes\n"
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

/*
 * -p PID, checked as bpftrace's parse_pid(): a decimal number (leading
 * blanks and a sign allowed, as strtol) in [1, 4194304], the kernel's
 * largest pid_max.
 */
static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end) {
		diag_sys(NULL, "pid '%s' is not a valid decimal number", s);
		return -EINVAL;
	}
	if (errno == ERANGE) {
		diag_sys(NULL, "pid '%s' outside of integer range", s);
		return -ERANGE;
	}
	if (v < 1 || v > 4 * 1024 * 1024) {
		diag_sys(NULL, "pid '%s' out of valid pid range [1,%d]", s, 4 * 1024 * 1024);
		return -ERANGE;
	}
	*pid = (pid_t)v;
	return 0;
}

enum {
	OPT_DRY_RUN = 1000,
	OPT_INFO,
	OPT_INCLUDE,
	OPT_USDT_FILE,
	OPT_NO_WARNINGS,
	OPT_UNSAFE,
	OPT_DUMP,
	OPT_BTF,
};

/* The stages of --dump and -d STAGE, in the order they end; index i is bit 1 << i. */
static const char *const dump_stages[] = {"ast", "types", "ir", "asm", "sites", "link", "rsys",
					  NULL};

/* The enum ubt_dump bit of a stage name, 0 if none. */
static unsigned dump_bit(const char *stage)
{
	for (int i = 0; dump_stages[i]; i++)
		if (!strcmp(stage, dump_stages[i]))
			return 1u << i;
	return 0;
}

static int check_dump(const char *stage, unsigned *dump)
{
	unsigned bit = dump_bit(stage);
	if (!bit) {
		diag_sys(NULL, "--dump: unknown stage '%s' (ast, types, ir, asm, sites, link, rsys)",
			 stage);
		return -EINVAL;
	}
	*dump |= bit;
	return 0;
}

/*
 * -d: bpftrace 0.17's debug dry run (-d, -dd), or ubt's -d STAGE when the
 * option stands alone and the next word names a stage (that word is then
 * taken, as getopt takes an option's argument).  A third d is bpftrace's
 * usage error (it wraps around to "none").
 */
static int read_debug(int argc, char **argv, struct options *o)
{
	unsigned bit;
	if (!strcmp(argv[optind - 1], "-d") && optind < argc && (bit = dump_bit(argv[optind]))) {
		o->dump |= bit;
		optind++;
		return 0;
	}
	if (++o->debug > 2) {
		ubt_usage(stderr);
		return 1;
	}
	return 0;
}

/* getopt's loop: 0, or the exit code. */
static int read_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"unsafe", no_argument, NULL, OPT_UNSAFE},
		{"dump", required_argument, NULL, OPT_DUMP},
		{"info", no_argument, NULL, OPT_INFO},
		/* bpftrace's interface: accepted so that its callers run unchanged */
		{"include", required_argument, NULL, OPT_INCLUDE},
		{"usdt-file-activation", no_argument, NULL, OPT_USDT_FILE},
		{"no-warnings", no_argument, NULL, OPT_NO_WARNINGS},
		{"btf", no_argument, NULL, OPT_BTF},
		{NULL, 0, NULL, 0},
	};
	int c;
	/* no '+': options may follow the script and its arguments, as in bpftrace */
	while ((c = getopt_long(argc, argv, "dbB:f:e:hlp:vqc:Vo:I:k", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': o->program = optarg; break;
		case 'p':
			if (parse_pid(optarg, &o->pid))
				return 1;
			break;
		case 'c': o->cmd = optarg; break;
		case 'q': o->quiet = true; break;
		case 'f':
			if (!strcmp(optarg, "json")) {
				o->json = true;
			} else if (strcmp(optarg, "text")) {
				diag_sys(NULL, "Invalid output format \"%s\"\nValid formats: 'text', 'json'",
					 optarg);
				return 1;
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
				diag_sys(NULL, "USAGE: -B must be either 'line', 'full', or 'none'.");
				return 1;
			}
			break;
		case 'd':
			if (read_debug(argc, argv, o))
				return 1;
			break;
		case OPT_DUMP:
			if (check_dump(optarg, &o->dump))
				return 1;
			break;
		case 'v': o->verbose++; break;
		case 'k':
			if (++o->helper_checks > 2) { /* -k, -kk; -kkk is bpftrace's usage error */
				ubt_usage(stderr);
				return 1;
			}
			break;
		case 'l': o->list = true; break;
		case 'b':
		case OPT_BTF: break; /* bpftrace: BTF is used when present; ubt reads DWARF */
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_UNSAFE: o->unsafe = true; break;
		case OPT_INFO: ubt_print_info(stdout); exit(0);
		case 'I': /* header search path, for #include in scripts */
		case OPT_INCLUDE:
			diag_sys(NULL, "%s: #include of C headers is not supported; declare the "
				 "structs in the script", c == 'I' ? "-I" : "--include");
			return 1;
		case OPT_USDT_FILE: break;
		case OPT_NO_WARNINGS: o->no_warnings = true; break;
		case 'h': ubt_usage(stdout); exit(0);
		case 'V':
			if (o->as_bpftrace) /* callers check the language level they can use */
				printf("bpftrace v%s (ubt v%s)\n", UBT_BPFTRACE_VERSION, UBT_VERSION);
			else
				printf("ubt v%s\n", UBT_VERSION);
			exit(0);
		default: ubt_usage(stderr); return 1;
		}
	}
	return 0;
}

int ubt_parse_args(int argc, char **argv, struct options *o)
{
	const char *base = strrchr(argv[0], '/');
	o->as_bpftrace = !strcmp(base ? base + 1 : argv[0], "bpftrace");
	o->buffering = -1;
	int ret = read_options(argc, argv, o);
	if (ret)
		return ret;
	if (argc == 1) {
		ubt_usage(stderr);
		return 1;
	}
	if (o->verbose && o->debug) {
		diag_sys(NULL, "USAGE: Use either -v or -d.");
		return 1;
	}
	if (o->pid && o->cmd) {
		diag_sys(NULL, "USAGE: Cannot use both -c and -p.");
		ubt_usage(stderr);
		return 1;
	}
	if (o->list) {
		/* bpftrace: no search is "*:*", and so is "*"; at most one */
		if (optind < argc - 1) {
			ubt_usage(stderr);
			return 1;
		}
		o->search_given = optind < argc;
		o->search = optind < argc ? argv[optind] : "*:*";
		if (!strcmp(o->search, "*"))
			o->search = "*:*";
		return 0;
	}
	/* -e '' is no program, as in bpftrace */
	if (o->program && !*o->program)
		o->program = NULL;
	if (!o->program && optind == argc) {
		diag_sys(NULL, "USAGE: filename or -e 'program' required.");
		return 1;
	}
	if (!o->program)
		o->file = argv[optind++];
	/* the remaining words are the positional parameters */
	o->params = argv + optind;
	o->nparams = argc - optind;
	return 0;
}

/*
 * A BPFTRACE_* number as bpftrace reads it (an istream >> uint64_t):
 * leading blanks, an optional sign, digits, anything after them ignored
 * ("12abc" is 12, "-1" wraps to 2^64 - 1).  Empty or no digits is an error.
 */
static int env_u64(const char *name, uint64_t *dest)
{
	const char *v = getenv(name);
	if (!v)
		return 0;
	const char *p = v;
	while (isspace((unsigned char)*p))
		p++;
	bool neg = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	if (!isdigit((unsigned char)*p)) {
		diag_sys(NULL, "Env var '%s' did not contain a valid uint64_t, or was zero-valued.",
			 name);
		return -EINVAL;
	}
	uint64_t n = strtoull(p, NULL, 10);
	*dest = neg ? -n : n;
	return 0;
}

/* A BPFTRACE_* switch: exactly "0" or "1". */
static int env_bool(const char *name)
{
	const char *v = getenv(name);
	if (v && strcmp(v, "0") && strcmp(v, "1")) {
		diag_sys(NULL, "Env var '%s' did not contain a valid value (0 or 1).", name);
		return -EINVAL;
	}
	return 0;
}

/* A value ubt can use: in [1, max]. */
static int env_range(const char *name, uint64_t v, uint64_t max)
{
	if (v >= 1 && v <= max)
		return 0;
	diag_sys(NULL, "Env var '%s' is %llu; ubt takes 1 to %llu", name, (unsigned long long)v,
		 (unsigned long long)max);
	return -ERANGE;
}

int ubt_env_read(struct env *e)
{
	uint64_t strlen_ = 64, unused;
	e->map_keys_max = 4096;
	e->perf_rb_pages = 64;
	e->max_probes = 512; /* bpftrace 0.17's default */
	/* in bpftrace's order, so that the first bad one is the one named */
	if (env_u64("BPFTRACE_STRLEN", &strlen_))
		return 1;
	if (strlen_ > 200) {
		/* bpftrace's limit (its BPF stack); ubt's strings live on the
		 * traced thread's stack, which may be small too */
		diag_sys(NULL, "'BPFTRACE_STRLEN' %llu exceeds the current maximum of 200 bytes.",
			 (unsigned long long)strlen_);
		return 1;
	}
	if (env_bool("BPFTRACE_NO_CPP_DEMANGLE") || env_u64("BPFTRACE_MAP_KEYS_MAX", &e->map_keys_max) ||
	    env_u64("BPFTRACE_MAX_PROBES", &e->max_probes) ||
	    env_u64("BPFTRACE_MAX_BPF_PROGS", &unused) || env_u64("BPFTRACE_LOG_SIZE", &unused) ||
	    env_u64("BPFTRACE_PERF_RB_PAGES", &e->perf_rb_pages) ||
	    env_u64("BPFTRACE_MAX_TYPE_RES_ITERATIONS", &unused) ||
	    env_u64("BPFTRACE_CAT_BYTES_MAX", &unused) || env_bool("BPFTRACE_NO_USER_SYMBOLS") ||
	    env_bool("BPFTRACE_CACHE_USER_SYMBOLS") || env_u64("BPFTRACE_NODE_MAX", &unused) ||
	    env_bool("BPFTRACE_VERIFY_LLVM_IR"))
		return 1;
	/* bpftrace fails later, when it creates the map or the ring */
	if (env_range("BPFTRACE_MAP_KEYS_MAX", e->map_keys_max, 1u << 30) ||
	    env_range("BPFTRACE_PERF_RB_PAGES", e->perf_rb_pages, 1u << 18))
		return 1;
	return 0;
}

/*
 * -c CMD: the words of CMD, split at each space as bpftrace 0.17 splits
 * them, no shell rules: `-c "./t 'A'"` passes 'A' with its quotes, two
 * spaces make an empty word, a trailing space none.  NULL-terminated, or
 * NULL (after the message) when CMD has no command.
 */
char **ubt_split_cmd(const char *cmd)
{
	size_t n = 0, cap = 8;
	char **argv = xcalloc(cap, sizeof(char *));
	for (const char *p = cmd; *p;) {
		const char *sp = strchr(p, ' ');
		size_t len = sp ? (size_t)(sp - p) : strlen(p);
		if (n + 2 > cap)
			argv = xrealloc(argv, (cap *= 2) * sizeof(char *));
		argv[n++] = xstrndup(p, len);
		argv[n] = NULL;
		p += len + (sp != NULL);
	}
	if (n == 0 || !*argv[0]) {
		diag_sys(NULL, "Failed to fork child: path '%s' does not exist or is not executable",
			 n ? argv[0] : "");
		for (size_t i = 0; i < n; i++)
			free(argv[i]);
		free(argv);
		return NULL;
	}
	return argv;
}
