/*
 * ubt_compat.c - the command line's helpers for bpftrace's workflow, used
 * by ubt.c before the script reaches the parser:
 *
 *   ubt_subst_placeholders()  __EXE__ and __PID__ in a script run with -p,
 *                             as SPDK's scripts/bpftrace.sh substitutes them
 *                             before calling bpftrace, so that
 *                             `ubt -p PID send_msg.bt` works on SPDK's
 *                             scripts as they are;
 *   ubt_hint_spdk_maps()      a hint for an SPDK script run without its
 *                             generator, whose BEGIN block fills maps the
 *                             script only reads;
 *   ubt_print_info()          `ubt --info`: what this machine offers ubt
 *                             (ptrace permissions, Yama, rseq, kernel, LLVM);
 *   ubt_pid_from_paths()      the process a script without -p or -c names
 *                             through its probes' /proc/N/root/... paths
 *                             (kubectl-trace's runner).
 */
#include "ubt_compat.h"
#include "parser/ast.h"
#include "ubt_config.h"
#include "util/diag.h"
#include "util/util.h"

#include <Zydis/Zydis.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <llvm-c/Core.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Replaces every `word` in *src by `with` (a fresh buffer). */
static void replace_all(char **src, size_t *len, const char *word, const char *with)
{
	size_t wl = strlen(word), nl = strlen(with), n = 0;
	for (const char *p = *src; (p = strstr(p, word)); p += wl)
		n++;
	if (!n)
		return;
	size_t out_len = *len + n * nl - n * wl;
	char *out = xmalloc(out_len + 1), *o = out;
	const char *p = *src, *q;
	while ((q = strstr(p, word))) {
		memcpy(o, p, q - p);
		o += q - p;
		memcpy(o, with, nl);
		o += nl;
		p = q + wl;
	}
	strcpy(o, p);
	free(*src);
	*src = out;
	*len = out_len;
}

/*
 * `usdt:__EXE__:nvmf_tgt_state` -> `usdt:/usr/local/bin/nvmf_tgt:nvmf_tgt_state`
 * (the target's executable, as /proc/PID/exe names it) and `__PID__` -> the
 * pid.  Returns -errno when __EXE__ is used and the executable cannot be
 * read (the process is gone, or not ours to look at).
 */
int ubt_subst_placeholders(char **src, size_t *len, pid_t pid)
{
	char pidbuf[24];
	if (strstr(*src, "__EXE__")) {
		char link[64], exe[PATH_MAX];
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);
		if (n < 0)
			return -errno;
		exe[n] = 0;
		replace_all(src, len, "__EXE__", exe);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	replace_all(src, len, "__PID__", pidbuf);
	return 0;
}

/*
 * SPDK's nvmf.bt reads @target[state] and never writes it: SPDK's
 * scripts/bpftrace.sh appends a BEGIN block (scripts/bpf/gen_enums.sh)
 * that fills it with the enum's names.  `ubt -p PID nvmf.bt` (which
 * replaces __EXE__ itself) then fails with `Undefined map: @target`; the
 * hint says what is missing.
 */
void ubt_hint_spdk_maps(struct diags *d)
{
	for (int i = 0; i < d->n; i++) {
		struct diag *dg = &d->items[i];
		if (dg->level != DIAG_ERROR || dg->hint || strncmp(dg->msg, "Undefined map: @", 16))
			continue;
		diag_hint(dg, "the script reads %s and never writes it: an SPDK script gets such "
			      "maps from the BEGIN block SPDK's scripts/bpftrace.sh appends "
			      "(scripts/bpf/gen_enums.sh); run it through scripts/bpftrace.sh, or "
			      "add that block",
			  dg->msg + 15);
	}
}

/* One line of /proc/self/status, e.g. "CapEff:\t000001ffffffffff". */
static int status_field(const char *name, char *out, size_t size)
{
	char *text;
	size_t len;
	if (read_file("/proc/self/status", &text, &len))
		return -ENOENT;
	int ret = -ENOENT;
	size_t nl = strlen(name);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, name, nl) && line[nl] == ':') {
			snprintf(out, size, "%s", line + nl + 1 + strspn(line + nl + 1, " \t"));
			ret = 0;
			break;
		}
	free(text);
	return ret;
}

static void print_ptrace(FILE *f)
{
	char cap[64] = "";
	bool root = geteuid() == 0, cap_ptrace = false;
	if (!status_field("CapEff", cap, sizeof(cap)))
		cap_ptrace = (strtoull(cap, NULL, 16) >> 19) & 1; /* CAP_SYS_PTRACE */
	fprintf(f, "  user: %s (uid %d)%s\n", root ? "root" : "not root", (int)geteuid(),
		cap_ptrace ? ", CAP_SYS_PTRACE" : "");

	char *yama = NULL;
	size_t len;
	int scope = -1;
	if (!read_file("/proc/sys/kernel/yama/ptrace_scope", &yama, &len))
		scope = atoi(yama);
	free(yama);
	static const char *const what[] = {
		"0 (classic: processes of the same user)",
		"1 (restricted: only descendants without CAP_SYS_PTRACE)",
		"2 (admin-only: CAP_SYS_PTRACE needed)",
		"3 (no attach: ptrace disabled until reboot)",
	};
	if (scope < 0)
		fprintf(f, "  Yama ptrace_scope: not present (processes of the same user)\n");
	else
		fprintf(f, "  Yama ptrace_scope: %s\n", scope <= 3 ? what[scope] : "unknown");

	const char *p, *c;
	if (scope == 3) {
		p = c = "no (Yama ptrace_scope is 3)";
	} else if (cap_ptrace) {
		p = "yes, any process";
		c = "yes";
	} else if (scope >= 2) {
		p = c = "no (needs CAP_SYS_PTRACE: run as root)";
	} else if (scope == 1) {
		p = "no (Yama allows descendants only: run as root)";
		c = "yes";
	} else {
		p = "yes, processes of the same user";
		c = "yes";
	}
	fprintf(f, "  ubt -p PID: %s\n  ubt -c CMD: %s\n", p, c);
}

