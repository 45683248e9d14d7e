/*
 * spdk_like.c - an e2e target shaped like an SPDK application (nvmf_tgt),
 * for the tests of SPDK's bpftrace workflow (tests/e2e/spdk*.test and the
 * look-alikes of SPDK's scripts in tests/spdk/).
 *
 * What the scripts in SPDK's scripts/bpf rely on, reproduced without SPDK:
 *  - USDT probes of provider "spdk" (<sys/sdt.h>).  SPDK's probe macros add
 *    one leading argument (spdk_get_ticks(), 0 in some versions), so the
 *    scripts' own arguments start at arg1.  Here the nvmf_* and dynsched_*
 *    probes pass the TSC and the bdev_nvme_* probes pass 0.
 *  - the names and argument shapes of SPDK's probes:
 *      nvmf_tgt_state(state)                       enum nvmf_tgt_state
 *      nvmf_subsystem_change_state(nqn, new, old)  enum spdk_nvmf_subsystem_state
 *      nvmf_subsystem_change_state_done(nqn, new, old, status)
 *      nvmf_pg_change_state(nqn, state, thread id) (+ _done)
 *      nvmf_create_poll_group(thread id)
 *      nvmf_poll_group_add_qpair(qpair, thread id)
 *      nvmf_ctrlr_add_qpair(qpair, qid, subnqn, hostnqn)
 *      msg_exec(fn, arg)                           a thread runs a message
 *      dynsched_balance(ncores), dynsched_core_info(lcore, core_info *),
 *      dynsched_move(thread_info *, new lcore)     sched.bt's structs
 *      bdev_nvme_create_qpair(name, qid, thread id), bdev_nvme_destroy_qpair,
 *      bdev_nvme_ctrlr_reset, _reconnect_delay, _reconnect, _release(name, ref),
 *      bdev_nvme_destruct(name, nsid), bdev_nvme_ctrlr_delete(name)
 *  - spdk_thread_send_msg(thread, fn, arg) and spdk_for_each_channel(
 *    io_device, fn, ctx, cpl): uprobe targets whose arg1 is a function
 *    pointer, which send_msg.bt names with usym(arg1);
 *  - reactor threads named reactor_N (the main thread is reactor_0), each a
 *    poll loop that completes fake I/O at a high rate through the noinline
 *    spdk_nvme_qpair_process_completions() and spdk_bdev_io_complete().
 *
 * Usage: prog_spdk_like [ROUNDS [WAIT]]
 *   ROUNDS  run the scenario ROUNDS times, then exit; -N runs it N times
 *           and keeps polling (so symbols can still be read from the
 *           process); 0 (the default) runs it once per SIGUSR1.  SIGINT
 *           and SIGTERM end the program.
 *   WAIT    comma-separated fnmatch patterns (`bdev_nvme_*,msg_exec`): first
 *           wait until every probe site of a matching name was patched by a
 *           tracer, then 200 ms more.  Sites are the USDT locations and the
 *           entries of spdk_thread_send_msg and spdk_for_each_channel; a
 *           site is patched when its first byte differs from the file's
 *           (int3 from kernel uprobes, jmp from ubt).  A -p test then sees
 *           whole scenarios under both tracers, however long attaching took.
 * Prints `ready` once the reactors poll, `scenario N done` after each
 * scenario (every message it sent has run), and `reactor_N completed C`
 * for each reactor at exit.  The scenario's probe hits are the same in
 * every round: tests count them exactly.
 */
#include <dirent.h>
#include <elf.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noclone, used))

/* The two enums SPDK's scripts/bpf/gen_enums.sh turns into @target[] and
 * @subsystem[]; tests/spdk/bpf/gen_enums.sh reads them from this file. */
enum nvmf_tgt_state {
	NVMF_TGT_INIT_NONE = 0,
	NVMF_TGT_INIT_CREATE_TARGET,
	NVMF_TGT_INIT_CREATE_POLL_GROUPS,
	NVMF_TGT_INIT_START_SUBSYSTEMS,
	NVMF_TGT_RUNNING,
	NVMF_TGT_FINI_STOP_SUBSYSTEMS,
	NVMF_TGT_FINI_DESTROY_POLL_GROUPS,
	NVMF_TGT_STOPPED,
	NVMF_TGT_ERROR,
};

