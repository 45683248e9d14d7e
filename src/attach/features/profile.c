/*
 * profile.c - profile:hz|s|ms|us:N probes: sampling the target's threads
 * from inside the target (runtime/thread/rt_profile.c), without the kernel's perf
 * events.
 *
 * att_profile_plan() (before the target is stopped for good) picks the
 * signal: the highest real-time signal from SIGRTMAX down to 35 that the
 * program neither catches nor ignores (/proc/PID/status SigCgt, SigIgn),
 * that no thread blocks (each task's SigBlk) and that is not pending.  None
 * free is an error.  att_profile_install() (threads stopped, code linked)
 * installs rt_profile_sig for it with a remote rt_sigaction (SA_SIGINFO,
 * SA_RESTART, SA_ONSTACK) and creates one timer per profile attach point
 * with remote timer_create(CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL) and
 * timer_settime: its period is 1/N s (hz) or N s/ms/us of the process's
 * CPU time, so a process that keeps two CPUs busy gets 2N samples a
 * second, as bpftrace's per-CPU perf events would give it.  Linux >= 6.4
 * sends the signal to the thread that used the time.
 *
 * att_profile_remove() (detach, also from the watchdog: everything it
 * needs is in the shared session) deletes the timers, sets the action to
 * SIG_IGN, which discards a signal still pending in any thread (a deleted
 * timer's signal stays queued), then puts the application's action back;
 * a stopped thread that has our signal in hand is told not to take it.
 * Nothing of ours is left: /proc/PID/timers is empty and SigCgt clear.
 */
#include "attach/session.h"
#include "attach/features/features.h"
#include "attach/target/target.h"
#include "attach/inject/session_internal.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#define PROF_SIG_LOW 35 /* glibc keeps 32 and 33; SIGRTMIN (34) is the first applications get */

/* A signal mask line ("SigCgt:\t%llx") of pid's (or its thread tid's) status, 0 if unknown. */
static uint64_t status_mask(pid_t pid, pid_t tid, const char *key)
{
	uint64_t m;
	proc_status_u64(pid, tid, key, 16, &m);
	return m;
}

/* Signals some thread of pid blocks or has pending. */
static uint64_t threads_busy_mask(pid_t pid)
{
	char path[64];
	uint64_t m = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return ~0ull;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = atoi(e->d_name);
		m |= status_mask(pid, tid, "SigBlk") | status_mask(pid, tid, "SigPnd");
	}
	closedir(d);
	return m;
}

bool att_profile_wanted(const struct ast_node *prog)
{
	for (int i = 0; i < prog->nkids; i++)
		for (int j = 0; j < prog->kids[i]->nkids; j++)
			if (!strcmp(prog->kids[i]->kids[j]->attach.provider, "profile"))
				return true;
	return false;
}

int att_profile_plan(struct att_session *s, const struct ast_node *prog)
{
	s->prof_sig = 0;
	if (!s->has_target || !att_profile_wanted(prog))
		return 0;
	pid_t pid = s->t.pid;
	uint64_t used = status_mask(pid, 0, "SigCgt") | status_mask(pid, 0, "SigIgn") |
			status_mask(pid, 0, "ShdPnd") | threads_busy_mask(pid);
	for (int sig = 64; sig >= PROF_SIG_LOW; sig--)
		if (!(used & (1ull << (sig - 1)))) {
			s->prof_sig = sig;
			return 0;
		}
	diag_sys("profile probes need a real-time signal the program leaves alone",
		 "pid %d: every real-time signal from %d to 64 is caught, ignored or blocked by the "
		 "program: no signal for profile probes", (int)s->t.pid, PROF_SIG_LOW);
	return -EBUSY;
}

/* The timer period of a profile attach point, in ns. */
static uint64_t period_ns(const struct ast_attach *a)
{
	const char *u = a->target ? a->target : "hz";
	uint64_t n = a->freq ? a->freq : 1;
	if (!strcmp(u, "hz"))
		return 1000000000ull / n ? 1000000000ull / n : 1;
	if (!strcmp(u, "s"))
		return n * 1000000000ull;
	if (!strcmp(u, "ms"))
		return n * 1000000ull;
	return n * 1000ull; /* us */
}

static int install_action(struct att_session *s)
{
	struct rt_sigaction_k act[2] = {{
		.handler = link_lookup(&s->image, "rt_profile_sig"),
		.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | 0x04000000 /* SA_RESTORER */,
		.restorer = link_lookup(&s->image, "rt_sigreturn"),
		.mask = 0,
	}};
	if (!act[0].handler || !act[0].restorer)
		return -ENOENT;
	s->prof_handler = act[0].handler;
	return att_sig_install(s, s->prof_sig, &act[0], false, &s->prof_old, &s->prof_installed);
}

/* One timer for attach point a running handler; index i in h->prof
 * (counted by ubt: the header's nprof is written, never read back). */
