/*
 * spawn.c - `ubt -c CMD`: the command started under ptrace and stopped
 * before any of its code runs (attach stage).
 *
 * The child is forked, waits on a pipe until ubt seizes it, and execs the
 * command (run_to_exec).  It then runs through the dynamic loader to a
 * stop point (spawn_stop_point): the loader's last _dl_debug_state() call
 * of the start-up, when every library of the command is mapped and no
 * constructor has run yet, or the entry point of a static program.  A
 * stub at the stop point (written there and taken back before the command
 * goes on) stops the thread; if ubt dies meanwhile, the watchdog puts the
 * bytes back (tracee_spawn_rescue).  The same rules as tracee.c hold:
 * nothing here calls into the target's libc or loader, and a -c child
 * outlives a crashed ubt.
 */
#include "attach/target/target.h"
#include "attach/target/tracee.h"
#include "attach/target/tracee_internal.h"
#include "attach/target/tracee_write.h"
#include "elf/elfsym.h"
#include "util/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_auxv_entry(pid_t pid, uint64_t type, uint64_t *val)
{
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	int err = read_file(path, &text, &len);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t off = 0; off + 16 <= len; off += 16) {
		uint64_t kv[2];
		memcpy(kv, text + off, sizeof(kv));
		if (kv[0] == type) {
			*val = kv[1];
			err = 0;
			break;
		}
	}
	free(text);
	return err;
}

static int wait_one(pid_t tid, int *st)
{
	for (;;) {
		pid_t r = waitpid(tid, st, __WALL);
		if (r >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

/*
 * Child side of tracee_spawn: waits until the parent has seized it, then
 * execs.  On failure the errno goes to the parent through the CLOEXEC pipe.
 */
static void __attribute__((noreturn)) spawn_child(char *const argv[], int go_fd, int err_fd)
{
	char c;
	ssize_t n;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* exec keeps the mask; ubt's is not the command's */
	do
		n = read(go_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1) {
		execvp(argv[0], argv);
		int e = errno;
		if (write(err_fd, &e, sizeof(e)) < 0)
			_exit(127);
	}
	_exit(127);
}

/* Runs the freshly seized child up to its exec event. */
static int run_to_exec(pid_t pid, int err_fd)
{
	for (;;) {
		int st, err = wait_one(pid, &st);
		if (err)
			return err;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			int e = 0;
			if (read(err_fd, &e, sizeof(e)) != sizeof(e) || e <= 0)
				e = ECHILD;
			return -e;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return 0;
		long sig = (st >> 16) == 0 ? WSTOPSIG(st) : 0;
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)sig) < 0)
			return -errno;
	}
}

/*
 * The stub written at the command's stop point (spawn_stop_point) while
 * the command runs to it:
 *
 *   at+0  50                push %rax          (its value there, kept)
 *   at+1  b8 27 00 00 00    mov  $39,%eax      getpid: a harmless system call
 *   at+6  0f 05             syscall            <- the stop ubt waits for
 *   at+8  eb fe             jmp  .
 *
 * ubt resumes the process with PTRACE_SYSCALL and recognises the stop at
 * at+8 with orig_rax 39.  No breakpoint: if ubt dies on the way, the
 * process does not take a SIGTRAP nobody handles (or lose one held in a
 * delivery-stop, and run on in the middle of an instruction); it spins
 * at at+8 until the watchdog puts it back (tracee_spawn_rescue).
 */
static const uint8_t entry_stub[ENTRY_STUB_LEN] = {0x50, 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0xeb, 0xfe};

/* Undoes what the stub did to the registers of a thread at pc (push, eax). */
static void unstub_regs(struct tracee *t, struct user_regs_struct *r)
{
	uint64_t entry = t->spawn.entry, rax;
	if (r->rip < entry || r->rip > entry + ENTRY_STUB_LEN - 2)
		return;
	if (r->rip > entry && !tracee_read(t, r->rsp, &rax, sizeof(rax))) {
		r->rax = rax; /* pushed at entry+0 */
		r->rsp += 8;
	}
	r->rip = entry;
}

void tracee_spawn_rescue(struct tracee *t)
{
	struct tracee_entry *e = &t->spawn;
	uint8_t now[ENTRY_STUB_LEN];
	if (!e->active)
		return;
	for (int i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		uint64_t pc = th->regs.rip;
		unstub_regs(t, &th->regs);
		th->regs_dirty |= th->regs.rip != pc;
	}
	if (!tracee_read(t, e->entry, now, sizeof(now)) && !memcmp(now, entry_stub, sizeof(now)))
		tracee_write(t, e->entry, e->orig, sizeof(e->orig));
	e->active = 0;
}

/*
 * Runs the process to the stub at t->spawn.entry (above), stopped at the
 * syscall exit there, the stub's work undone: the registers are the
 * ones the process had arriving there.  Threads created meanwhile are let
 * run, and stopped by the caller.
 */
