/*
 * abi.h - the one header shared by codegen, attach, output and the runtime
 * injected into the target.  Everything that crosses the boundary between
 * ubt and the traced process is defined here.
 *
 * Memory shared with the target is one memfd, mapped twice in the target
 * and once (read-write) in ubt:
 *
 *   target:  [ code: runtime + probe code + trampolines ]  R-X   near the probed object
 *            [ data: header | threads | rings | maps     ]  RW-   directly after the code
 *            [ private page (struct rt_priv), not shared ]  RW-   directly after the data
 *   ubt:     [ code                                      |  data ]  RW-   anywhere
 *
 * Every struct starts with its size (and the header a version) so a
 * mismatch is detected instead of misread.  Offsets are from the start of
 * the data part; the code refers to data through the link-time symbol
 * `ubt_shm` (the data part's address in the target), RIP-relative.
 *
 * Data part layout (offsets are multiples of 64):
 *
 *   0                  struct rt_shm_header  (one page)
 *   threads_off        struct rt_thread[nthreads]
 *   rings_off          nthreads rings of ring_size bytes, thread i owns ring i
 *   maps (each)        struct rt_map, hash slots, keys, values
 */
#ifndef UBT_RT_ABI_H
#define UBT_RT_ABI_H

#include <stdint.h>

#define RT_ABI_VERSION 3
#define RT_SHM_MAGIC 0x7562742d73686d31ull /* "ubt-shm1" */

/* glibc's x86-64 rseq signature; the 4 bytes before every abort handler. */
#define RT_RSEQ_SIG 0x53053053u
/* struct rseq (linux/rseq.h): cpu_id at 4, rseq_cs at 8, node_id at 20, mm_cid at 24. */
#define RT_RSEQ_CPU_ID 4
#define RT_RSEQ_CS 8
#define RT_RSEQ_NODE_ID 20 /* filled by Linux >= 6.3 (auxv AT_RSEQ_FEATURE_SIZE >= 24) */

enum rt_shm_flags {
	RT_F_RSEQ = 1 << 0,		/* rseq_off is valid: per-CPU slots via rseq cpu_id */
	RT_F_TID = 1 << 1,		/* tid_off is valid: the kernel tid is at %fs:tid_off */
	RT_F_NO_PROCMAP_QUERY = 1 << 2, /* tests: rt_vma.c parses /proc/self/maps instead */
	RT_F_PIDNS = 1 << 3, /* the target's pid namespace is not ubt's: host ids come from
			      * the host's procfs at host_proc_fd (rt_thread.c) */
};

/*
 * int3 fallback.  Where a 5-byte jmp cannot be placed safely, the site's
 * first byte becomes int3 and the runtime's SIGTRAP handler (rt_sigtrap)
 * sends the thread to the site's trampoline, whose relocated copy of the
 * first instruction then jumps back.  A trap at an address not in traps[]
 * goes to the application's own action, saved in old_trap.
 */
#define RT_TRAP_MAX 128

/* lines of a user namespace's uid_map or gid_map kept (rt_shm_header.idmap) */
#define RT_IDMAP_MAX 6

struct rt_trap_site {
	uint64_t site;  /* address of the int3 */
	uint64_t tramp; /* where the thread continues */
};

