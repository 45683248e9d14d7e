/*
 * reactor.c - benchmark target shaped like SPDK's bdevperf on a null bdev:
 * one reactor thread submitting and completing fake I/O in a poll loop, at
 * about the cost per I/O of the real thing (~100 ns), for bench/spdk_iops.py.
 *
 *   reactor [WORK [CPU]]
 *
 * The hot path, per I/O, as bdevperf -> bdev layer -> null bdev -> poller:
 *
 *   reactor_poll()
 *     null_poll()                      pops up to 32 queued I/Os
 *       spdk_bdev_io_complete(io, 0)   noinline: status, channel statistics,
 *         bdevperf_complete(io)        the user's callback: checks WORK
 *                                      cache lines of the I/O's buffer,
 *         bdev_free_io(io)             back to the channel's free list
 *         bdevperf_submit()            the next I/O: a random offset,
 *           spdk_bdev_io_submit(io)    noinline: bounds, descriptor,
 *             null_submit_request(io)  through the function table: queued
 *
 * with 128 I/Os in flight.  spdk_bdev_io_complete(void *bdev_io, int status)
 * and spdk_bdev_io_submit(void *bdev_io) have SPDK's names and argument
 * shapes, so the scripts SPDK users write (a count on the completion, the
 * submit-to-complete latency keyed by the I/O pointer) run as written.
 * WORK (default 9) sets the cache lines checked per I/O, about 10 ns each
 * (a chain of dependent multiplies): with 9 an I/O costs about 100 ns of
 * the reactor's CPU (bench/spdk_iops.py prints it), like bdevperf's
 * 8-9 M IOPS per core on a null bdev.
 *
 * The reactor runs pinned to CPU (default: the last one).  Every 10 ms it
 * records (CLOCK_MONOTONIC ns, I/Os completed, its own CPU time in ns from
 * CLOCK_THREAD_CPUTIME_ID); the main thread prints each record as
 *
 *   s <monotonic ns> <ios> <reactor cpu ns>
 *
 * so a driver computes IOPS per second of the reactor's CPU over any
 * window, unmoved by other processes taking the CPU.
 *
 * The control path: the main thread runs an NVMe-oF-target-like scenario
 * every 100 ms (create a target, subsystems changing state, poll groups,
 * qpairs, namespaces), through 12 noinline spdk_nvmf_* functions that hold
 * 22 USDT locations of provider spdk (16 probe names, some at two or three
 * places): 34 probe sites, the size of SPDK's nvmf.bt, for measuring how
 * long a tracer stops the threads while attaching such a script.  Two more
 * threads sit blocked, as DPDK's interrupt and multi-process threads do,
 * so a tracer stops four threads.  Prints `ready <pid>` once the reactor
 * polls; SIGINT and SIGTERM end it.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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

#define QUEUE_DEPTH 128
#define POLL_BATCH 32
#define BLOCK_SIZE 4096
#define NUM_BLOCKS (1u << 18) /* a 1 GiB null bdev */
#define SAMPLE_NS 10000000ull

/* ---- the bdev layer's objects ---------------------------------------------- */

struct spdk_bdev_io;
typedef void (*spdk_bdev_io_completion_cb)(struct spdk_bdev_io *io, bool success, void *cb_arg);

struct bdev_channel {
	struct spdk_bdev_io *free_list;
	struct spdk_bdev_io *queue[QUEUE_DEPTH]; /* the null bdev's pending I/Os */
	unsigned head, tail;
	uint64_t num_read_ops, bytes_read, io_errors;
};

struct bdev_fn_table {
	void (*submit_request)(struct bdev_channel *ch, struct spdk_bdev_io *io);
};

struct spdk_bdev {
	const char *name;
	uint64_t blockcnt;
	uint32_t blocklen;
	const struct bdev_fn_table *fn_table;
};

/* 256 bytes, as SPDK's bdev_io carries its driver's context after it */
struct spdk_bdev_io {
	struct spdk_bdev_io *next;
	struct spdk_bdev *bdev;
	struct bdev_channel *ch;
	uint64_t offset_blocks, num_blocks;
	void *buf;
	spdk_bdev_io_completion_cb cb;
	void *cb_arg;
	int status;
	uint32_t type;
	uint64_t submit_tsc;
	unsigned char driver_ctx[176];
};