enum spdk_nvmf_subsystem_state {
	SPDK_NVMF_SUBSYSTEM_INACTIVE = 0,
	SPDK_NVMF_SUBSYSTEM_ACTIVATING,
	SPDK_NVMF_SUBSYSTEM_ACTIVE,
	SPDK_NVMF_SUBSYSTEM_PAUSING,
	SPDK_NVMF_SUBSYSTEM_PAUSED,
	SPDK_NVMF_SUBSYSTEM_RESUMING,
	SPDK_NVMF_SUBSYSTEM_DEACTIVATING,
};

/* sched.bt declares these and reads them through casts of arg1/arg2. */
struct spdk_thread_stats {
	uint64_t busy_tsc;
	uint64_t idle_tsc;
};

struct spdk_scheduler_thread_info {
	uint32_t lcore;
	uint64_t thread_id;
	struct spdk_thread_stats total_stats;
	struct spdk_thread_stats current_stats;
};

struct spdk_scheduler_core_info {
	uint64_t total_idle_tsc;
	uint64_t total_busy_tsc;
	uint64_t current_idle_tsc;
	uint64_t current_busy_tsc;
	uint32_t lcore;
	uint32_t threads_count;
	bool interrupt_mode;
	struct spdk_scheduler_thread_info *thread_infos;
};

static inline uint64_t spdk_get_ticks(void)
{
	return __builtin_ia32_rdtsc();
}

/* SPDK's probe shapes: a TSC first for nvmf and dynsched ... */
#define TSC_PROBE1(n, a) DTRACE_PROBE2(spdk, n, spdk_get_ticks(), a)
#define TSC_PROBE2(n, a, b) DTRACE_PROBE3(spdk, n, spdk_get_ticks(), a, b)
#define TSC_PROBE3(n, a, b, c) DTRACE_PROBE4(spdk, n, spdk_get_ticks(), a, b, c)
#define TSC_PROBE4(n, a, b, c, d) DTRACE_PROBE5(spdk, n, spdk_get_ticks(), a, b, c, d)
/* ... and 0 first for bdev_nvme */
#define ZERO_PROBE1(n, a) DTRACE_PROBE2(spdk, n, 0, a)
#define ZERO_PROBE2(n, a, b) DTRACE_PROBE3(spdk, n, 0, a, b)
#define ZERO_PROBE3(n, a, b, c) DTRACE_PROBE4(spdk, n, 0, a, b, c)

/* ---- threads and messages ------------------------------------------------ */

#define NREACTORS 3
#define QUEUE_LEN 256

typedef void (*spdk_msg_fn)(void *ctx);

struct msg {
	spdk_msg_fn fn;
	void *arg;
};

struct spdk_thread {
	uint64_t id; /* 1.., as spdk_thread_get_id() */
	char name[16];
	pthread_t tid;
	pthread_mutex_t lock;
	struct msg queue[QUEUE_LEN];
	unsigned head, tail;
	unsigned long completed; /* fake I/O completions */
	unsigned long io_tag;
};

struct nvme_qpair {
	struct spdk_thread *thread;
	uint16_t qid;
};

static struct spdk_thread g_threads[NREACTORS];
static atomic_long g_pending; /* messages sent and not run yet */
static volatile sig_atomic_t g_stop, g_kick;
static volatile long g_sink;

NOINL int spdk_thread_send_msg(const struct spdk_thread *thread, spdk_msg_fn fn, void *arg)
{
	struct spdk_thread *t = (struct spdk_thread *)thread;
	for (;;) {
		pthread_mutex_lock(&t->lock);
		if (t->tail - t->head < QUEUE_LEN) {
			t->queue[t->tail++ % QUEUE_LEN] = (struct msg){fn, arg};
			atomic_fetch_add(&g_pending, 1);
			pthread_mutex_unlock(&t->lock);
			return 0;
		}
		pthread_mutex_unlock(&t->lock);
		sched_yield();
	}
}

