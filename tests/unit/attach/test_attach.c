/*
 * test_attach.c - unit tests of src/attach/target/tracee.c (ptrace control) and
 * src/elf/elfsym.c (ELF symbols, /proc/PID/maps, load bias), run
 * against real processes built from this directory:
 *
 *   test_attach THREADS_PIE THREADS_NOPIE ENTRY_PIE ENTRY_STATIC
 *
 * Needs ptrace rights over its own children (root, or Yama ptrace_scope <= 1).
 */
#include "elf/elfsym.h"
#include "attach/target/tracee_write.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include "../check.h"

/* A target started with its stdin and stdout on pipes. */
struct child {
	pid_t pid;
	FILE *out;
	int in_fd;
};

static int launch(struct child *c, char *const argv[])
{
	int out[2], in[2];
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(out[1], 1);
		dup2(in[0], 0);
		execv(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	c->out = fdopen(out[0], "r");
	c->in_fd = in[1];
	return 0;
}

static int finish(struct child *c)
{
	int st = -1;
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
	waitpid(c->pid, &st, 0);
	fclose(c->out);
	return st;
}

static bool read_line(struct child *c, char *line, size_t n)
{
	if (!fgets(line, (int)n, c->out))
		return false;
	line[strcspn(line, "\n")] = 0;
	return true;
}

static unsigned long long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? strtoull(p + strlen(key), NULL, 0) : 0;
}

