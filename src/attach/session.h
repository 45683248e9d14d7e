/*
 * session.h - struct att_session and the records it holds (resolved
 * points, sites, regions, semaphores): the state every attach room shares.
 *
 * Room rule: this header is attach's own.  Files under src/attach/ include
 * it; nothing outside does (tests/layers/check.py fails on such an
 * include): the driver (tools/) and every other room see only the
 * incomplete struct att_session of attach.h and call its accessors
 * (inject/view.c), so that a field can move, or a feature's part of the
 * session become its own, without touching them.
 */
#ifndef UBT_ATTACH_SESSION_H
#define UBT_ATTACH_SESSION_H

#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include "attach/attach.h"
#include "attach/arch/arch.h"
#include "attach/inject/link.h"
#include "attach/target/tracee.h"
#include "elf/elfsym.h"
#include "codegen/codegen.h"

struct proc_map;

/* One resolved uprobe attach point. */
struct att_point {
	const struct ast_node *probe;  /* AST_PROBE */
	const struct ast_node *attach; /* AST_ATTACH */
	int probe_index;               /* index of the probe in the program */
	char *path;                    /* binary as written */
	char *func;
	uint64_t vaddr;                /* symbol's link-time address */
	uint64_t size;                 /* symbol size, 0 if unknown */
	uint64_t fill;		       /* alignment fill after it that no symbol owns (usdt:
					* after the function around the location) */
	dev_t dev;
	ino_t ino;
	/* usdt (attach/resolve/usdt.c): vaddr is the location (base-adjusted), not a function */
	bool usdt;
	uint64_t func_vaddr, func_size; /* the function around the location */
	enum ef_bounds func_from;	/* where its bounds came from (elf/bounds.c) */
	uint64_t sema;                  /* semaphore's link-time address, 0 if none */
	int variant;			/* the probe's cg_usdt_variants.specs[] (usdt argument
					 * list, system call), -1: none */
	int name_id;			/* its `probe` name: cg_usdt_variants.names[] (names.c),
					 * the site id its trampoline passes when the variant
					 * has several names (runtime/abi.h, "Site ids") */
	/* uprobe at FUNC+OFF or inside a function (resolve.c): a mid-function
	 * site at vaddr, in the function at func_vaddr/func_size */
	bool mid;
	uint64_t bias; /* mid: the load bias found while planning */
	bool loaded;   /* mid: bias is set */
	bool main_exe; /* an executable (not a library): it must be loaded at attach */
	bool pending;  /* its library was not loaded at attach: armed when it is (dlopen.c) */
	/* a system-call tracepoint's site (resolve/syscalls.c): a mid-function
	 * site at the `mov $NR, %eax` of a wrapper (enter) or just after its
	 * `syscall` (exit); func is the event's name (sys_enter_write) */
	uint8_t sys_kind; /* enum cg_sys_kind */
	int sys_nr;	  /* -1: only %rax knows it (sys_dyn says which calls the point wants) */
	bool sys_at_insn; /* the site is the `syscall` itself (no `mov $NR` a jump can go
			   * over: read's `xor %eax,%eax`, the dynamic sites) */
	bool sys_after;	  /* and this is its exit side (arch_site_plan.mid_after) */
	const struct cg_sys_dyn *sys_dyn;
};

/* A system-call tracepoint's attach point (resolve/syscalls.c), whose sites
 * are looked for again in every object of the process once it is open. */
struct att_sys_attach {
	const struct ast_node *probe, *a;
	int index;
	const struct cg_sys_dyn *dyn;	   /* its sys_enter at dynamic sites, or NULL */
	const struct cg_sys_dyn *dyn_exit; /* its sys_exit there, or NULL */
};

/* A USDT semaphore this session incremented in the target. */
struct att_sema {
	uint64_t addr; /* in the target */
	bool held;
	bool taken; /* incremented at arm: a process forked since holds it too (forks.c) */
};

/*
 * A mapping ubt makes in the target (placement.c att_region_map/unmap).
 * The state changes only around the remote mmap/munmap; MAPPING and
 * UNMAPPING mean that call may have been in flight when ubt died, and the
 * watchdog tells from the rescue record (struct tracee_rescue, whose seq
 * the call was given) whether it was made.  Nothing is ever unmapped that
 * is not known to be ours.
 */
enum att_region_state {
	ATT_RG_NONE,
	ATT_RG_MAPPING,   /* mmap in flight */
	ATT_RG_MAPPED,
	ATT_RG_UNMAPPING, /* munmap in flight */
};