/* Runs the messages queued for t; returns how many. */
static int thread_run_msgs(struct spdk_thread *t)
{
	int n = 0;
	for (;;) {
		pthread_mutex_lock(&t->lock);
		if (t->head == t->tail) {
			pthread_mutex_unlock(&t->lock);
			return n;
		}
		struct msg m = t->queue[t->head++ % QUEUE_LEN];
		pthread_mutex_unlock(&t->lock);
		TSC_PROBE2(msg_exec, m.fn, m.arg);
		m.fn(m.arg);
		atomic_fetch_sub(&g_pending, 1);
		n++;
	}
}

/* spdk_for_each_channel: fn runs on every thread, then cpl on the caller's. */
struct channel_iter {
	void *io_device;
	spdk_msg_fn fn, cpl;
	void *ctx;
	struct spdk_thread *orig;
	atomic_int left;
};

NOINL void _call_completion(void *arg)
{
	struct channel_iter *i = arg;
	i->cpl(i->ctx);
	free(i);
}

NOINL void _call_channel(void *arg)
{
	struct channel_iter *i = arg;
	i->fn(i->ctx);
	if (atomic_fetch_sub(&i->left, 1) == 1)
		spdk_thread_send_msg(i->orig, _call_completion, i);
}

NOINL void spdk_for_each_channel(void *io_device, spdk_msg_fn fn, void *ctx, spdk_msg_fn cpl)
{
	struct channel_iter *i = calloc(1, sizeof(*i));
	*i = (struct channel_iter){io_device, fn, cpl, ctx, &g_threads[0], NREACTORS};
	for (int t = 0; t < NREACTORS; t++)
		spdk_thread_send_msg(&g_threads[t], _call_channel, i);
}

/* ---- the I/O poll loop ---------------------------------------------------- */

NOINL void spdk_bdev_io_complete(void *bdev_io, int status)
{
	g_sink += (long)bdev_io + status;
}

/* Completes up to max fake I/Os of qpair; returns how many. */
NOINL int spdk_nvme_qpair_process_completions(struct nvme_qpair *qpair, uint32_t max)
{
	struct spdk_thread *t = qpair->thread;
	uint32_t n = 8 + t->io_tag % 9; /* 8..16 per poll */
	if (n > max)
		n = max;
	for (uint32_t i = 0; i < n; i++)
		spdk_bdev_io_complete((void *)(uintptr_t)(t->io_tag++ * 64), 0);
	t->completed += n;
	return (int)n;
}

static void thread_poll(struct spdk_thread *t, struct nvme_qpair *qp)
{
	static const struct timespec idle = {0, 50000};
	int n = thread_run_msgs(t);
	n += spdk_nvme_qpair_process_completions(qp, 32);
	if (n < 16)
		nanosleep(&idle, NULL);
	else
		nanosleep(&(struct timespec){0, 20000}, NULL);
}

static void *reactor_run(void *arg)
{
	struct spdk_thread *t = arg;
	struct nvme_qpair qp = {t, (uint16_t)t->id};
	prctl(PR_SET_NAME, t->name);
	while (!g_stop)
		thread_poll(t, &qp);
	return NULL;
}

/* ---- the scenario: what nvmf_tgt does while starting and serving ---------- */

static const char subnqn[] = "nqn.2016-06.io.spdk:cnode1";
static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:5e1ba6a8";
static const char ctrlr_name[] = "Nvme0";
static const char bdev_name[] = "Nvme0n1";

NOINL void _nvmf_ctrlr_add_io_qpair(void *arg) { g_sink += (long)arg; }
NOINL void _nvmf_subsystem_pause(void *arg) { g_sink += (long)arg * 3; }
NOINL void bdev_nvme_reset_io_msg(void *arg) { g_sink += (long)arg * 5; }
NOINL void _bdev_nvme_reset_channel(void *ctx) { g_sink += 7; }
NOINL void _bdev_nvme_reset_done(void *ctx) { g_sink += 11; }