/* bdevperf's job */
struct job {
	struct spdk_bdev *bdev;
	struct bdev_channel *ch;
	uint64_t rand;
	uint64_t io_completed;
	uint64_t checksum;
	unsigned work; /* cache lines of the buffer checked per I/O */
};

static struct spdk_bdev_io g_ios[QUEUE_DEPTH] __attribute__((aligned(64)));
static unsigned char g_bufs[QUEUE_DEPTH][BLOCK_SIZE] __attribute__((aligned(64)));
static struct bdev_channel g_ch;
static volatile sig_atomic_t g_stop;
static volatile long g_sink;

/* ---- the null bdev ---------------------------------------------------------- */

static void null_submit_request(struct bdev_channel *ch, struct spdk_bdev_io *io)
{
	ch->queue[ch->tail++ % QUEUE_DEPTH] = io;
}

static const struct bdev_fn_table null_fn_table = {null_submit_request};
static struct spdk_bdev g_null0 = {"Null0", NUM_BLOCKS, BLOCK_SIZE, &null_fn_table};

/* ---- the bdev layer ----------------------------------------------------------- */

NOINL void spdk_bdev_io_submit(void *bdev_io)
{
	struct spdk_bdev_io *io = bdev_io;
	struct spdk_bdev *bdev = io->bdev;
	if (io->offset_blocks + io->num_blocks > bdev->blockcnt) {
		io->status = -1;
		io->cb(io, false, io->cb_arg);
		return;
	}
	io->status = 0; /* pending */
	io->submit_tsc = __builtin_ia32_rdtsc();
	bdev->fn_table->submit_request(io->ch, io);
}

NOINL void spdk_bdev_io_complete(void *bdev_io, int status)
{
	struct spdk_bdev_io *io = bdev_io;
	struct bdev_channel *ch = io->ch;
	io->status = status == 0 ? 1 : -1;
	if (status == 0) {
		ch->num_read_ops++;
		ch->bytes_read += io->num_blocks * io->bdev->blocklen;
	} else {
		ch->io_errors++;
	}
	io->cb(io, status == 0, io->cb_arg);
}

static inline void bdev_free_io(struct spdk_bdev_io *io)
{
	io->next = io->ch->free_list;
	io->ch->free_list = io;
}

/* ---- bdevperf ----------------------------------------------------------------- */

static void bdevperf_complete(struct spdk_bdev_io *io, bool success, void *cb_arg);

static void bdevperf_submit(struct job *j)
{
	struct spdk_bdev_io *io = j->ch->free_list;
	j->ch->free_list = io->next;
	/* xorshift64: a random 4 KiB block */
	j->rand ^= j->rand << 13;
	j->rand ^= j->rand >> 7;
	j->rand ^= j->rand << 17;
	io->bdev = j->bdev;
	io->offset_blocks = j->rand % j->bdev->blockcnt;
	io->num_blocks = 1;
	io->type = 1; /* read */
	io->cb = bdevperf_complete;
	io->cb_arg = j;
	spdk_bdev_io_submit(io);
}

static void bdevperf_complete(struct spdk_bdev_io *io, bool success, void *cb_arg)
{
	struct job *j = cb_arg;
	const uint64_t *p = io->buf;
	uint64_t sum = j->checksum;
	/* the caller's look at what it read: 8 words of each line */
	for (unsigned l = 0; l < j->work; l++)
		for (unsigned w = 0; w < 8; w++)
			sum = (sum ^ p[l * 8 + w]) * 0x100000001b3ull;
	j->checksum = sum + io->offset_blocks + success;
	j->io_completed++;
	bdev_free_io(io);
	if (!g_stop)
		bdevperf_submit(j);
}

/* ---- the reactor ------------------------------------------------------------- */

static int null_poll(struct bdev_channel *ch)
{
	int n = 0;
	while (n < POLL_BATCH && ch->head != ch->tail) {
		struct spdk_bdev_io *io = ch->queue[ch->head++ % QUEUE_DEPTH];
		spdk_bdev_io_complete(io, 0);
		n++;
	}
	return n;
}

struct sample {
	uint64_t wall, ios, cpu;
};