struct att_region {
	uint64_t addr, len;
	volatile int state; /* enum att_region_state */
	uint32_t seq;       /* tracee_rescue.seq of the call in flight */
};

/* ubt's own probes (readsafe.c, ret.c, dlopen.c) at most, besides one site per point */
#define ATT_OWN_SITES 16
#define ATT_MAX_SEMAS 256  /* usdt semaphores in one session */
#define ATT_SYS_LATE_SITES 4096 /* -c: room for system-call sites outside libc */

/* One patched address, shared by every probe on it. */
/* A file by its device and inode. */
struct att_file_id {
	dev_t dev;
	ino_t ino;
};

struct att_site {
	struct arch_site_plan plan;
	uint64_t func_addr, func_len;
	enum ef_bounds func_from; /* mid: where func_len came from (elf/bounds.c) */
	uint64_t tramp;        /* trampoline address in the target */
	uint64_t handlers[16]; /* probe functions, in program order */
	int variants[16];      /* variant of each handler (usdt argument list, system call:
				* att_point.variant), else -1 */
	int name_ids[16];      /* its point's att_point.name_id: the site id it gets when its
				* variant has several names (runtime/abi.h, "Site ids") */
	int nhandlers;
	bool mid;              /* a usdt location inside a function (rt_regs_mid) */
	uint64_t rhandlers[16]; /* return probe functions (uretprobe), in program order */
	int rvariants[16];      /* their variants, as variants[] */
	int rname_ids[16];	/* their name ids, as name_ids[] */
	int nrhandlers;
	const char *internal;  /* runtime function as the only handler (ubt's own probe) */
	uint64_t copy_addr;    /* relocated copy of the displaced instructions */
	int island;            /* 0: trampoline in the main code; i: in islands[i - 1] */
	uint8_t patch[ARCH_MAX_DISPLACED];
	uint8_t redir_patch[ARCH_MAX_REDIRS][4];	/* plan.redir[k]'s new rel32 (or rel8) */
	uint8_t hop_patch[ARCH_MAX_HOPS][ARCH_HOP_LEN]; /* plan.hop[h]'s jmp */
	bool patched;
};