static int run_to_stub(struct tracee *t, struct user_regs_struct *r)
{
	pid_t pid = t->pid;
	long sig = 0;
	int st, err;
	bool at_entry = false;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)sig) < 0)
			return -errno;
		sig = 0;
		if ((err = wait_one(pid, &st)))
			return err;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (!WIFSTOPPED(st))
			continue;
		int event = st >> 16;
		if (event == PTRACE_EVENT_CLONE) {
			unsigned long msg = 0;
			if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg) == 0) {
				pid_t tid = (pid_t)msg;
				tracee_add_thread(t, tid);
				if (wait_one(tid, &st) == 0 && WIFSTOPPED(st))
					ptrace(PTRACE_CONT, tid, NULL, NULL);
			}
			continue;
		}
		if (event != 0)
			continue;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st); /* the program's own signal: deliver it */
			continue;
		}
		if (ptrace(PTRACE_GETREGS, pid, NULL, r) < 0)
			return -errno;
		if (r->rip != t->spawn.entry + 8 || r->orig_rax != 39)
			continue;
		if (!at_entry) { /* the entry stop: on to its exit, getpid is harmless */
			at_entry = true;
			continue;
		}
		unstub_regs(t, r);
		return 0;
	}
}

/* Length of the x86 nop (alignment padding) at p, 0 if it is not one. */
static int nop_len(const uint8_t *p, int n)
{
	int i = 0;
	while (i < n && (p[i] == 0x66 || p[i] == 0x2e))
		i++;
	if (i < n && (p[i] == 0x90 || (p[i] == 0xcc && i == 0)))
		return i + 1;
	if (i + 2 >= n || p[i] != 0x0f || p[i + 1] != 0x1f)
		return 0;
	/* nopl/nopw r/m: a memory operand, no rip-relative one */
	static const int disp[3] = {0, 1, 4};
	int mod = p[i + 2] >> 6, rm = p[i + 2] & 7;
	if (mod == 3 || (mod == 0 && rm == 5))
		return 0;
	int l = i + 3 + (rm == 4) + disp[mod];
	return l <= n ? l : 0;
}

/*
 * Whether the loader's _dl_debug_state at addr can carry the stub: its
 * code is a bare return (glibc's empty function: `ret`, or `endbr64; ret`
 * with CET), so ubt can play an earlier call by itself, and what follows
 * up to the stub's end is alignment padding nothing runs.
 */