NOINL void nvmf_tgt_advance_state(enum nvmf_tgt_state s)
{
	TSC_PROBE1(nvmf_tgt_state, (int)s);
}

NOINL void nvmf_subsystem_state_change(enum spdk_nvmf_subsystem_state from,
				       enum spdk_nvmf_subsystem_state to)
{
	TSC_PROBE3(nvmf_subsystem_change_state, subnqn, (int)to, (int)from);
	for (int t = 0; t < NREACTORS; t++) {
		TSC_PROBE3(nvmf_pg_change_state, subnqn, (int)to, g_threads[t].id);
		TSC_PROBE3(nvmf_pg_change_state_done, subnqn, (int)to, g_threads[t].id);
	}
	TSC_PROBE4(nvmf_subsystem_change_state_done, subnqn, (int)to, (int)from, 0);
}

static void scenario_nvmf(struct nvme_qpair *qpairs)
{
	nvmf_tgt_advance_state(NVMF_TGT_INIT_NONE);
	nvmf_tgt_advance_state(NVMF_TGT_INIT_CREATE_TARGET);
	nvmf_tgt_advance_state(NVMF_TGT_INIT_CREATE_POLL_GROUPS);
	for (int t = 0; t < NREACTORS; t++)
		TSC_PROBE1(nvmf_create_poll_group, g_threads[t].id);
	nvmf_tgt_advance_state(NVMF_TGT_INIT_START_SUBSYSTEMS);
	nvmf_subsystem_state_change(SPDK_NVMF_SUBSYSTEM_INACTIVE, SPDK_NVMF_SUBSYSTEM_ACTIVE);
	nvmf_tgt_advance_state(NVMF_TGT_RUNNING);
	for (int t = 0; t < NREACTORS; t++) {
		TSC_PROBE2(nvmf_poll_group_add_qpair, &qpairs[t], g_threads[t].id);
		TSC_PROBE4(nvmf_ctrlr_add_qpair, &qpairs[t], (int)qpairs[t].qid, subnqn, hostnqn);
	}
	nvmf_subsystem_state_change(SPDK_NVMF_SUBSYSTEM_ACTIVE, SPDK_NVMF_SUBSYSTEM_PAUSED);
	/* a failed resume: status 1 */
	TSC_PROBE3(nvmf_subsystem_change_state, subnqn, (int)SPDK_NVMF_SUBSYSTEM_ACTIVE,
		   (int)SPDK_NVMF_SUBSYSTEM_PAUSED);
	TSC_PROBE4(nvmf_subsystem_change_state_done, subnqn, (int)SPDK_NVMF_SUBSYSTEM_ACTIVE,
		   (int)SPDK_NVMF_SUBSYSTEM_PAUSED, 1);
}

static void scenario_bdev_nvme(void)
{
	for (int t = 0; t < NREACTORS; t++)
		ZERO_PROBE3(bdev_nvme_create_qpair, ctrlr_name, t + 1, g_threads[t].id);
	ZERO_PROBE1(bdev_nvme_ctrlr_reset, ctrlr_name);
	ZERO_PROBE1(bdev_nvme_ctrlr_reconnect_delay, ctrlr_name);
	ZERO_PROBE1(bdev_nvme_ctrlr_reconnect, ctrlr_name);
	for (int t = 0; t < NREACTORS; t++)
		ZERO_PROBE2(bdev_nvme_destroy_qpair, ctrlr_name, t + 1);
	ZERO_PROBE2(bdev_nvme_destruct, bdev_name, 1);
	ZERO_PROBE2(bdev_nvme_ctrlr_release, ctrlr_name, 2);
	ZERO_PROBE2(bdev_nvme_ctrlr_release, ctrlr_name, 1);
	ZERO_PROBE1(bdev_nvme_ctrlr_delete, ctrlr_name);
}