static int add_timer(struct att_session *s, struct rt_shm_header *h, uint64_t handler,
		     const struct ast_attach *a)
{
	uint32_t i = (uint32_t)s->nprof_timers;
	if (i == RT_PROF_MAX) {
		diag_sys(NULL, "at most %d profile probes", RT_PROF_MAX);
		return -E2BIG;
	}
	/* struct sigevent: sigev_value, sigev_signo, sigev_notify (SIGEV_SIGNAL = 0), pad */
	struct {
		uint64_t value;
		int32_t signo, notify;
		uint8_t pad[48];
		int32_t timer; /* timer_create's result */
	} ev = {.value = RT_PROF_COOKIE + i, .signo = s->prof_sig, .notify = 0};
	uint64_t at;
	int64_t r;
	int ret = tracee_scratch(&s->t, &ev, sizeof(ev), &at);
	if (!ret)
		ret = att_rsys(s, SYS_timer_create, CLOCK_PROCESS_CPUTIME_ID, at,
			   at + offsetof(__typeof__(ev), timer), 0, 0, 0, &r);
	if (!ret)
		ret = tracee_read(&s->t, at + offsetof(__typeof__(ev), timer), &ev.timer,
				  sizeof(ev.timer));
	if (ret)
		return ret;
	s->prof_timers[s->nprof_timers++] = ev.timer;
	h->prof[i].handler = handler;
	h->prof[i].timer = ev.timer;
	h->prof[i].value = RT_PROF_COOKIE + i;
	h->nprof = i + 1;
	uint64_t p = period_ns(a);
	struct timespec_k {
		int64_t sec, nsec;
	} its[2] = {{(int64_t)(p / 1000000000ull), (int64_t)(p % 1000000000ull)},
		    {(int64_t)(p / 1000000000ull), (int64_t)(p % 1000000000ull)}};
	ret = tracee_scratch(&s->t, its, sizeof(its), &at);
	if (!ret)
		ret = att_rsys(s, SYS_timer_settime, (uint64_t)ev.timer, 0, at, 0, 0, 0, &r);
	return ret;
}

int att_profile_install(struct att_session *s, struct rt_shm_header *h,
			const struct cg_object *obj)
{
	int ret = 0;
	if (!s->prof_sig || !obj)
		return 0;
	h->prof_sig = (uint32_t)s->prof_sig;
	ret = install_action(s);
	for (int i = 0; !ret && i < obj->nprobes; i++) {
		const struct ast_node *probe = obj->probes[i].probe;
		uint64_t fn = 0;
		for (int j = 0; !ret && j < probe->nkids; j++) {
			const struct ast_attach *a = &probe->kids[j]->attach;
			if (strcmp(a->provider, "profile"))
				continue;
			if (!fn && !(fn = link_lookup(&s->image, obj->probes[i].sym))) {
				diag_sys(NULL, "internal: probe function %s missing",
					 obj->probes[i].sym);
				return -ENOENT;
			}
			ret = add_timer(s, h, fn, a);
		}
	}
	if (ret && ret != -E2BIG && ret != -ENOENT)
		diag_sys(NULL, "pid %d: timer_create/rt_sigaction(%d) in the target for profile "
			 "probes: %s", (int)s->t.pid, s->prof_sig, strerror(-ret));
	if (ret)
		att_profile_remove(s);
	return ret;
}

/*
 * Our timers, as /proc/PID/timers lists them: the signal is ours and the
 * sigev_value is RT_PROF_COOKIE + index ("signal: 64/0000000075627400").
 * Found there rather than from the ids ubt kept, so a timer whose
 * timer_create was in flight when ubt died is found too, and a process
 * forked since (which inherits none) loses none of its own.
 */
static void delete_timers(struct att_session *s)
{
	char path[64], line[128];
	int64_t r;
	snprintf(path, sizeof(path), "/proc/%d/timers", (int)s->t.pid);
	FILE *f = fopen(path, "r");
	long id = -1;
	int32_t ids[RT_PROF_MAX];
	int n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		int sig;
		unsigned long long value;
		if (sscanf(line, "ID: %ld", &id) == 1)
			continue;
		if (id >= 0 && sscanf(line, "signal: %d/%llx", &sig, &value) == 2 &&
		    sig == s->prof_sig && (value & ~0xffull) == RT_PROF_COOKIE && n < RT_PROF_MAX)
			ids[n++] = (int32_t)id;
	}
	if (f)
		fclose(f);
	for (int i = 0; i < n; i++)
		att_rsys(s, SYS_timer_delete, (uint64_t)ids[i], 0, 0, 0, 0, 0, &r);
	s->nprof_timers = 0;
}

void att_profile_remove(struct att_session *s)
{
	int64_t r;
	uint64_t at;
	if (!s->prof_sig)
		return;
	delete_timers(s);
	if (!s->prof_installed)
		return;
	/* an action the application set after attach is its own: leave it
	 * (SIG_IGN is ours too when we died between the two calls below) */
	struct rt_sigaction_k cur;
	if (att_sig_current(s, s->prof_sig, &cur) ||
	    (cur.handler != s->prof_handler && cur.handler != 1)) {
		s->prof_installed = false;
		return;
	}
	/* SIG_IGN discards what is still pending in every thread; then the
	 * application's action (the default: it had none) */
	struct rt_sigaction_k acts[2] = {{.handler = 1 /* SIG_IGN */}, s->prof_old};
	if (!tracee_scratch(&s->t, acts, sizeof(acts), &at)) {
		att_rsys(s, SYS_rt_sigaction, s->prof_sig, at, 0, 8, 0, 0, &r);
		att_rsys(s, SYS_rt_sigaction, s->prof_sig, at + sizeof(acts[0]), 0, 8, 0, 0, &r);
	}
	for (int i = 0; i < s->t.nthreads; i++)
		if (s->t.threads && s->t.threads[i].pending_sig == s->prof_sig)
			s->t.threads[i].pending_sig = 0;
	s->prof_installed = false;
}