#define NSAMPLES 1024
static struct sample g_samples[NSAMPLES];
static atomic_ulong g_nsamples;
static atomic_int g_ready;
static int g_cpu = -1;
static unsigned g_work = 9;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *reactor_run(void *arg)
{
	struct job j = {&g_null0, &g_ch, 0x9e3779b97f4a7c15ull, 0, 0, g_work};
	(void)arg;
	prctl(PR_SET_NAME, "reactor_0");
	if (g_cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(g_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("reactor: sched_setaffinity");
	}
	for (int i = 0; i < QUEUE_DEPTH; i++) {
		g_ios[i] = (struct spdk_bdev_io){.ch = &g_ch, .buf = g_bufs[i]};
		memset(g_bufs[i], i, BLOCK_SIZE);
		bdev_free_io(&g_ios[i]);
	}
	for (int i = 0; i < QUEUE_DEPTH; i++)
		bdevperf_submit(&j);
	atomic_store(&g_ready, 1);
	uint64_t next = clock_ns(CLOCK_MONOTONIC) + SAMPLE_NS;
	unsigned polls = 0;
	while (!g_stop) {
		null_poll(&g_ch);
		/* the clock every 16 polls (512 I/Os): under 0.1 ns per I/O */
		if (++polls % 16)
			continue;
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now < next)
			continue;
		next = now + SAMPLE_NS;
		unsigned long k = atomic_load_explicit(&g_nsamples, memory_order_relaxed);
		g_samples[k % NSAMPLES] =
		    (struct sample){now, j.io_completed, clock_ns(CLOCK_THREAD_CPUTIME_ID)};
		atomic_store_explicit(&g_nsamples, k + 1, memory_order_release);
	}
	g_sink = (long)j.checksum;
	return NULL;
}

/* ---- the control path: 12 functions, 22 USDT locations, 34 sites ------------- */

static const char subnqn[] = "nqn.2016-06.io.spdk:cnode1";
static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:5e1ba6a8";

static inline uint64_t ticks(void) { return __builtin_ia32_rdtsc(); }

NOINL void spdk_nvmf_tgt_create(int state)
{
	DTRACE_PROBE2(spdk, nvmf_tgt_state, ticks(), state);
	g_sink += state;
	DTRACE_PROBE2(spdk, nvmf_tgt_state, ticks(), state + 1);
}

NOINL void spdk_nvmf_transport_create(const char *name)
{
	g_sink += name[0];
	DTRACE_PROBE2(spdk, nvmf_transport_poll_group_create, ticks(), name);
}

NOINL void spdk_nvmf_poll_group_create(uint64_t thread_id)
{
	DTRACE_PROBE2(spdk, nvmf_create_poll_group, ticks(), thread_id);
	g_sink += (long)thread_id;
}

NOINL void spdk_nvmf_subsystem_start(int from, int to)
{
	DTRACE_PROBE4(spdk, nvmf_subsystem_change_state, ticks(), subnqn, to, from);
	DTRACE_PROBE4(spdk, nvmf_pg_change_state, ticks(), subnqn, to, 1);
	g_sink += to;
	DTRACE_PROBE4(spdk, nvmf_pg_change_state_done, ticks(), subnqn, to, 1);
	DTRACE_PROBE5(spdk, nvmf_subsystem_change_state_done, ticks(), subnqn, to, from, 0);
}

NOINL void spdk_nvmf_subsystem_pause(int from, int to)
{
	DTRACE_PROBE4(spdk, nvmf_subsystem_change_state, ticks(), subnqn, to, from);
	DTRACE_PROBE4(spdk, nvmf_pg_change_state, ticks(), subnqn, to, 1);
	g_sink += to * 3;
	DTRACE_PROBE4(spdk, nvmf_pg_change_state_done, ticks(), subnqn, to, 1);
	DTRACE_PROBE5(spdk, nvmf_subsystem_change_state_done, ticks(), subnqn, to, from, 0);
}

NOINL void spdk_nvmf_subsystem_resume(int to)
{
	g_sink += to * 5;
	DTRACE_PROBE2(spdk, nvmf_tgt_state, ticks(), to);
}

NOINL void spdk_nvmf_subsystem_stop(int to) { g_sink -= to; }