/* One balance of the dynamic scheduler over NREACTORS cores: busy
 * 300/600/900 of 1000 ticks; threads 2 and 3 move to core 0. */
static void scenario_sched(void)
{
	struct spdk_scheduler_thread_info ti[NREACTORS];
	struct spdk_scheduler_core_info ci[NREACTORS];
	for (int c = 0; c < NREACTORS; c++) {
		uint64_t busy = 300 * (c + 1), idle = 1000 - busy;
		ti[c] = (struct spdk_scheduler_thread_info){
			.lcore = c, .thread_id = g_threads[c].id,
			.total_stats = {busy * 10, idle * 10},
			.current_stats = {busy / 2, idle / 2}};
		ci[c] = (struct spdk_scheduler_core_info){
			.total_idle_tsc = idle * 10, .total_busy_tsc = busy * 10,
			.current_idle_tsc = idle, .current_busy_tsc = busy,
			.lcore = c, .threads_count = 1, .interrupt_mode = false,
			.thread_infos = &ti[c]};
	}
	TSC_PROBE1(dynsched_balance, NREACTORS);
	for (int c = 0; c < NREACTORS; c++)
		TSC_PROBE2(dynsched_core_info, c, &ci[c]);
	TSC_PROBE2(dynsched_move, &ti[1], 0);
	TSC_PROBE2(dynsched_move, &ti[2], 0);
	g_sink += ti[0].lcore + ci[0].lcore;
}

/* Messages: 4 + 2 _nvmf_ctrlr_add_io_qpair, 3 _nvmf_subsystem_pause,
 * 7 bdev_nvme_reset_io_msg, and a for_each_channel (3 _call_channel,
 * 1 _call_completion). */
static void scenario_msgs(void)
{
	for (int i = 0; i < 4; i++)
		spdk_thread_send_msg(&g_threads[1], _nvmf_ctrlr_add_io_qpair, (void *)(long)i);
	for (int i = 0; i < 2; i++)
		spdk_thread_send_msg(&g_threads[2], _nvmf_ctrlr_add_io_qpair, (void *)(long)i);
	for (int t = 0; t < NREACTORS; t++)
		spdk_thread_send_msg(&g_threads[t], _nvmf_subsystem_pause, NULL);
	for (int i = 0; i < 7; i++)
		spdk_thread_send_msg(&g_threads[2], bdev_nvme_reset_io_msg, (void *)(long)i);
	spdk_for_each_channel((void *)ctrlr_name, _bdev_nvme_reset_channel, NULL,
			      _bdev_nvme_reset_done);
}

static void run_scenario(struct nvme_qpair *qpairs, struct nvme_qpair *qp0, int round)
{
	scenario_nvmf(qpairs);
	scenario_sched();
	scenario_msgs();
	while (atomic_load(&g_pending) > 0) /* reactor_0 runs its own messages */
		thread_poll(&g_threads[0], qp0);
	scenario_bdev_nvme();
	printf("scenario %d done\n", round);
}

/* ---- waiting for a tracer ------------------------------------------------- */

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uintptr_t *)data = info->dlpi_addr;
	return 1; /* the first object is the program */
}

/* Does name match one of the comma-separated fnmatch patterns? */
static bool name_matches(const char *pats, const char *name)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", pats);
	for (char *save, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (!fnmatch(p, name, 0))
			return true;
	return false;
}

/* File offset of link-time address va, or -1. */
static long va_to_off(const unsigned char *img, uint64_t va)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz)
			return (long)(va - ph[i].p_vaddr + ph[i].p_offset);
	return -1;
}

/* Link-time addresses of the USDT locations (.note.stapsdt) of the program
 * whose probe name matches one of the patterns. */