static int thread_index(struct tracee *t, pid_t tid)
{
	for (int i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return i;
	return -1;
}

static int64_t rsys(struct tracee *t, long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		    uint64_t a5, uint64_t a6)
{
	int64_t ret = -99999;
	int err = tracee_syscall(t, nr, a1, a2, a3, a4, a5, a6, &ret);
	CHECK_EQ(err, 0);
	return ret;
}

static bool mapped_at(pid_t pid, uint64_t addr)
{
	struct proc_map *maps;
	int n;
	bool found = false;
	if (proc_maps_read(pid, &maps, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		found |= maps[i].start <= addr && addr < maps[i].end;
	proc_maps_free(maps, n);
	return found;
}

/* Thread tid of pid is blocked in system call nr (/proc/PID/task/TID/syscall),
 * waited for up to 60 s. */
static bool in_syscall(pid_t pid, pid_t tid, long nr)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (int i = 0; i < 60000; i++) {
		FILE *f = fopen(path, "r");
		long now = -2;
		char state[32] = "";
		bool ok = f && fscanf(f, "%31s", state) == 1;
		if (f)
			fclose(f);
		if (ok && sscanf(state, "%ld", &now) == 1 && now == nr)
			return true;
		usleep(1000);
	}
	return false;
}

/* Remote syscalls, memory and scratch space in a stopped process. */
static void check_remote_syscalls(struct tracee *t)
{
	CHECK_EQ(rsys(t, SYS_getpid, 0, 0, 0, 0, 0, 0), t->pid);

	int64_t page = rsys(t, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0);
	CHECK(page > 0 && (page & 4095) == 0);
	if (page <= 0)
		return;
	CHECK(mapped_at(t->pid, page));
	char msg[] = "written through /proc/PID/mem", back[sizeof(msg)] = {0};
	CHECK_EQ(tracee_write(t, page + 100, msg, sizeof(msg)), 0);
	CHECK_EQ(tracee_read(t, page + 100, back, sizeof(back)), 0);
	CHECK(memcmp(msg, back, sizeof(msg)) == 0);

	/* A path string passed through the scratch area. */
	uint64_t addr = 0, rsp = t->threads[0].regs.rsp;
	CHECK_EQ(tracee_scratch(t, "/", 2, &addr), 0);
	CHECK(addr % 16 == 0 && addr + 2 <= rsp - 128);
	CHECK_EQ(rsys(t, SYS_access, addr, F_OK, 0, 0, 0, 0), 0);
	const char *missing = "/nonexistent/ubt-test";
	CHECK_EQ(tracee_scratch(t, missing, strlen(missing) + 1, &addr), 0);
	CHECK_EQ(rsys(t, SYS_access, addr, F_OK, 0, 0, 0, 0), -ENOENT);

	CHECK_EQ(rsys(t, SYS_munmap, page, 4096, 0, 0, 0, 0), 0);
	CHECK(!mapped_at(t->pid, page));
	/* the stub is in place while stopped, outside any code; released with the threads */
	CHECK(t->rescue.stub != 0 && t->rescue.stub_written && !t->rescue.active);
	unsigned char stub[4];
	CHECK_EQ(tracee_read(t, t->rescue.stub, stub, 4), 0);
	CHECK(stub[0] == 0x0f && stub[1] == 0x05 && stub[2] == 0xeb && stub[3] == 0xfe);
}

/*
 * Stop a process with spinning, sleeping and blocked threads; run syscalls
 * in the sleeping one and in the blocked one; release; the target checks
 * that its sleep and read completed normally, and that the SIGUSR1 sent
 * while it was being stopped arrived exactly once.
 */
static void test_stop_threads(const char *prog)
{
	struct child c;
	char *argv[] = {(char *)prog, "hold", NULL}, line[512];
	CHECK_EQ(launch(&c, argv), 0);
	CHECK(read_line(&c, line, sizeof(line)));
	pid_t reader = (pid_t)field(line, "reader="), worker = (pid_t)field(line, "worker=");
	/* main and the reader are inside their system calls before we stop them */
	CHECK(in_syscall(c.pid, c.pid, SYS_clock_nanosleep));
	CHECK(in_syscall(c.pid, reader, SYS_read));

	struct tracee t;
	CHECK_EQ(tracee_open(&t, c.pid), 0);
	syscall(SYS_tgkill, c.pid, worker, SIGUSR1);
	CHECK_EQ(tracee_stop_all(&t), 0);
	CHECK(t.stopped);
	CHECK_EQ(t.nthreads, 4);
	int main_i = thread_index(&t, c.pid), reader_i = thread_index(&t, reader);
	CHECK(main_i >= 0 && reader_i >= 0 && thread_index(&t, worker) >= 0);
	if (main_i < 0 || reader_i < 0) {
		kill(c.pid, SIGKILL);
		finish(&c);
		return;
	}
	/* Both were stopped inside their system calls. */
	CHECK_EQ(t.threads[main_i].regs.orig_rax, SYS_clock_nanosleep);
	CHECK_EQ(t.threads[reader_i].regs.orig_rax, SYS_read);

	/* The first thread is the one remote syscalls use: main, then the reader. */
	struct tracee_thread tmp = t.threads[0];
	t.threads[0] = t.threads[main_i];
	t.threads[main_i] = tmp;
	check_remote_syscalls(&t);
	reader_i = thread_index(&t, reader);
	tmp = t.threads[0];
	t.threads[0] = t.threads[reader_i];
	t.threads[reader_i] = tmp;
	CHECK_EQ(rsys(&t, SYS_gettid, 0, 0, 0, 0, 0, 0), reader);

	/* Registers are back as they were. */
	struct user_regs_struct now;
	CHECK_EQ(ptrace(PTRACE_GETREGS, reader, NULL, &now), 0);
	CHECK(memcmp(&now, &t.threads[0].regs, sizeof(now)) == 0);

	CHECK_EQ(tracee_release(&t), 0);
	CHECK(!t.stopped);
	CHECK_EQ(tracee_wait_exit(&t, 10, NULL), 0); /* held until stdin ends */
	close(c.in_fd);
	c.in_fd = -1;
	CHECK_EQ(tracee_wait_exit(&t, 60000, NULL), 1);
	tracee_close(&t);

	CHECK(read_line(&c, line, sizeof(line)));
	CHECK_STR(line, "done sleep_rc=0 slept_ok=1 reader=1/x progress=1 usr1=1");
	int st = finish(&c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
}

/* Every live thread of pid is in t. */
static bool all_threads_listed(struct tracee *t)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	DIR *d = opendir(path);
	bool ok = d != NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		pid_t tid = atoi(de->d_name);
		if (thread_index(t, tid) < 0) {
			fprintf(stderr, "  thread %d not stopped\n", (int)tid);
			ok = false;
		}
	}
	if (d)
		closedir(d);
	return ok;
}

struct rt_sender {
	pid_t pid;
	int sent;
	volatile int done;
};

/* Queues real-time signals to the process, in bursts, until told to stop. */
static void *send_rt(void *arg)
{
	struct rt_sender *s = arg;
	union sigval v = {0};
	while (!s->done) {
		if (sigqueue(s->pid, SIGRTMIN + 1, v) == 0)
			s->sent++;
		if (s->sent % 4 == 0)
			usleep(200);
	}
	return NULL;
}

/*
 * Stop and release, many times, a process that creates threads nonstop and
 * receives a stream of queued signals: every thread is stopped each time,
 * and not one signal is lost.
 */
static void test_churn(const char *prog)
{
	struct child c;
	char *argv[] = {(char *)prog, "churn", NULL}, line[512];
	CHECK_EQ(launch(&c, argv), 0);
	CHECK(read_line(&c, line, sizeof(line)));
	struct rt_sender sender = {.pid = c.pid};
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, send_rt, &sender), 0);
	int held = 0;
	for (int round = 0; round < 40; round++) {
		struct tracee t;
		CHECK_EQ(tracee_open(&t, c.pid), 0);
		CHECK_EQ(tracee_stop_all(&t), 0);
		CHECK(t.nthreads >= 2);
		CHECK(all_threads_listed(&t));
		for (int i = 0; i < t.nthreads; i++)
			held += t.threads[i].pending_sig != 0;
		if (round % 3 == 0)
			CHECK_EQ(rsys(&t, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ(tracee_release(&t), 0);
		tracee_close(&t);
		usleep(5000);
	}
	sender.done = 1;
	pthread_join(th, NULL);
	close(c.in_fd);
	c.in_fd = -1;
	CHECK(read_line(&c, line, sizeof(line)));
	CHECK(strncmp(line, "churn done created=", 19) == 0);
	CHECK(field(line, "created=") > 0);
	CHECK(sender.sent > 1000);
	CHECK_EQ(field(line, "rt="), sender.sent);
	int st = finish(&c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("     (%d signals arrived while stopping)\n", held);
}

static uint64_t auxv_value(pid_t pid, uint64_t type)
{
	char path[64];
	uint64_t kv[2], v = 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY);
	while (fd >= 0 && read(fd, kv, sizeof(kv)) == sizeof(kv))
		if (kv[0] == type)
			v = kv[1];
	if (fd >= 0)
		close(fd);
	return v;
}

/* The address of the dynamic loader's _dl_debug_state in pid. */
static uint64_t loader_brk(pid_t pid, const struct proc_map *maps, int n)
{
	uint64_t base = auxv_value(pid, AT_BASE), bias, addr = 0;
	for (int i = 0; i < n && !addr; i++) {
		struct ef_file f;
		struct ef_symbol sym;
		if (maps[i].start != base || ef_open(&f, maps[i].path))
			continue;
		if (!proc_load_bias(maps, n, &f, &bias) && !ef_find_func(&f, "_dl_debug_state", &sym)) {
			addr = bias + sym.value;
			free(sym.name);
		}
		ef_close(&f);
	}
	return addr;
}

/*
 * A spawned program is stopped before main(): a dynamically linked one in
 * the loader's _dl_debug_state (libraries mapped, their constructors not
 * run), a static one at its entry point.
 */
static void test_spawn(const char *prog)
{
	struct tracee t;
	char *argv[] = {(char *)prog, NULL};
	CHECK_EQ(tracee_spawn(&t, argv), 0);
	if (!t.stopped)
		return;
	CHECK(t.is_child);
	CHECK_EQ(t.nthreads, 1);
	CHECK_EQ(t.threads[0].tid, t.pid);

	struct ef_file f;
	struct ef_symbol sym;
	struct proc_map *maps;
	int n;
	uint64_t bias = 1, marker = 0;
	CHECK_EQ(ef_open(&f, prog), 0);
	CHECK_EQ(proc_maps_read(t.pid, &maps, &n), 0);
	CHECK_EQ(proc_load_bias(maps, n, &f, &bias), 0);
	if (auxv_value(t.pid, AT_BASE)) {
		CHECK_EQ(t.threads[0].regs.rip, loader_brk(t.pid, maps, n));
		CHECK(proc_find_libc(maps, n) != NULL); /* the libraries are mapped */
	} else {
		/* the entry address, from the auxiliary vector and the ELF header */
		CHECK_EQ(t.threads[0].regs.rip, auxv_value(t.pid, AT_ENTRY));
		CHECK_EQ(t.threads[0].regs.rip, bias + f.entry);
	}
	CHECK_EQ(ef_find_symbol(&f, "te_marker", &sym), 0);
	marker = bias + sym.value;
	free(sym.name);
	proc_maps_free(maps, n);
	ef_close(&f);

	int v = -1, seven = 7;
	CHECK_EQ(tracee_read(&t, marker, &v, sizeof(v)), 0);
	CHECK_EQ(v, 0); /* main() has not run */
	CHECK_EQ(tracee_write(&t, marker, &seven, sizeof(seven)), 0);
	CHECK_EQ(rsys(&t, SYS_getpid, 0, 0, 0, 0, 0, 0), t.pid);

	CHECK_EQ(tracee_release(&t), 0);
	int st = -1;
	CHECK_EQ(tracee_wait_exit(&t, 20000, &st), 1);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 42);
	tracee_close(&t);
}