static bool debug_state_fits(struct tracee *t, uint64_t addr)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	uint8_t b[32];
	if (tracee_read(t, addr, b, sizeof(b)))
		return false;
	int i = memcmp(b, endbr64, 4) ? 0 : 4;
	if (b[i++] != 0xc3)
		return false;
	while (i < ENTRY_STUB_LEN) {
		int l = nop_len(b + i, (int)sizeof(b) - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

/*
 * Where a started command is stopped for attaching: before any code of it
 * that a probe could be on runs, as far as that is possible.
 *
 * A dynamically linked program is stopped in the dynamic loader, at its
 * last _dl_debug_state() call of the start-up, the one with r_state
 * RT_CONSISTENT (glibc: dl_main's end; debuggers put their breakpoint
 * there, r_debug.r_brk).  By then every library the program needs is
 * mapped and relocated, the thread pointer is set, and no constructor has
 * run: `ls`'s libraries call malloc() in their constructors (libselinux's
 * among them), which a stop at the program's entry point, after them,
 * missed.  Earlier than that no probe could run: the loader's own code
 * and IFUNC resolvers run before the thread pointer that probe code finds
 * its thread by exists.
 *
 * A static program, or one whose loader has no _dl_debug_state and
 * _r_debug symbols or a _dl_debug_state that cannot carry the stub
 * (debug_state_fits), is stopped at its entry point.  *at is the stop
 * point, *state the address of r_debug.r_state (0 for an entry stop).
 */
static int spawn_stop_point(struct tracee *t, uint64_t *at, uint64_t *state)
{
	uint64_t base = 0;
	*state = 0;
	if (read_auxv_entry(t->pid, AT_BASE, &base) || !base)
		return read_auxv_entry(t->pid, AT_ENTRY, at);
	struct proc_map *maps;
	int n;
	int err = proc_maps_read(t->pid, &maps, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (int i = 0; i < n && err; i++) {
		if (maps[i].start != base || maps[i].path[0] != '/')
			continue;
		char *path = xasprintf("/proc/%d/root%s", (int)t->pid, maps[i].path);
		struct ef_file f;
		struct ef_symbol fn = {0}, rd = {0};
		uint64_t bias;
		if (!ef_open(&f, path)) {
			if (!proc_load_bias(maps, n, &f, &bias) &&
			    !ef_find_func(&f, "_dl_debug_state", &fn) &&
			    !ef_find_symbol(&f, "_r_debug", &rd) &&
			    debug_state_fits(t, bias + fn.value)) {
				*at = bias + fn.value;
				*state = bias + rd.value + 24; /* r_version, r_map, r_brk, r_state */
				err = 0;
			}
			ef_close(&f);
		}
		free(fn.name);
		free(rd.name);
		free(path);
	}
	proc_maps_free(maps, n);
	return err ? read_auxv_entry(t->pid, AT_ENTRY, at) : 0;
}

/*
 * Runs the freshly execed command to its stop point (above), with the
 * stub there, and leaves it there: the original bytes back, registers
 * pointing at that instruction.  The loader's earlier _dl_debug_state()
 * calls (RT_ADD, and RT_CONSISTENT of audit modules) are played by ubt:
 * the function is a bare return.
 */
static int run_to_stop_point(struct tracee *t, int th_i)
{
	struct tracee_entry *e = &t->spawn;
	struct user_regs_struct *r = &t->threads[th_i].regs;
	uint64_t at, state;
	int err = spawn_stop_point(t, &at, &state);
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACESYSGOOD;
	if (!err && ptrace(PTRACE_SETOPTIONS, t->pid, NULL, (void *)opts) < 0)
		err = -errno;
	if (!err) {
		e->entry = at;
		err = tracee_read(t, at, e->orig, sizeof(e->orig));
	}
	if (!err) {
		e->active = 1; /* before the write: the watchdog may restore at any point */
		__sync_synchronize();
		err = tracee_write(t, at, entry_stub, sizeof(entry_stub));
	}
	for (int round = 0; !err; round++) {
		if ((err = run_to_stub(t, r)))
			break;
		int32_t rs = 0;
		if (!state || (err = tracee_read(t, state, &rs, sizeof(rs))) ||
		    rs == 0 /* RT_CONSISTENT */ || round > 64 /* not the loader we know */)
			break;
		/* an earlier call: return from it as the function would */
		uint64_t ret_addr;
		if ((err = tracee_read(t, r->rsp, &ret_addr, sizeof(ret_addr))))
			break;
		r->rip = ret_addr;
		r->rsp += 8;
		if (ptrace(PTRACE_SETREGS, t->pid, NULL, r) < 0)
			err = -errno;
	}
	if (!err && ptrace(PTRACE_SETREGS, t->pid, NULL, r) < 0)
		err = -errno;
	if (!err)
		err = tracee_write(t, at, e->orig, sizeof(e->orig));
	if (!err)
		e->active = 0;
	opts = PTRACE_O_TRACECLONE;
	if (!err && ptrace(PTRACE_SETOPTIONS, t->pid, NULL, (void *)opts) < 0)
		err = -errno;
	return err;
}

int tracee_spawn(struct tracee *t, char *const argv[])
{
	int go[2], errp[2], err = 0;
	memset(t, 0, sizeof(*t));
	t->mem_fd = t->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(errp, O_CLOEXEC) < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out_pipes;
	}
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		spawn_child(argv, go[0], errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	go[0] = errp[1] = -1;
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE)) < 0) {
		err = -errno;
		close(go[1]); /* the child reads EOF and exits */
		go[1] = -1;
		waitpid(pid, NULL, 0);
		goto out_pipes;
	}
	if (write(go[1], "g", 1) != 1) {
		err = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
		goto out_pipes;
	}
	err = run_to_exec(pid, errp[0]);
	if (err) {
		if (err != -ESRCH && kill(pid, SIGKILL) == 0)
			waitpid(pid, NULL, __WALL);
		goto out_pipes;
	}

	int th_i;
	err = tracee_open(t, pid);
	t->pid = pid;
	t->is_child = true;
	th_i = tracee_add_thread(t, pid);
	if (!err)
		err = run_to_stop_point(t, th_i);
	/* Threads started meanwhile (by a static program's init code): stop
	 * them as tracee_stop_all would. */
	for (int i = 0; !err && i < t->nthreads; i++)
		if (i != th_i && ptrace(PTRACE_INTERRUPT, t->threads[i].tid, NULL, NULL) < 0 &&
		    errno != ESRCH)
			err = -errno;
	if (!err) {
		/* The main thread stays put at the front; wait for the others. */
		for (int i = 0; !err && i < t->nthreads; i++) {
			if (i == th_i)
				continue;
			int r = tracee_wait_stop(t, i);
			if (r < 0)
				err = r;
			else if (r == WS_GONE)
				tracee_remove_thread(t, i--);
		}
	}
	if (!err)
		err = tracee_read_all_regs(t);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
		tracee_close(t);
		goto out_pipes;
	}
	t->stopped = true;
out_pipes:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return err;
}