static void print_rseq(FILE *f)
{
	/* glibc >= 2.35 registers every thread's rseq area itself */
	unsigned long feature = getauxval(AT_RSEQ_FEATURE_SIZE);
	fprintf(f, "  rseq registered by libc: %s\n",
		__rseq_size ? "yes (per-CPU map slots)" : "no (shared map slots: slower)");
	/* struct rseq: cpu_id_start, cpu_id, rseq_cs, flags (20 bytes), then
	 * node_id at 20 and mm_cid at 24: a feature size of 28 has mm_cid */
	fprintf(f, "  rseq feature size: %lu%s\n", feature,
		feature >= 28 ? " (mm_cid: yes)" : " (mm_cid: no)");
}

void ubt_print_info(FILE *f)
{
	struct utsname u;
	unsigned maj, min, patch;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	uname(&u);
	fprintf(f, "System\n  OS: %s %s %s\n  Arch: %s\n  CPUs: %ld\n\n", u.sysname, u.release,
		u.version, u.machine, ncpu);

	LLVMGetVersion(&maj, &min, &patch);
	ZyanU64 zv = ZydisGetVersion();
	fprintf(f, "Build\n  version: v%s\n  LLVM: %u.%u.%u\n  Zydis: %u.%u.%u\n",
		UBT_VERSION, maj, min, patch, (unsigned)ZYDIS_VERSION_MAJOR(zv), (unsigned)ZYDIS_VERSION_MINOR(zv),
		(unsigned)ZYDIS_VERSION_PATCH(zv));
#ifdef UBT_SMALL_BUFFERS
	fprintf(f, "  small buffers (test build): yes\n");
#endif
	fprintf(f, "\nTracing (no kernel tracer used: probes are patched into the process)\n");
	print_ptrace(f);
	print_rseq(f);
	fprintf(f, "  probe types: uprobe, uretprobe, usdt, BEGIN, END\n");
}

/* N of a path /proc/N/root/..., /proc/N/cwd/... or /proc/N/exe; else 0. */
static pid_t proc_path_pid(const char *path)
{
	char *end;
	if (!path || strncmp(path, "/proc/", 6) || !isdigit((unsigned char)path[6]))
		return 0;
	long n = strtol(path + 6, &end, 10);
	if (n <= 0 || n > INT_MAX ||
	    !(!strncmp(end, "/root/", 6) || !strncmp(end, "/cwd/", 5) || !strcmp(end, "/exe")))
		return 0;
	return (pid_t)n;
}

/* How many processes other than pid map the file at path (its inode). */
static int others_mapping(pid_t pid, const char *path)
{
	struct stat st;
	DIR *d = opendir("/proc");
	int n = 0;
	if (!d)
		return 0;
	if (stat(path, &st)) {
		closedir(d);
		return 0;
	}
	for (struct dirent *e; (e = readdir(d));) {
		char maps[300], line[512];
		/* ubt itself maps libc and the libraries it links */
		if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == pid ||
		    atoi(e->d_name) == getpid())
			continue;
		snprintf(maps, sizeof(maps), "/proc/%s/maps", e->d_name);
		FILE *f = fopen(maps, "re");
		if (!f)
			continue;
		bool hit = false;
		while (!hit && fgets(line, sizeof(line), f)) {
			unsigned maj, min;
			unsigned long long ino;
			hit = sscanf(line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &min, &ino) == 3 &&
			      ino == (unsigned long long)st.st_ino &&
			      makedev(maj, min) == st.st_dev;
		}
		fclose(f);
		n += hit;
	}
	closedir(d);
	return n;
}

pid_t ubt_pid_from_paths(const struct ast_node *prog, bool quiet)
{
	pid_t pid = 0;
	const char *path = NULL;
	for (int i = 0; i < prog->nkids; i++) {
		const struct ast_node *p = prog->kids[i];
		for (int j = 0; j < p->nkids; j++) {
			const struct ast_attach *a = &p->kids[j]->attach;
			if (p->kids[j]->kind != AST_ATTACH ||
			    (strcmp(a->provider, "uprobe") && strcmp(a->provider, "uretprobe") &&
			     strcmp(a->provider, "usdt")))
				continue;
			pid_t n = proc_path_pid(a->target);
			if (!n || (pid && n != pid))
				return 0; /* a path of the host, or two processes */
			pid = n;
			path = a->target;
		}
	}
	/* /proc/TID/... of a thread names its process (-p takes a process) */
	char status[64], line[128];
	snprintf(status, sizeof(status), "/proc/%d/status", (int)pid);
	FILE *f = pid ? fopen(status, "re") : NULL;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5) && atoi(line + 5) > 0)
			pid = atoi(line + 5);
	if (f)
		fclose(f);
	if (pid && !quiet) {
		int others = others_mapping(pid, path);
		if (others)
			fprintf(stderr,
				"WARNING: ubt traces the process the probes' paths name, pid %d, "
				"and not the %d other process%s that map%s %s (bpftrace would "
				"trace them all)\n",
				(int)pid, others, others == 1 ? "" : "es", others == 1 ? "s" : "",
				path);
	}
	return pid;
}