NOINL void spdk_nvmf_ctrlr_connect(void *qpair, int qid)
{
	DTRACE_PROBE2(spdk, nvmf_ctrlr_create, ticks(), qpair);
	DTRACE_PROBE3(spdk, nvmf_poll_group_add_qpair, ticks(), qpair, 1);
	g_sink += qid;
	DTRACE_PROBE5(spdk, nvmf_ctrlr_add_qpair, ticks(), qpair, qid, subnqn, hostnqn);
}

NOINL void spdk_nvmf_qpair_disconnect(void *qpair)
{
	DTRACE_PROBE2(spdk, nvmf_qpair_disconnect, ticks(), qpair);
	g_sink += (long)qpair;
	DTRACE_PROBE3(spdk, nvmf_poll_group_remove_qpair, ticks(), qpair, 1);
	DTRACE_PROBE2(spdk, nvmf_ctrlr_destruct, ticks(), qpair);
}

NOINL void spdk_nvmf_subsystem_add_ns(uint32_t nsid)
{
	DTRACE_PROBE3(spdk, nvmf_ns_attach, ticks(), subnqn, nsid);
	g_sink += nsid;
}

NOINL void spdk_nvmf_subsystem_remove_ns(uint32_t nsid)
{
	g_sink -= nsid;
	DTRACE_PROBE3(spdk, nvmf_ns_detach, ticks(), subnqn, nsid);
}

NOINL void spdk_nvmf_poll_group_destroy(uint64_t thread_id)
{
	g_sink -= (long)thread_id;
	DTRACE_PROBE2(spdk, nvmf_destroy_poll_group, ticks(), thread_id);
}

static void control_scenario(void)
{
	static char qpair[64];
	spdk_nvmf_tgt_create(1);
	spdk_nvmf_transport_create("TCP");
	spdk_nvmf_poll_group_create(1);
	spdk_nvmf_subsystem_add_ns(1);
	spdk_nvmf_subsystem_start(0, 2);
	spdk_nvmf_ctrlr_connect(qpair, 1);
	spdk_nvmf_subsystem_pause(2, 4);
	spdk_nvmf_subsystem_resume(2);
	spdk_nvmf_qpair_disconnect(qpair);
	spdk_nvmf_subsystem_remove_ns(1);
	spdk_nvmf_subsystem_stop(0);
	spdk_nvmf_poll_group_destroy(1);
}

/* ---- the other threads, and main ---------------------------------------------- */

static int g_idle_pipe[2];

/* blocked in poll(2), as DPDK's eal-intr-thread and rte_mp_handle are */
static void *idle_run(void *arg)
{
	struct pollfd pfd = {g_idle_pipe[0], POLLIN, 0};
	prctl(PR_SET_NAME, (const char *)arg);
	while (!g_stop)
		poll(&pfd, 1, 200);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void print_samples(unsigned long *done)
{
	unsigned long n = atomic_load_explicit(&g_nsamples, memory_order_acquire);
	if (n - *done > NSAMPLES) /* the reader lagged a whole ring behind */
		*done = n - NSAMPLES;
	for (; *done < n; (*done)++) {
		const struct sample *s = &g_samples[*done % NSAMPLES];
		printf("s %llu %llu %llu\n", (unsigned long long)s->wall,
		       (unsigned long long)s->ios, (unsigned long long)s->cpu);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		g_work = (unsigned)atoi(argv[1]);
	if (g_work > BLOCK_SIZE / 64)
		g_work = BLOCK_SIZE / 64;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	g_cpu = argc > 2 ? atoi(argv[2]) : (int)(ncpu > 1 ? ncpu - 1 : -1);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pipe(g_idle_pipe)) {
		perror("pipe");
		return 1;
	}
	pthread_t reactor, idle[2];
	pthread_create(&idle[0], NULL, idle_run, "eal-intr-thread");
	pthread_create(&idle[1], NULL, idle_run, "rte_mp_handle");
	pthread_create(&reactor, NULL, reactor_run, NULL);
	while (!atomic_load(&g_ready))
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	unsigned long done = 0;
	for (int tick = 0; !g_stop; tick++) {
		nanosleep(&(struct timespec){0, 20000000}, NULL);
		print_samples(&done);
		if (tick % 5 == 0)
			control_scenario();
	}
	pthread_join(reactor, NULL);
	pthread_join(idle[0], NULL);
	pthread_join(idle[1], NULL);
	print_samples(&done);
	return 0;
}