static int usdt_sites(const unsigned char *img, const char *pats, uint64_t *out, int max)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
	const char *shstr = (const char *)img + sh[eh->e_shstrndx].sh_offset;
	uint64_t base_addr = 0;
	int n = 0;
	for (int i = 0; i < eh->e_shnum; i++)
		if (!strcmp(shstr + sh[i].sh_name, ".stapsdt.base"))
			base_addr = sh[i].sh_addr;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (strcmp(shstr + sh[i].sh_name, ".note.stapsdt"))
			continue;
		const unsigned char *p = img + sh[i].sh_offset, *end = p + sh[i].sh_size;
		while (p + 12 <= end && n < max) {
			const Elf64_Nhdr *nh = (const void *)p;
			const unsigned char *desc = p + 12 + ((nh->n_namesz + 3) & ~3u);
			uint64_t pc, base;
			memcpy(&pc, desc, 8);
			memcpy(&base, desc + 8, 8);
			const char *prov = (const char *)desc + 24, *name = prov + strlen(prov) + 1;
			if (name_matches(pats, name))
				out[n++] = pc + (base_addr ? base_addr - base : 0);
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return n;
}

static unsigned char *read_self(void)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	rewind(f);
	unsigned char *img = malloc(len);
	if (img && fread(img, 1, len, f) != (size_t)len) {
		free(img);
		img = NULL;
	}
	fclose(f);
	return img;
}

/* Waits until every site named by pats differs from the file, then 200 ms. */
static void wait_for_tracer(const char *pats)
{
	unsigned char *img = read_self();
	uintptr_t bias = 0;
	uint64_t sites[256];
	if (!img) {
		perror("/proc/self/exe");
		exit(1);
	}
	dl_iterate_phdr(phdr_cb, &bias);
	int n = usdt_sites(img, pats, sites, 254);
	if (name_matches(pats, "spdk_thread_send_msg"))
		sites[n++] = (uintptr_t)spdk_thread_send_msg - bias;
	if (name_matches(pats, "spdk_for_each_channel"))
		sites[n++] = (uintptr_t)spdk_for_each_channel - bias;
	int want = n;
	printf("waiting for a tracer on %d probe sites\n", n);
	while (!g_stop) {
		int patched = 0;
		for (int i = 0; i < n; i++) {
			long off = va_to_off(img, sites[i]);
			const volatile unsigned char *live = (void *)(sites[i] + bias);
			patched += off >= 0 && *live != img[off];
		}
		if (patched >= want)
			break;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	free(img);
	nanosleep(&(struct timespec){0, 200000000}, NULL);
}

/* ---- main ------------------------------------------------------------------ */

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		g_kick = 1;
	else
		g_stop = 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 0;
	const char *wait = argc > 2 ? argv[2] : NULL;
	struct nvme_qpair qpairs[NREACTORS];
	struct sigaction sa = {.sa_handler = on_signal};

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (int t = 0; t < NREACTORS; t++) {
		struct spdk_thread *th = &g_threads[t];
		th->id = t + 1;
		snprintf(th->name, sizeof(th->name), "reactor_%d", t);
		pthread_mutex_init(&th->lock, NULL);
		qpairs[t] = (struct nvme_qpair){th, (uint16_t)(t + 1)};
	}
	prctl(PR_SET_NAME, g_threads[0].name);
	for (int t = 1; t < NREACTORS; t++)
		pthread_create(&g_threads[t].tid, NULL, reactor_run, &g_threads[t]);
	printf("ready\n");
	if (wait)
		wait_for_tracer(wait);

	struct nvme_qpair qp0 = {&g_threads[0], 1};
	int done = 0, keep = rounds < 0;
	if (keep)
		rounds = -rounds;
	if (rounds > 0)
		g_kick = 1;
	while (!g_stop) {
		if (g_kick) {
			g_kick = 0;
			run_scenario(qpairs, &qp0, ++done);
			if (rounds > 0 && done < rounds)
				g_kick = 1;
			else if (rounds > 0 && !keep)
				break;
		}
		thread_poll(&g_threads[0], &qp0);
	}
	g_stop = 1;
	for (int t = 1; t < NREACTORS; t++)
		pthread_join(g_threads[t].tid, NULL);
	for (int t = 0; t < NREACTORS; t++)
		printf("%s completed %lu\n", g_threads[t].name, g_threads[t].completed);
	return 0;
}