/* The kernel's struct sigaction for rt_sigaction(2) on x86-64. */
struct rt_sigaction_k {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

/*
 * ustack.  Probe code calls rt_stack_id(), which records the frames of the
 * current call stack in a table in shared memory (struct rt_stack_table,
 * one entry per distinct stack, found by a 64-bit hash of its frames) and
 * returns the hash: the stack's id, which is what a map key or a printf
 * argument holds.  ubt prints an id by finding its entry.
 *
 * Frames come from a frame-pointer walk, trusted only through code ubt
 * marked RT_CODE_FP (an object whose CFI shows frame pointers).  At a
 * frame in other code the walk stops and the entry also keeps the
 * registers and a copy of the stack (flag RT_STK_COPY), which ubt unwinds
 * with the object's CFI (.eh_frame).  A frame in an RT_CODE_END range
 * (__libc_start_call_main, start_thread) is the last one, as in bpftrace.
 * Every read stays inside the mapping sp is in (a thread's stack, a
 * coroutine's stack from mmap or malloc, a sigaltstack: rt_vma.c finds it)
 * and is fault-tolerant (rt_ld8, or process_vm_readv where a fault would
 * not reach the runtime's handler); a stack whose mapping is not found, or
 * where a read fails, keeps the frames found so far and counts in `cut`.
 */
#define RT_STACK_RANGES 48
#define RT_STACK_MAX 127     /* frames at most: ustack(n) with n <= 127, bpftrace's limit */
#define RT_STACK_COPY 8192   /* bytes of stack copied for CFI unwinding */

enum rt_code_flags {
	RT_CODE_FP = 1 << 0,  /* code keeps frame pointers: a walk through it is exact */
	RT_CODE_END = 1 << 1, /* an outermost function: the walk ends after it */
};

struct rt_code_range {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t flags;  /* enum rt_code_flags */
	uint32_t pad;
};

struct rt_stack_facts {
	uint64_t table_off;         /* struct rt_stack_table in the data part; 0: none */
	uint64_t code_lo, code_hi;  /* hull of ranges[]: a quick test for "not code" */
	uint32_t nranges;           /* END ranges first, then code ranges */
	uint32_t pad;
	struct rt_code_range ranges[RT_STACK_RANGES];
};

/*
 * The stack table: cap entries (a power of two) of entry_size bytes,
 * open addressing on the id.  An entry is claimed by a CAS of its id from
 * 0, filled, and published by a release store of `ready`; other threads
 * with the same id only need to see the id.  Full (no free entry among
 * the first RT_STACK_PROBES tried, rt_stack.c): the hit gets the id RT_STACK_LOST, counted
 * in drops; ubt prints it as bpftrace prints a stack id its stack map
 * refused (an empty key, `@[]`) and reports the drops at exit.  Ids 0 and
 * RT_STACK_LOST are never the hash of a stack.
 *
 *   entry: id | ready nframes | flags copy_len | pc sp rbp | frames[max_frames] | copy
 */
enum rt_stack_entry_flags {
	RT_STK_COPY = 1 << 0, /* copy[] holds copy_len bytes of stack from sp: unwind with CFI */
};

#define RT_STACK_LOST 1ull /* the id of every stack the table had no room for */
#define RT_STACK_PROBES 64 /* entries tried from id's own before a stack is dropped: no
			    * reader looks further (output/stack.c) */

struct rt_stack_entry {
	volatile uint64_t id; /* 0 = free */
	volatile uint32_t ready;
	uint32_t nframes;
	uint32_t flags;    /* enum rt_stack_entry_flags */
	uint32_t copy_len;
	uint64_t pc, sp, rbp; /* registers at the probe, for the CFI unwinder */
	uint64_t frames[];    /* max_frames, then the stack copy (copy_size bytes) */
};

struct rt_stack_table {
	uint32_t size;       /* sizeof(struct rt_stack_table) */
	uint32_t max_frames; /* frames per entry */
	uint32_t cap;        /* entries, a power of two */
	uint32_t copy_size;  /* bytes of stack per entry */
	uint64_t entry_size;
	uint64_t entries_off; /* from this struct */
	volatile uint64_t used;
	volatile uint64_t drops; /* stacks not recorded: table full */
	volatile uint64_t cut;   /* stacks cut short: no mapping found for sp, or a read failed */
};

/* rt_stack_id(regs, site, kind, n, fp): where the probe runs */
enum rt_stack_kind {
	RT_STK_ENTRY = 0, /* function entry: struct rt_regs, ret = caller */
	RT_STK_MID = 1,   /* inside a function: struct rt_regs_mid */
	RT_STK_RET = 2,   /* return probe: struct rt_regs, ret = where it returns */
};

/*
 * profile:hz:N (rt_profile.c).  One process CPU-time timer per profile
 * attach point (timer_create(CLOCK_PROCESS_CPUTIME_ID) made by ubt with a
 * remote system call), each sending prof_sig with si_value = value; the
 * runtime's handler rt_profile_sig runs `handler` (a probe function, called
 * like a mid-function site with a struct rt_regs_mid built from the
 * interrupted context) for the timer that fired.
 */
#define RT_PROF_MAX 8

struct rt_prof_timer {
	uint64_t handler; /* probe function in the target */
	int32_t timer;    /* kernel timer id */
	uint32_t value;   /* si_value.sival_int the timer sends: RT_PROF_COOKIE + index */
};
#define RT_PROF_COOKIE 0x75627400u /* "ubt\0" */

/*
 * The header at offset 0 of the data part (it must fit in one page).  Written by ubt before any
 * probe is armed; the fields under "target writes" change while probes run.
 */
struct rt_shm_header {
	uint32_t size;    /* sizeof(struct rt_shm_header) */
	uint32_t version; /* RT_ABI_VERSION */
	uint64_t magic;   /* RT_SHM_MAGIC */
	uint64_t data_size;
	uint32_t ncpu;      /* per-CPU value arrays; index ncpu is the shared fallback */
	uint32_t nthreads;  /* capacity of the thread table */
	uint32_t ring_size; /* bytes per thread ring, a power of two */
	uint32_t flags;     /* enum rt_shm_flags */
	uint64_t threads_off;
	uint64_t rings_off;
	int64_t rseq_off; /* __rseq_offset: struct rseq is at %fs:rseq_off */
	int32_t tid_off;  /* kernel tid at %fs:tid_off */
	uint32_t pid;     /* the target's pid (tgid) */
	/* ubt writes */
	volatile uint32_t tracer;    /* pid of the ubt that attached: a second ubt refuses
				      * the process while that one still maps this memfd */
	uint32_t pad0;
	volatile uint64_t heartbeat; /* ubt's monotonic ns, refreshed while it runs */
	/* target writes */
	volatile uint32_t exit_req;  /* exit() was called in a probe */
	int32_t exit_code;
	volatile uint64_t threads_full; /* probe hits skipped: no thread slot was free */
	volatile uint64_t reentered;    /* events dropped: their probe ran inside another probe of
					 * the same thread (a signal handler) while that one was
					 * writing an event into the thread's ring */
	volatile uint64_t trap_hits;    /* probe hits through the int3 fallback */
	/* int3 fallback (ubt writes, the SIGTRAP handler reads) */
	uint32_t ntraps;               /* entries used in traps[] */
	uint32_t pad1;
	struct rt_sigaction_k old_trap; /* the application's SIGTRAP action, for chaining */
	struct rt_trap_site traps[RT_TRAP_MAX];
	/* return probes (rt_ret.c); ubt writes rets_addr, the target the counters */
	uint64_t rets_addr;           /* private shadow stacks (struct rt_ret_stack[nthreads]), 0: none */
	volatile uint64_t ret_skipped; /* calls run without a return probe: shadow stack full or busy */
	volatile uint64_t ret_dropped; /* shadow entries of frames abandoned by longjmp, exceptions */
	volatile uint64_t ret_restored; /* hijacked return slots handed back for an unwinder */
	volatile uint64_t ret_lost;    /* returns whose entry was not found (must stay 0) */
	volatile uint64_t ret_parked;  /* entries kept for frames on another stack (coroutines) */
	volatile uint64_t ret_evicted; /* parked frames given their return address back: full */
	volatile uint64_t ret_unwound; /* frames an unwinder was shown through (_Unwind_Find_FDE) */
	uint32_t ret_precise;          /* ubt writes: _Unwind_Find_FDE is hooked (rt_ret_unwind_fde) */
	uint32_t pad_ret;
	/* nsecs = ns_base + ((tsc - tsc_base) * tsc_mult) >> 32 (rt_time.c); ubt measures them */
	uint64_t tsc_base, ns_base, tsc_mult;
	/* builtins (ubt writes before arming) */
	uint64_t start_ns;     /* CLOCK_BOOTTIME when ubt started: `elapsed` */
	uint32_t cpid;         /* the -c child's pid, else 0: `cpid` */
	uint32_t pad2;
	/* fault-tolerant reads (rt_read.c); ubt writes the first three before arming */
	uint64_t rd_min_addr;           /* vm.mmap_min_addr: nothing below can be mapped */
	struct rt_sigaction_k old_segv; /* the application's SIGSEGV action, for chaining */
	struct rt_sigaction_k old_bus;  /* the application's SIGBUS action */
	volatile uint64_t read_faults;  /* reads of target memory that failed (-k) */
	volatile uint64_t app_faults;   /* SIGSEGV/SIGBUS that were not ours, passed on */
	/* ustack (rt_stack.c); ubt writes these before arming (output/stack.c) */
	struct rt_stack_facts stk;
	/* libraries loaded after attach (rt_dl.c): the loader's _dl_debug_state
	 * calls, counted by ubt's probe on it; ubt's trace loop watches it */
	volatile uint64_t dl_events;
	uint64_t dl_rstate;         /* ubt writes: &_r_debug.r_state, 0: no waiting */
	volatile uint32_t dl_ack;   /* ubt writes: low 32 bits of dl_events it handled */
	uint32_t pad3;
	/* profile probes (rt_profile.c); ubt writes prof_sig, nprof and prof[]
	 * before arming, the target the counters */
	uint32_t prof_sig;  /* the real-time signal the timers send, 0: no profile probe */
	uint32_t nprof;     /* timers in prof[] */
	struct rt_prof_timer prof[RT_PROF_MAX];
	volatile uint64_t prof_samples; /* timer signals handled */
	volatile uint64_t prof_foreign; /* prof_sig signals not from our timers (passed on) */
	/* builtins (ubt writes before arming) */
	uint64_t cgroup_id; /* `cgroup`: the target's cgroup v2 id at attach (attach/target/cgroup.c) */
	/* comm, uid, gid (rt_builtin.c): ubt raises ids_gen (from 1, written
	 * before arming) when its poll of /proc/PID/task sees a thread's
	 * name or ids change (attach/target/ids.c); a thread's cached copy (struct
	 * rt_ids) is good while its gen equals this one */
	volatile uint64_t ids_gen;
	/* the bounds of one probe hit (the target writes) */
	volatile uint64_t hits_stopped; /* hits ended early: their loops ran past the
					 * budget of one hit (sema/sema_loop.c, codegen/cg_loop.c) */
	volatile uint64_t deep_skipped; /* hits skipped: RT_PSTACK_DEPTH probes of the thread
					 * were running already (signal handlers in probes) */
	volatile uint64_t recycle_next; /* rt_thread.c: no look for exited threads' slots
					 * (a system call per slot) before this nsecs */
	/* a target in another pid namespace (RT_F_PIDNS; attach/features/hostids.c):
	 * a descriptor, in the target, of ubt's procfs, and that procfs's st_dev, so
	 * a descriptor the program closed and reused is not mistaken for it */
	int32_t host_proc_fd;
	uint32_t pad4;
	uint64_t host_proc_dev;
	/* fork children (rt_thread.c, rt_fork_enable): ubt sets forks_on when
	 * it arms and clears it first when it detaches, and copies here what
	 * a child's private page needs of the traced process's (struct rt_priv) */
	volatile uint32_t forks_on;
	uint32_t fork_rd_gen;
	uint64_t fork_pstack_base, fork_pstack_size, fork_pstack_seg;
	/* a target in another user namespace (a rootless container): its
	 * uid_map and gid_map, so that uid and gid are the host's, as
	 * bpftrace's (rt_builtin.c); idmap_n[k] 0: the same namespace as ubt's
	 * (attach/target/cgroup.c writes them before arming) */
	uint32_t idmap_n[2];
	struct rt_idmap {
		uint32_t first, lower, count; /* ids first.. are the host's lower.. */
	} idmap[2][RT_IDMAP_MAX];
};

/* ubt's poll of the target's threads (attach/target/ids.c): what the script reads */
enum rt_ids_use {
	RT_IDS_COMM = 1 << 0, /* comm: /proc/PID/task/TID/comm */
	RT_IDS_CRED = 1 << 1, /* uid, gid (username): the Uid/Gid lines of .../status */
};

/*
 * A thread's cached comm, uid and gid (rt_builtin.c).  Valid while gen
 * equals the header's ids_gen; 0 = empty.  Only its thread writes it, gen
 * last (a probe in a signal handler that interrupts a refresh sees 0 and
 * refreshes on its own).
 */
struct rt_ids {
	volatile uint64_t gen; /* rt_shm_header.ids_gen when read */
	uint32_t uid, gid;     /* getuid(), getgid() */
	char comm[16];         /* prctl(PR_GET_NAME) */
};

/*
 * One thread of the target (or ubt itself, for BEGIN/END).  A slot is
 * claimed by the first probe hit in a thread that needs per-thread state
 * (printf, comm/uid/gid, reads) and found again by its thread pointer.
 * 256 bytes (RT_THREAD_SHIFT): probe code finds slot i at threads_off +
 * (i << RT_THREAD_SHIFT).
 *
 *   line 0 (the owning thread writes):  tp tid depth ring_head lost ring_resv tail_seen
 *   line 1 (ubt writes):                ring_tail
 *   line 2 (the owning thread writes):  ids, htid, away from ubt's writes to line 1
 *   line 3:                             unused
 *
 * The owner is the pair {tp, tid} (with depth: the first 16 bytes), which
 * changes only by one cmpxchg16b (rt_thread.c): a free slot is claimed, and
 * the slot of a thread that exited is taken over, its ring flowing on (the
 * same tp with another tid: a new thread in the old one's TCB; a slot ubt's
 * own threads did not claim whose tid no longer exists: any thread when the
 * table is full).  ubt's threads (BEGIN, END, interval) mark their tid with
 * RT_TID_HOST so that no target thread takes their slots.
 */
#define RT_THREAD_SHIFT 8
#define RT_TID_HOST 0x80000000u
struct rt_thread {
	volatile uint64_t tp; /* thread pointer (%fs:0); 0 = free */
	uint32_t tid;
	volatile uint32_t depth; /* probes of this thread running now: more than 1 when a
				  * signal handler's probe runs inside another */
	volatile uint64_t ring_head; /* bytes ever produced */
	volatile uint64_t lost;      /* events dropped because the ring was full */
	uint64_t ring_resv;          /* producer's private head: reserved, not yet committed */
	uint64_t tail_seen;          /* producer's last read of ring_tail: room is checked
				      * against it, so the hot path does not load the line ubt
				      * writes (rt_ring_reserve reloads it when short) */
	uint64_t rd_state; /* rt_read.c: (rd_gen << 1) | direct reads allowed, as last checked */
	volatile uint32_t writing; /* 1 from reading ring_head to publishing it (rt_ring.c) */
	uint32_t pstack; /* 1: this slot's probe stack has its guard page (rt_priv.pstack_base) */
	volatile uint64_t ring_tail; /* bytes ever consumed */
	uint64_t pad1[7];
	struct rt_ids ids; /* comm, uid, gid (rt_builtin.c) */
	/* RT_F_PIDNS: this thread's tid in its namespace | the host's tid << 32,
	 * written as one word by the thread itself (rt_host_tid); probe code
	 * trusts the host half only while the low half is the TCB's tid, so a
	 * word left by the slot's previous owner is never taken for this one's */
	volatile uint64_t htid;
	uint64_t pad2[3];
	/* the number of the system call this thread is in at a site whose
	 * number only %rax knows, plus 1 (0: none seen), for its sys_exit
	 * (codegen/cg_args.c, cg_sys_thread) */
	uint64_t sys_nr;
	uint64_t pad3[7];
};
_Static_assert(sizeof(struct rt_thread) == 1u << RT_THREAD_SHIFT,
	       "probe code finds a thread slot with a shift");

/*
 * Ring records.  A ring is single-producer (its thread, guarded against
 * signal re-entry by `busy`) and single-consumer (ubt).  Records are
 * 8-byte aligned and never wrap: when a record does not fit before the
 * end, an RT_EV_PAD record fills the rest and the record starts at 0.
 *
 *   0        4        6        8
 *   +--------+--------+--------+-------------------------+
 *   | len    | type   | id     | payload (len - 8 bytes) |
 *   +--------+--------+--------+-------------------------+
 *   len: whole record in bytes, a multiple of 8.  The header is one
 *   64-bit constant for a given printf, stored with one instruction.
 *
 * Records carry no timestamp: reading the TSC costs ~14 ns on a VM, most of
 * a printf's budget.  Each thread's ring keeps that thread's order; ubt
 * prints rings one after the other on each drain, so events of different
 * threads follow drain order, as bpftrace's per-CPU perf buffers do.
 *
 * RT_EV_PRINTF: id = printf id (sema_printf.id); payload: the arguments in
 * order, each 8 bytes (integers) or its string size rounded up to 8.
 */
enum rt_event_type {
	RT_EV_PAD = 0,    /* skip to the end of the ring */
	RT_EV_PRINTF = 1, /* printf(fmt, args...) */
	RT_EV_EXIT = 2,   /* exit(): payload u64 exit code */
	RT_EV_MAP = 3,    /* print/clear/zero of a map: struct rt_ev_map */
	RT_EV_VALUE = 4,  /* print(value): id = print id, the value as for printf */
	RT_EV_CALL = 5,   /* system/cat/time/strftime/...: id = call id, arguments as printf */
	RT_EV_WARN = 6,   /* -k/-kk: a helper failed: struct rt_ev_warn */
};

/*
 * join(argv[, delim]) is an RT_EV_CALL whose payload is RT_JOIN_MAX slots
 * of RT_JOIN_ARG_SIZE bytes, argv[0], argv[1], ... each NUL-terminated
 * (and cut to RT_JOIN_ARG_SIZE - 1 bytes); the first empty slot ends the
 * list (rt_fmt.c).  bpftrace 0.17's limits: 16 strings of 1024 bytes.
 */
#define RT_JOIN_MAX 16
#define RT_JOIN_ARG_SIZE 1024

/*
 * RT_EV_WARN payload (only with -k / -kk, bpftrace's helper error checks):
 * where in the script the failing operation is, what it was, and its error,
 * so ubt prints bpftrace's per-event
 *
 *   stdin:1:26-32: WARNING: Failed to probe_read_str: Bad address (-14)
 *
 * with the source line and underline, in the thread's event order.  The
 * location travels in the event, so no table has to be shared between the
 * target's and the host's objects.  Written by rt_warn() (rt_warn.c).
 *
 *   0        4        8          12        16       20
 *   +--------+--------+----------+---------+--------+--------+
 *   | line   | col    | end_line | end_col | helper | err    |
 *   +--------+--------+----------+---------+--------+--------+
 */
enum rt_warn_helper {
	RT_WH_PROBE_READ = 1,          /* *p on an address without address space: probe_read */
	RT_WH_PROBE_READ_STR = 2,      /* str(p), same: probe_read_str */
	RT_WH_PROBE_READ_USER = 3,     /* *p, p->f, a[i] of user memory: probe_read_user */
	RT_WH_PROBE_READ_USER_STR = 4, /* str(p) of user memory: probe_read_user_str */
	RT_WH_MAP_UPDATE = 5,          /* a full map dropped an update: map_update_elem */
	RT_WH_MAP_DELETE = 6,          /* delete() of a missing key: map_delete_elem */
	RT_WH_MAP_LOOKUP = 7,          /* -kk: a read or update found no entry: map_lookup_elem */
};

struct rt_ev_warn {
	uint32_t line, col, end_line, end_col; /* struct src_loc of the operation */
	uint32_t helper;                       /* enum rt_warn_helper */
	int32_t err;                           /* -errno, e.g. -14 (EFAULT) */
};

/*
 * RT_EV_MAP payload.  print(), clear() and zero() act when ubt reaches the
 * event, in the order of the thread's other events, as in bpftrace (where
 * they are asynchronous actions too): `print(@m); clear(@m);` in an
 * interval probe prints the map before clearing it.
 */
enum rt_map_op {
	RT_MOP_PRINT = 1, /* print(@m, top, div) */
	RT_MOP_CLEAR = 2, /* clear(@m): delete every key */
	RT_MOP_ZERO = 3,  /* zero(@m): keep the keys, zero the values */
};

struct rt_ev_map {
	uint32_t op;     /* enum rt_map_op */
	uint32_t map_id; /* sema_map.id */
	uint64_t top;    /* print: keep the top N entries, 0 = all */
	uint64_t div;    /* print: divide values by this, 0 = 1 */
};

struct rt_event_hdr {
	uint32_t len;
	uint16_t type; /* enum rt_event_type */
	uint16_t id;
};

/*
 * Maps.  A scalar map (no keys) has cap 1 and no hash slots.  A keyed map
 * is an insert-only open-addressing hash of key -> entry index; values
 * are stored by index, per CPU for aggregations:
 *
 *   struct rt_map | slots[nslots] (u64) | keys[cap][key_size] | live[cap] (u32) | values
 *
 *   slot: 0 = empty, else (tag << 32) | (index + 1), published with a
 *   release store after the key is written, so a lock-free reader that
 *   sees a slot sees its key.  A key's first slot is the top bits of its
 *   hash (rt_map_hash); the tag, other bits of it, only spares the C
 *   lookup key compares (probe code's inline lookup compares the key).
 *
 *   values, per-CPU kinds (cpu_stride != 0): (ncpu + 1) arrays of
 *   cap * val_size bytes, cpu_stride apart; array ncpu takes updates from
 *   threads whose CPU is unknown, with atomic instructions.
 *   values, shared kinds (cpu_stride == 0): one array of cap * val_size.
 *
 * Inserts take `lock` (a try-lock with a bounded spin: an insert that
 * cannot get it is dropped and counted, never waits unboundedly).
 *
 * Keys are never removed from the hash: delete() clears the entry's live
 * flag and a later insert of the same key revives the entry (zeroing its
 * values first), so a lock-free reader never sees a slot change keys
 * under it.  See docs/ARCHITECTURE.md, "Deleting keys".
 */
enum rt_map_kind {
	RT_MAP_COUNT = 1, /* u64 per CPU, summed */
	RT_MAP_SUM = 2,   /* i64 per CPU, summed */
	RT_MAP_INT = 3,   /* i64 shared, last write wins */
	RT_MAP_STR = 4,   /* string shared, val_size bytes */
	RT_MAP_AVG = 5,   /* {u64 count, i64 sum} per CPU */
	RT_MAP_STATS = 6, /* {u64 count, i64 sum} per CPU */
	RT_MAP_MIN = 7,   /* u64 per CPU: v ^ INT64_MAX, unsigned max; 0 = none */
	RT_MAP_MAX = 8,   /* u64 per CPU: v ^ INT64_MIN, unsigned max; 0 = none */
	RT_MAP_HIST = 9,  /* u64 buckets[nbuckets] per CPU (log2, RT_HIST_BUCKETS) */
	RT_MAP_LHIST = 10, /* u64 buckets[nbuckets] per CPU (linear) */
};

/*
 * hist() buckets: 0 = negative, 1 = 0, 2 = 1, k + 2 = [2^k, 2^(k+1)) for
 * k = 1..62: every 64-bit value has its own bucket (bpftrace 0.17 puts
 * every value >= 2^32 into [2G, 4G)).
 */
#define RT_HIST_BUCKETS 65

/* rt_map_lookup()'s insert argument (rt_map.c) */
enum rt_map_insert {
	RT_INS_NONE = 0,      /* look up only: a dead entry is absent */
	RT_INS_REVIVE = 1,    /* insert; a dead entry comes back with zero values */
	RT_INS_OVERWRITE = 2, /* insert; a dead entry comes back as it is: the
			       * caller writes the whole value, then sets live */
};

struct rt_map {
	uint32_t size;     /* sizeof(struct rt_map) */
	uint32_t kind;     /* enum rt_map_kind */
	uint32_t key_size; /* bytes, a multiple of 8; 0 for a scalar map */
	uint32_t val_size; /* bytes of one value */
	uint32_t cap;      /* entries at most (BPFTRACE_MAP_KEYS_MAX) */
	uint32_t nslots;   /* power of two >= 2 * cap; 0 for a scalar map */
	volatile uint32_t used;    /* entries allocated */
	volatile uint32_t lock;    /* insert lock */
	volatile uint64_t drops;   /* updates dropped: map full or lock busy */
	volatile uint64_t written; /* scalar maps: set on first write */
	uint64_t slots_off; /* from this struct */
	uint64_t keys_off;
	uint64_t vals_off;
	uint64_t cpu_stride; /* 0 for shared kinds */
	uint64_t live_off;   /* u32 live[cap]: 1 while the entry's key is in the map */
	uint32_t nbuckets;   /* hist, lhist: buckets per value */
	uint32_t rows;       /* entry spread (rt_map_nth); 0: entries in order */
};

/*
 * The hash of a map key of `words` 8-byte words: a multiply per word, the
 * words mixed by a xor-shift between them (probe code repeats it inline,
 * cg_map.c).  A key's first slot is the top log2(nslots) bits: they
 * depend on every bit of the key, so one multiply and one shift place an
 * integer key (a tid, a pointer) without further mixing.
 */
#define RT_MAP_HASH_MUL 0x9e3779b97f4a7c15ull

static inline uint64_t rt_map_hash(const uint64_t *key, uint32_t words)
{
	uint64_t h = 0;
	for (uint32_t i = 0; i < words; i++) {
		if (i)
			h ^= h >> 29;
		h = (h ^ key[i]) * RT_MAP_HASH_MUL;
	}
	return h;
}

/* The first slot of hash h in a table of nslots (a power of two; keyed
 * maps have at least 2). */
static inline uint32_t rt_map_slot0(uint64_t h, uint32_t nslots)
{
	return nslots < 2 ? 0 : (uint32_t)(h >> (64 - __builtin_ctz(nslots)));
}

/*
 * Where the n-th entry allocated lives.  Entries are appended, so the first
 * keys of a map (the tids of the threads that run a probe first) would sit
 * side by side, and two threads writing their own entries' values and live
 * flags would share cache lines.  The arrays hold rows * RT_MAP_SPREAD
 * entries (>= cap), and consecutive entries are RT_MAP_SPREAD apart, so
 * they never share a line of values (>= 8 bytes each) or of live flags
 * (4 bytes each); every index below rows * RT_MAP_SPREAD is some n's.
 * Walks over a map go over n, so the order stays the insertion order.
 */
#define RT_MAP_SPREAD 16

static inline uint32_t rt_map_nth(uint32_t rows, uint32_t n)
{
	return rows ? (n % rows) * RT_MAP_SPREAD + n / rows : n;
}

/*
 * The private page: one page of the target's own anonymous memory, mapped
 * right after the data part with MADV_WIPEONFORK.  Everything else ubt
 * maps is shared with ubt (and, after a fork, between parent and child);
 * this page is not: a forked child gets it zero-filled, so `enabled` is 0
 * there and the child's probes do not run on the parent's pid and state;
 * the first one fills the page as the child's own and turns them on
 * while ubt traces the family (rt_fork_enable).  Probe code refers to it
 * as `ubt_priv`.
 */
#define RT_VMA_SLOTS 64
#define RT_VMA_PAGE_BITS 29 /* pages of one cached mapping: up to 2 TiB */

struct rt_priv {
	uint32_t size;             /* sizeof(struct rt_priv) */
	volatile uint32_t enabled; /* probes run only when non-zero */
	uint32_t pid;              /* this process (ubt's own for BEGIN/END) */
	/*
	 * Fault-tolerant reads (rt_read.c): 0 = the runtime's SIGSEGV/SIGBUS
	 * handler is not installed in this process, read with process_vm_readv;
	 * else a generation, raised whenever signal actions or masks may have
	 * changed (ubt's probes on sigaction/sigprocmask), which makes each
	 * thread check again before reading directly.
	 */
	volatile uint32_t rd_gen;
	/*
	 * Where the runtime reads sizes and offsets (rt.h, rt_lay): 0 in a
	 * target (the data part itself); in ubt, for BEGIN/END/interval, ubt's
	 * read-only copy of the data part's headers, at the same offsets.
	 */
	uint64_t layout;
	/*
	 * Probe stacks (rt_pstack.c): the private mapping of nthreads stacks
	 * of pstack_size bytes, 0 when no handler needs one; pstack_seg: the
	 * room of one probe nested in another (RT_PSTACK_DEPTH of them).
	 * Here, not in the header: the mapping is this process's, and ubt's
	 * own BEGIN/END never switch stacks.
	 */
	uint64_t pstack_base, pstack_size, pstack_seg;
	/*
	 * The mappings stacks were found in (rt_vma.c): slot i caches the
	 * readable mapping holding some address whose 64 KiB granule hashes
	 * to i, as (lo >> 12) << 29 | pages (0: empty).  Private, so a forked
	 * child, whose page starts zeroed, learns its own.
	 */
	volatile uint64_t vma[RT_VMA_SLOTS];
	/*
	 * vfork/posix_spawn (rt_on_vfork, rt_vfork_id): the thread pointer of
	 * the thread that last called one, else 0.  Its child shares this page,
	 * the thread's TCB and header, so `pid` and `tid` of a thread whose
	 * %fs:0 matches come from the kernel until that thread runs again.
	 */
	volatile uint64_t vfork_tp;
	/*
	 * A static program started by `ubt -c` is stopped at its entry point,
	 * before it has a thread pointer: probe code that reads %fs there
	 * faults.  ubt then leaves `enabled` 0 and sets this; ubt's own probe
	 * on the function that calls main (rt_tls_ready) turns the probes on.
	 */
	volatile uint32_t enable_at_main;
};

/*
 * Probe stacks (rt_pstack.c; DESIGN.md decision 15: any stack, any
 * runtime).  A handler whose frame or callees would need more of the
 * target's stack than RT_TARGET_FRAME bytes runs on a stack of its thread
 * slot's instead, in a private anonymous mapping ubt makes (rt_priv
 * pstack_*): slot i's is [lo, hi) = [base + i * size, base + (i + 1) *
 * size), its lowest page made inaccessible when a thread first takes the
 * slot.  Its stub sets %r11 to the handler and jumps to rt_pstack_call,
 * which finds the thread's slot, raises its depth and calls, on the probe
 * stack,
 *
 *     handler(rdi, rsi, rdx, rcx, r8, r9, F, thread)      preserve_most
 *
 * F: the trampoline's frame (what a handler on the target's stack finds
 * just above its return address: struct rt_entry_frame, rt_ret_frame, or
 * a pointer to struct rt_regs_mid), thread: the slot (its depth raised).
 * A probe inside another (a signal handler's) starts seg below the one it
 * interrupted, or right below the current %rsp when that is on the
 * stack already (a handler running on it):
 *
 *    lo       lo + 4096                                                 hi
 *    | guard |  ...                 | depth 2 | depth 1 | depth 0 (top) |
 *                                              <- seg ->
 *
 * The target's own stack then sees the trampoline's words and
 * rt_pstack_call's: 48 bytes below the probed function's stack pointer, up
 * to ~190 the first time a thread hits a probe (rt_thread_find, in C).
 * Handlers that stay on it (a count, a map update by tid) use at most
 * RT_TARGET_FRAME bytes of frame (codegen checks LLVM's frame sizes).
 */
#define RT_PSTACK_DEPTH 4
#define RT_PSTACK_GUARD 4096
#define RT_TARGET_FRAME 96

/*
 * Registers saved by a trampoline, in memory order from its stack
 * pointer upward.  At a function entry `ret` is the return address and
 * the probed function's stack pointer was &ret.
 */
struct rt_regs {
	uint64_t r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi;
	uint64_t ret;
};
/* In a return probe, the probed function (`func`) is the word below the block. */
#define RT_RET_FUNC_OFF (-8)

/*
 * How trampolines call the probe code codegen emits for the target
 * (handlers).  A handler uses LLVM's preserve_most convention: it keeps
 * every general-purpose register but %r11 (and the flags), so a
 * trampoline saves only %r11 and the registers its own code uses, and
 * the handler saves just the registers it touches (all of them only when
 * it calls a runtime function).  Its parameters are the six argument
 * registers as the probed code left them (rdi rsi rdx rcx r8 r9: arg0 is
 * the first parameter); everything else is in its caller's frame F, the
 * words from the trampoline's %rsp at the `call` upward (just above the
 * handler's own return address):
 *
 *   entry trampoline (tramp.c, tramp_ret.c)  F: r11 ret        struct rt_entry_frame
 *   return stub (tramp_ret.c)                F: func rax r11 ret
 *                                                              struct rt_ret_frame
 *   mid-function site (mid.c)                F: &regs          struct rt_regs_mid *, of
 *      which only rax, r11, flags and the slots in arch_site_plan.mid_read are saved
 *
 * Codegen (codegen.c) rebuilds a struct rt_regs from these, so builtins
 * keep reading registers at their rt_regs offsets.  The runtime's own
 * handlers (rt_ret_unwind) are gcc-built C: their sites use the older
 * trampoline that saves all nine caller-saved registers as struct rt_regs
 * and passes its address (arch_site_plan.c_abi).
 */
/*
 * Runtime functions that keep every register but their result (gcc's
 * no_caller_saved_registers, RT_PRESERVING in rt.h).  Probe code calls them
 * in LLVM's preserve_most convention (codegen.c), so a call on a probe's hot
 * path (nsecs, a map insert) does not make the probe save all nine
 * caller-saved registers; the callee saves the few it uses.  Every name
 * here must carry RT_PRESERVING in the runtime.
 */
#define RT_PRESERVING_FUNCS "rt_nsecs", "rt_map_lookup_pm", "rt_map_delete_pm"
/* (rt_map_lookup/delete themselves are plain C: as no_caller_saved_registers
 * functions they save fifteen registers, which measured slower when every
 * update called them.  Probe code inlines the common lookup (cg_map.c) and
 * calls rt_map_lookup only on its slow path, through rt_map_lookup_r11
 * (rt_map.c: one register in and out, so the probe's hot path sets up no
 * arguments), and through the _pm wrappers where it cannot inline.) */

/*
 * Site ids.  A probe whose sites have different `probe` names
 * (`uprobe:libc:* { @[probe] = count(); }`) is compiled once, not once per
 * name: its names are a table in the probe code (attach/resolve/names.c,
 * codegen/cg_call.c), and each trampoline tells the handler which entry is
 * its site's.  The trampoline follows its `call handler` with a 7-byte
 * no-op whose displacement is the id,
 *
 *   call handler          (nop; call rel32, or call *lit(%rip))
 *   0f 1f 80 <id32>       nopl id(%rax): the handler's return address + 3
 *
 * so the handler reads the id from its own return address (the word just
 * below F, as `func` does) at no cost to the trampoline's registers, and
 * the no-op costs the returning trampoline about nothing.  Sites of
 * probes that do not need an id keep the shorter calls.
 */
#define RT_SITE_ID_OFF 3 /* from the handler's return address to the id (u32) */

struct rt_entry_frame {
	uint64_t r11;
	uint64_t ret; /* the return address; the probed function's %rsp was &ret */
};

struct rt_ret_frame {
	uint64_t func; /* the probed function */
	uint64_t rax, r11;
	uint64_t ret; /* the caller's return address, put back by the stub */
};

/*
 * Registers saved by a trampoline at a site in the middle of a function (a
 * USDT location, arch_plan_mid_site()).  The first nine words are laid out
 * as in struct rt_regs; every other general-purpose register follows,
 * because a USDT argument may live in any of them, and the stack pointer is
 * the interrupted code's own (the trampoline stepped over its red zone).
 * Only rax, r11, flags and the slots the site's handlers read
 * (arch_site_plan.mid_read) are written.
 *
 *   0    r11 r10 r9 r8 rax rcx rdx rsi rdi        as struct rt_regs
 *   72   pc                                        the site (rt_regs.ret's slot)
 *   80   rbx rbp r12 r13 r14 r15
 *   128  rsp                                       before the trampoline
 *   136  flags                                     lahf in bits 8-15, seto in bit 0
 */
struct rt_regs_mid {
	uint64_t r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi;
	uint64_t pc;
	uint64_t rbx, rbp, r12, r13, r14, r15;
	uint64_t rsp;
	uint64_t flags;
};

/*
 * Return probes.  A thread's shadow stack holds one entry per hijacked
 * call: where the return address was (sp, the slot the trampoline's
 * `call body` overwrote with `stub`), the caller's return address, and
 * stub.  (sp, stub) is the entry's identity: a return is matched by the
 * slot it runs on and by the trampoline it runs through, never by sp
 * alone.  Tail calls between probed functions make chains: entries with
 * the same sp, each one's ret the stub of the one below it (f3 jumps to
 * f4: f4's entry saves f3's stub as its ret).  Shadow stacks live in a
 * MAP_PRIVATE anonymous mapping (a forked child keeps its own copy),
 * rets_addr in the header, one struct rt_ret_stack per thread slot (same
 * hash of the thread pointer as the thread table, but a table of its own:
 * it is per process).
 *
 *   0       8       16      24      32                       2048                 16384
 *   +-------+-------+-------+-------+------- ... -----------+------- ... ---------+
 *   | tp    |tid|top|busy|nr|gc|rd  | e[0] ... e[DEPTH-1]   | park[0..PARK-1]     |
 *   +-------+-------+-------+-------+------- ... -----------+------- ... ---------+
 *   each entry 32 bytes: sp ret stub pad
 *
 * e[0..top) are ordered by sp, highest first (the outermost call).  park[]
 * holds entries taken off e[] whose frames may still be live on another
 * stack (a coroutine that switched away): free when sp is 0.  A thread
 * that never parks never touches the pages of park[].  Only the
 * owning thread writes its slot; another thread looking for a frame that
 * migrated with its coroutine only reads (rt_ret.c).
 *
 * e.sp bit 0 set: "restored", the slot holds ret again for an unwinder
 * (only where ubt could not hook the unwinder's FDE lookup, rt_ret.c).
 */
#define RT_RET_DEPTH 63 /* with the header, e[] ends at 2048 */
#define RT_RET_PARK 448 /* sizeof(struct rt_ret_stack) is then 16 KiB: found with a shift */
/*
 * e.sp while a push is half done (tramp_ret.c): above every stack address,
 * so a signal handler running in between neither drops nor matches it, and
 * bit 0 is set, so unwinder hand-back and detach skip it.
 */
#define RT_RET_PENDING (~0ull)
/* slot of thread pointer tp: ((tp * MUL) >> SHIFT) & (nthreads - 1), in
 * rt_ret.c, the return trampolines (tramp_ret.c) and ret.c alike */
#define RT_TP_HASH_MUL 0x9e3779b97f4a7c15ull
#define RT_TP_HASH_SHIFT 40

struct rt_ret_entry {
	uint64_t sp;   /* address of the return slot; bit 0: restored */
	uint64_t ret;  /* the caller's return address */
	uint64_t stub; /* what the slot holds while hijacked */
	uint64_t pad;
};

struct rt_ret_stack {
	volatile uint64_t tp; /* thread pointer; 0 = free */
	uint32_t tid;
	volatile uint32_t top;  /* entries in use */
	volatile uint32_t busy; /* inside rt_ret_enter/leave/unwind */
	uint32_t nrestored;     /* entries with the restored bit */
	uint32_t gc_skip;       /* parks to go before the next clean-up of a full park[] */
	uint32_t rd_state;      /* rt_read_u64's cache (rt_read.c) */
	struct rt_ret_entry e[RT_RET_DEPTH];
	struct rt_ret_entry park[RT_RET_PARK];
};
#define RT_RET_STACK_SHIFT 14
_Static_assert(sizeof(struct rt_ret_stack) == 1u << RT_RET_STACK_SHIFT,
	       "the return trampolines index shadow stacks with a shift");

#endif