/* A command found through PATH; spawn errors. */
static void test_spawn_path_and_errors(void)
{
	struct tracee t;
	char *argv[] = {"true", NULL};
	CHECK_EQ(tracee_spawn(&t, argv), 0);
	if (t.stopped) {
		struct proc_map *maps;
		int n;
		CHECK_EQ(proc_maps_read(t.pid, &maps, &n), 0);
		CHECK_EQ(t.threads[0].regs.rip, loader_brk(t.pid, maps, n)); /* `true` is dynamic */
		proc_maps_free(maps, n);
		CHECK_EQ(tracee_release(&t), 0);
		int st = -1;
		CHECK_EQ(tracee_wait_exit(&t, 20000, &st), 1);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		tracee_close(&t);
	}
	char *bad[] = {"/nonexistent/ubt-test-prog", NULL};
	CHECK_EQ(tracee_spawn(&t, bad), -ENOENT);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD); /* nothing left behind */
}

/* The TracerPid of pid's main thread is this process. */
static bool traced_by_us(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	bool ours = false;
	while (f && fgets(buf, sizeof(buf), f))
		if (strncmp(buf, "TracerPid:", 10) == 0)
			ours = atoi(buf + 10) == getpid();
	if (f)
		fclose(f);
	return ours;
}

static void test_errors(const char *prog)
{
	struct tracee t;
	long pid_max = 4194304;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%ld", &pid_max) != 1)
			pid_max = 4194304;
		fclose(f);
	}
	CHECK_EQ(tracee_open(&t, (pid_t)pid_max), -ESRCH);
	CHECK(tracee_strerror_hint(-EPERM) && strstr(tracee_strerror_hint(-EPERM), "ptrace_scope"));

	/*
	 * A thread someone else traces: PTRACE_SEIZE's EPERM comes back as is.
	 * It is the spinning worker, not the first thread, so that stop_all
	 * has seized others first and must let them go.
	 */
	struct child c;
	char *argv[] = {(char *)prog, "churn", NULL}, line[256];
	CHECK_EQ(launch(&c, argv), 0);
	CHECK(read_line(&c, line, sizeof(line)));
	pid_t worker = (pid_t)field(line, "worker=");
	CHECK(worker > c.pid);
	int sync[2];
	CHECK_EQ(pipe(sync), 0);
	pid_t helper = fork();
	if (helper == 0) {
		char ok = ptrace(PTRACE_SEIZE, worker, NULL, NULL) == 0 ? 'y' : 'n';
		if (write(sync[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char ok = 0;
	CHECK_EQ(read(sync[0], &ok, 1), 1);
	CHECK_EQ(ok, 'y');
	CHECK_EQ(tracee_open(&t, c.pid), 0);
	CHECK_EQ(tracee_stop_all(&t), -EPERM);
	CHECK(!t.stopped);
	CHECK(!traced_by_us(c.pid));
	tracee_close(&t);
	kill(helper, SIGKILL);
	waitpid(helper, NULL, 0);
	close(sync[0]);
	close(sync[1]);
	/* Whatever we seized before the refusal was let go: the target still finishes. */
	int st = finish(&c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Addresses elfsym.c computes equal those the running target printed. */
static void test_elfsym(const char *prog, bool pie)
{
	struct child c;
	char *argv[] = {(char *)prog, NULL}, line[512];
	CHECK_EQ(launch(&c, argv), 0);
	CHECK(read_line(&c, line, sizeof(line)));

	struct ef_file f;
	struct ef_symbol sym;
	struct proc_map *maps;
	int n;
	uint64_t bias = 1;
	CHECK_EQ(ef_open(&f, prog), 0);
	CHECK_EQ(f.is_pie, pie);
	CHECK_EQ(proc_maps_read(c.pid, &maps, &n), 0);
	CHECK_EQ(proc_load_bias(maps, n, &f, &bias), 0);
	if (!pie)
		CHECK_EQ(bias, 0);

	struct tracee t;
	CHECK_EQ(tracee_open(&t, c.pid), 0);
	const char *funcs[] = {"main", "tt_work"}, *keys[] = {"main=", "work="};
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(ef_find_func(&f, funcs[i], &sym), 0);
		CHECK_EQ(bias + sym.value, field(line, keys[i]));
		CHECK(sym.size > 0);
		/* file_off names the same bytes as the runtime address. */
		unsigned char in_file[16], in_proc[16];
		CHECK_EQ(pread(f.fd, in_file, 16, sym.file_off), 16);
		CHECK_EQ(tracee_read(&t, bias + sym.value, in_proc, 16), 0);
		CHECK(memcmp(in_file, in_proc, 16) == 0);
		free(sym.name);
	}
	CHECK_EQ(ef_find_func(&f, "tt_marker", &sym), -ENOENT); /* an object, not a function */
	CHECK_EQ(ef_find_symbol(&f, "tt_marker", &sym), 0);
	CHECK_EQ(bias + sym.value, field(line, "marker="));
	free(sym.name);
	CHECK_EQ(ef_find_func(&f, "no_such_function_here", &sym), -ENOENT);

	/* libc has only .dynsym. */
	const char *libc = NULL;
	for (int i = 0; i < n && !libc; i++)
		if (strstr(maps[i].path, "/libc.so"))
			libc = maps[i].path;
	CHECK(libc != NULL);
	struct ef_file lf;
	if (libc && ef_open(&lf, libc) == 0) {
		CHECK(lf.is_pie);
		CHECK_EQ(proc_load_bias(maps, n, &lf, &bias), 0);
		CHECK_EQ(ef_find_func(&lf, "getpid", &sym), 0);
		/* In a -no-pie program dlsym gives the canonical PLT entry instead. */
		if (pie)
			CHECK_EQ(bias + sym.value, field(line, "getpid="));
		unsigned char in_file[16], in_proc[16];
		CHECK_EQ(pread(lf.fd, in_file, 16, sym.file_off), 16);
		CHECK_EQ(tracee_read(&t, bias + sym.value, in_proc, 16), 0);
		CHECK(memcmp(in_file, in_proc, 16) == 0);
		free(sym.name);
		ef_close(&lf);
	}
	tracee_close(&t);
	proc_maps_free(maps, n);
	ef_close(&f);

	int st = finish(&c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_self_maps_and_libc(void)
{
	struct proc_map *maps;
	int n;
	CHECK_EQ(proc_maps_read(getpid(), &maps, &n), 0);
	bool vdso = false, self = false;
	for (int i = 0; i < n; i++) {
		vdso |= strcmp(maps[i].path, "[vdso]") == 0;
		uint64_t here = (uint64_t)(uintptr_t)test_self_maps_and_libc;
		if (maps[i].start <= here && here < maps[i].end) {
			self = maps[i].perms[2] == 'x' && maps[i].ino != 0 && maps[i].path[0] == '/';
		}
	}
	CHECK(vdso && self);

	/*
	 * libc defines memcpy@GLIBC_2.2.5 (old) and memcpy@@GLIBC_2.14 (the
	 * default, an IFUNC): the lookup must give the default one.
	 */
	void *old_memcpy = dlvsym(RTLD_DEFAULT, "memcpy", "GLIBC_2.2.5");
	const char *libc = NULL;
	for (int i = 0; i < n && !libc; i++)
		if (strstr(maps[i].path, "/libc.so"))
			libc = maps[i].path;
	struct ef_file f;
	struct ef_symbol sym;
	uint64_t bias = 0;
	if (old_memcpy && libc && ef_open(&f, libc) == 0) {
		CHECK_EQ(proc_load_bias(maps, n, &f, &bias), 0);
		CHECK_EQ(ef_find_func(&f, "memcpy", &sym), 0);
		CHECK(bias + sym.value != (uint64_t)(uintptr_t)old_memcpy);
		free(sym.name);
		CHECK_EQ(ef_find_func(&f, "getpid", &sym), 0);
		CHECK_EQ(bias + sym.value, (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
		free(sym.name);
		ef_close(&f);
	}
	proc_maps_free(maps, n);
	CHECK_EQ(proc_maps_read((pid_t)0x7ffffff0, &maps, &n), -ESRCH);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s THREADS_PIE THREADS_NOPIE ENTRY_PIE ENTRY_STATIC\n", argv[0]);
		return 2;
	}
	struct {
		const char *name;
		int before;
	} run;
#define RUN(call)                                                                           \
	do {                                                                                \
		run.name = #call;                                                           \
		run.before = check_failed;                                                      \
		call;                                                                       \
		printf("%s %s\n", check_failed == run.before ? "ok  " : "FAIL", run.name); \
	} while (0)
	RUN(test_self_maps_and_libc());
	RUN(test_elfsym(argv[1], true));
	RUN(test_elfsym(argv[2], false));
	RUN(test_stop_threads(argv[1]));
	RUN(test_stop_threads(argv[2]));
	RUN(test_churn(argv[1]));
	RUN(test_spawn(argv[3]));
	RUN(test_spawn(argv[4]));
	RUN(test_spawn_path_and_errors());
	RUN(test_errors(argv[1]));
	return check_summary("attach");
}