struct att_session {
	struct att_point *points;
	int npoints;
	pid_t pid_hint; /* -p PID, for resolving library names (set before att_resolve) */
	bool probe_inline; /* config probe_inline: inlined copies are probed too (att_resolve) */
	bool quiet;	   /* --no-warnings: resolve warns about nothing */
	bool resolving;	   /* inside att_resolve (the inlined copies are looked at) */
	/* usdt: argument lists for codegen, and semaphores held in the target */
	struct cg_usdt_variants *usdt;
	int nusdt;
	struct cg_sys_dyn **sys_dyns; /* the points' at dynamic system-call sites */
	int nsys_dyns;
	struct att_sys_attach *sys_attach; /* the system-call tracepoints' attach points */
	int nsys_attach;
	dev_t sys_libc_dev; /* the libc resolve scanned (the other objects: att_sys_objects) */
	ino_t sys_libc_ino;
	struct att_file_id *sys_seen; /* every object scanned for system-call sites */
	int nsys_seen;
	int sys_nojump; /* system-call sites on the `syscall` itself left unpatched (plan_mid.c) */
	int sys_nojump_said; /* of them, those a warning counted already (libraries loaded later) */
	bool wait_main; /* a static -c program without a thread pointer yet: probes on at main */
	struct att_sema semas[ATT_MAX_SEMAS]; /* in the shared session: the watchdog
					       * releases those still held if ubt dies */
	int nsemas;
	bool has_target;
	struct tracee t;
	/* shared memory: code then data, one memfd */
	size_t code_size, data_size;
	uint8_t *local;          /* ubt's RW mapping of code + data */
	uint64_t remote_code;    /* target address of the code part */
	uint64_t remote_data;    /* target address of the data part */
	uint64_t remote_priv;    /* target address of the private page (struct rt_priv) */
	bool remote_mapped;      /* ubt's memory is (or may be) in the target */
	struct att_region rg_code, rg_data, rg_priv; /* the three parts, mapped one by one */
	int64_t remote_fd;       /* the memfd's descriptor in the target while open, else -1 */
	uint64_t memfd_dev, memfd_ino; /* identify the memfd in /proc/PID/maps (forks.c) */
	int64_t host_proc_fd;	       /* ubt's /proc in a target of another pid namespace, else -1
					* (features/hostids.c); host_proc_dev: that procfs's st_dev */
	uint64_t host_proc_dev;
	bool trap_installed; /* our SIGTRAP handler is the target's action */
	int ntraps;          /* entries of the header's traps[] (written there, never read back) */
	struct rt_sigaction_k old_trap; /* the application's SIGTRAP action */
	uint64_t rt_sigtrap;            /* our handler's address in the target */
	/* fault-tolerant reads (readsafe.c) */
	bool read_watched;              /* libc's sigaction/sigmask functions are probed */
	bool sig_watched;               /* ... and keep SIGTRAP ours (rt_trap.c) */
	pid_t trap_blocked[64];         /* threads that blocked SIGTRAP when we attached:
					 * blocked again at detach (session.c) */
	int ntrap_blocked;
	bool uses_stack;                /* probe code walks stacks: mid-function sites save
					 * pc, rsp, rbp (cg_object.uses_stack) */
	uint32_t mid_regs;              /* reg() reads these rt_regs_mid slots at mid sites */
	bool segv_installed, bus_installed; /* rt_sigsegv is the target's action */
	struct rt_sigaction_k old_segv, old_bus; /* the application's actions */
	uint64_t rt_sigsegv;            /* our handler's address in the target */
	struct link_image image;
	struct att_site *sites; /* max_sites of them, in memory shared with the watchdog */
	int nsites, max_sites;
	size_t sites_bytes;
	/* code pages for sites out of rel32 reach of the main code (anonymous, R-X) */
	struct att_island {
		uint64_t addr, size, used;
		struct att_region rg;
	} islands[8];
	int nislands;
	uint64_t remote_rets; /* private shadow stacks of return probes (ret.c), 0: none */
	struct att_region rg_rets;
	bool ret_fde_hooked;  /* libgcc's _Unwind_Find_FDE has ubt's probe (ret.c) */
	struct att_region rg_pstack; /* private probe stacks (pstack.c) */
	/* BEGIN/END, linked for ubt's own address space */
	uint8_t *host_code;      /* + the host's private page at its end */
	size_t host_code_size;
	struct rt_priv *host_priv;
	uint8_t *host_layout;    /* the headers of the data part, ubt's read-only copy: what
				  * the host's runtime reads the layout from (rt_priv.layout) */
	size_t host_layout_size;
	struct link_image host_image;
	const struct cg_layout *layout;
	const struct cg_object *tobj; /* the probe code in the target (att_install) */
	struct cg_facts facts; /* the target's, as probe code was built for */
	/* xref.c: per file, branches from one function into another (planning only) */
	struct att_xref *xrefs;
	int nxrefs;
	FILE *rsys_out; /* -d rsys: each remote system call printed here (dump.c), or NULL */
	/* how long the target's threads were stopped, for -v */
	uint64_t stop_start_ns, attach_stop_ns, detach_stop_ns;
	uint64_t install_stop_ns; /* one thread, while our memory went in (0: all were) */
	int attach_nthreads;
	/* dlopen.c: libraries loaded after attach */
	uint64_t dl_state;  /* &_r_debug.r_state in the target, 0: not watching */
	uint64_t dl_seen;   /* rt_shm_header.dl_events as last handled */
	/* profile.c: profile probes' timers and signal in the target */
	int prof_sig;                   /* 0: no profile probe */
	bool prof_installed;            /* rt_profile_sig is prof_sig's action */
	uint64_t prof_handler;          /* rt_profile_sig in the target */
	struct rt_sigaction_k prof_old; /* the application's action for prof_sig */
	int32_t prof_timers[RT_PROF_MAX];
	int nprof_timers;
	/* watchdog.c: restores the target if ubt dies */
	pid_t watch_pid;
	int watch_fd;
	pid_t ubt_pid;  /* the tracer the watchdog watches */
	/* forks.c: processes forked while attached, restored at detach */
	uint64_t armed_ticks;     /* CLOCK_BOOTTIME at arm, in clock ticks (their start time is later) */
	pid_t main_pid;           /* the traced process; t.pid differs while a fork child is restored */
	bool in_fork;             /* t is a fork child being restored */
	struct att_armed {        /* what a fork child inherited: the session as armed */
		bool valid;
		bool trap, segv, bus, prof;
		struct att_region code, data, priv, rets, pstack, islands[8];
	} armed;
};

#endif
