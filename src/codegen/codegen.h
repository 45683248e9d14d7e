/*
 * codegen.h - from a checked AST to machine code, with LLVM 19's C API.
 *
 * Pipeline position: after sema_check(), before attach.  cg_layout()
 * decides where every map, thread slot and ring lives in the shared data
 * part (runtime/abi.h); cg_compile() then emits one function per probe,
 *
 *     void ubt_probe_<N>(struct rt_regs *regs);
 *
 * as a relocatable x86-64 ELF object (LLVMTargetMachineEmitToMemoryBuffer,
 * PIC).  The object refers to the shared data through the hidden symbol
 * `ubt_shm` and to runtime helpers (rt_*) by name; attach links it with
 * the runtime object at the addresses it gets in the target.
 *
 * Code is specialised for the process it will run in (struct cg_facts):
 * where rseq and the thread id live in its TCB, how many CPUs there are.
 * BEGIN/END run inside ubt itself, so they are compiled separately with
 * ubt's own facts (CG_SIDE_HOST).
 */
#ifndef UBT_CODEGEN_H
#define UBT_CODEGEN_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "parser/ast.h"
#include "sema/sema.h"
#include "runtime/abi.h"

/*
 * Where a USDT argument lives at one location, from the note's operand text
 * (attach/resolve/usdt.c parses it).  Registers are named by their byte offset in
 * struct rt_regs_mid (runtime/abi.h), which the mid-function trampoline
 * fills:
 *
 *   -4@%edx                   REG   reg=rdx size=4 signed
 *   1@%ah                     REG   reg=rax shift=8 size=1
 *   8@-16(%rbp)               MEM   base=rbp disp=-16
 *   2@8(%rax,%rcx,2)          MEM   base=rax index=rcx scale=2 disp=8
 *   -2@g(%rip), -4@40+g(%rip) MEM   pcrel disp=g+40-location (site-relative)
 *   8@g(,%rax,8)              MEM   pcrel index=rax scale=8 (non-PIC array)
 *   4@%fs:-8, 4@%fs:v@tpoff   MEM   seg=fs disp=-8 (from the thread pointer)
 *   -4@$-7                    CONST val=-7
 *   8@$g                      CONST pcrel val=g-location (an address)
 *   4@%xmm0                   BAD   (attach/resolve/usdt_args.c says why; reading it is an error)
 */
enum cg_usdt_arg_kind {
	CG_USDT_CONST, /* val (+ the location's address when pcrel) */
	CG_USDT_REG,   /* (reg >> shift), size bytes */
	CG_USDT_MEM,   /* size bytes at [seg:] base + index * scale + val (+ location) */
	CG_USDT_BAD,   /* an operand ubt cannot read: only a script that reads it fails */
};

enum cg_usdt_seg {
	CG_USDT_SEG_NONE, /* also %cs %ds %es %ss: base 0 in 64-bit mode */
	CG_USDT_SEG_FS,   /* %fs: relative to the thread pointer */
};

#define CG_USDT_MAX_ARGS 12
#define CG_USDT_NOREG 0xff

struct cg_usdt_arg {
	uint8_t kind;      /* enum cg_usdt_arg_kind */
	uint8_t size;      /* 1, 2, 4, 8 */
	bool is_signed;    /* negative size in the note: sign-extend */
	uint8_t reg;       /* REG, MEM base: offset in struct rt_regs_mid, or CG_USDT_NOREG */
	uint8_t index;     /* MEM index register, or CG_USDT_NOREG */
	uint8_t scale;     /* 1, 2, 4, 8 */
	uint8_t shift;     /* REG: 8 for %ah %bh %ch %dh */
	uint8_t seg;       /* MEM: enum cg_usdt_seg */
	bool pcrel;        /* CONST, MEM: add the location's run-time address (a symbol) */
	int64_t val;       /* CONST value, MEM displacement */
};

/* The argument list of one or more locations (those with equal lists share it). */
struct cg_usdt_spec {
	int nargs;
	struct cg_usdt_arg args[CG_USDT_MAX_ARGS];
	/* a system-call tracepoint's site (attach/resolve/syscalls.c): the call's
	 * number, which `args` holds at offset 8, and which side it runs on */
	int sys_nr;	  /* -1: only %rax knows it when the site runs (sys_dyn) */
	uint8_t sys_kind; /* enum cg_sys_kind */
	const struct cg_sys_dyn *sys_dyn;
};

/*
 * The calls a probe wants at a site whose number only %rax knows
 * (syscall(2), _exit's `mov %esi,%eax`): the variant reads the number when
 * it runs and goes on only for these, with names[i] as `probe` for nr[i].
 * n 0: every call (raw_syscalls), `probe` the variant's name.  Owned by the
 * session (attach/resolve/syscalls.c), shared by the attach point's sites.
 */
struct cg_sys_dyn {
	int n;
	int *nr; /* ascending */
	char **names;
};

#define CG_SYS_SAVE (-2)

enum cg_sys_kind {
	CG_SYS_NONE,  /* not a system-call site */
	CG_SYS_ENTER, /* before the call: arguments in rdi rsi rdx r10 r8 r9 */
	CG_SYS_EXIT,  /* after it: its result in rax */
};

/*
 * A usdt probe block is compiled once per distinct argument list among
 * its locations: ubt_probe_<N>_u<K> reads its arguments per specs[K].
 *
 * A probe that reads the `probe` builtin, or has system-call sites (each
 * call's number is a constant of its variant), has a variant for every
 * point: specs[K].nargs is -1 for a site that is not a usdt location (a
 * uprobe, uretprobe or FUNC+OFF site).  Its sites' full names (a
 * wildcard, a list of attach points) are data, not variants: names[] holds
 * the distinct names (attach/resolve/names.c), name_of[K] is the one name
 * of variant K's sites, or -1 when they have several: variant K then reads
 * its site's name from a table of names[], indexed by the site id its
 * trampoline passes (runtime/abi.h, "Site ids").  So `uprobe:libc:*
 * { @[probe] = count(); }` compiles one function for 3,000 names.  names
 * is NULL when the probe does not read `probe` and has no system-call
 * site.
 */
struct cg_usdt_variants {
	int probe_index;
	int nspecs;
	struct cg_usdt_spec *specs;
	char **names;
	int nnames;
	int *name_of; /* [nspecs] */
};

struct cg_facts {
	bool has_rseq;    /* struct rseq at %fs:rseq_off */
	int64_t rseq_off;
	bool rseq_node;   /* the kernel fills its node_id (numaid) */
	bool has_tid;     /* kernel tid at %fs:tid_off */
	int32_t tid_off;
	bool pidns; /* the target's pid namespace is not ubt's: `tid` is the host's,
		     * kept in the thread's slot (rt_thread.htid, RT_F_PIDNS) */
	/* usdt probes: argument lists of their locations (attach/resolve/usdt.c) */
	const struct cg_usdt_variants *usdt;
	int nusdt;
	/* syscall_name(): x86-64's system-call names by number, NULL where a
	 * number has none (attach/resolve/syscalls.c, att_sys_names) */
	const char *const *sys_names;
	int nsys_names;
};

struct cg_map_layout {
	const struct sema_map *map;
	uint64_t off;       /* struct rt_map's offset in the data part */
	struct rt_map hdr;  /* the header ubt writes there */
	uint64_t bytes;     /* total bytes including the header */
};

struct cg_layout {
	uint64_t data_size; /* bytes of the data part, page aligned */
	uint32_t ncpu, nthreads, ring_size;
	uint64_t threads_off, rings_off;
	struct cg_map_layout *maps; /* indexed by sema_map.id */
	int nmaps;
	uint64_t stacks_off;           /* ustack: struct rt_stack_table, 0 if none */
	struct rt_stack_table stacks;  /* its header, written by attach */
	int helper_checks;             /* -k: 1, -kk: 2 (from cg_options; cg_check.c) */
};

struct cg_options {
	uint32_t map_keys_max; /* BPFTRACE_MAP_KEYS_MAX, default 4096 */
	uint32_t ring_size;    /* bytes per thread ring */
	uint32_t nthreads;     /* thread table capacity */
	uint32_t ncpu;         /* possible CPUs of this machine */
	int helper_checks;     /* bpftrace's -k (1) / -kk (2): per-event warnings when a
				* read of target memory (2) fails (cg_check.c) */
};

enum cg_side {
	CG_SIDE_TARGET, /* uprobes: runs in the target */
	CG_SIDE_HOST,   /* BEGIN, END: runs in ubt */
};

struct cg_probe {
	const struct ast_node *probe; /* the AST_PROBE */
	char *sym;                    /* "ubt_probe_<index>" */
	int index;                    /* position among the program's probes */
};

struct cg_object {
	void *elf; /* relocatable ELF object, malloc'ed */
	size_t elf_size;
	struct cg_probe *probes;
	int nprobes;
	char *ir; /* textual IR, kept when asked for (-d ir) */
	char *asm_text; /* assembly, kept when asked for (-d asm) */
	bool reads_target; /* calls rt_read/rt_read_str: attach installs the fault handler */
	bool uses_stack;   /* calls rt_stack_id: mid-function trampolines save pc, rsp, rbp */
	uint32_t mid_regs; /* reg() in usdt/FUNC+OFF probes: slots of struct rt_regs_mid
			    * (bit = offset / 8) mid-function trampolines must save */
	uint32_t ids_used; /* enum rt_ids_use: comm/uid/gid read from the thread's cache,
			    * which ubt's poll of /proc/PID/task keeps fresh (attach/target/ids.c) */
	bool pstack;           /* code runs on probe stacks (runtime/thread/rt_pstack.c): handlers,
				* or the slow path of map lookups of handlers that do not */
	uint32_t pstack_frame; /* the largest frame of a handler on a probe stack */
};

/*
 * A handler's frame on a probe stack may be this big at most (a tuple of
 * 64 strings of 200 bytes needs ~13 KiB a copy); past it the script is
 * refused, as bpftrace refuses one past its 512-byte BPF stack.
 */
#define CG_PSTACK_FRAME_MAX (128u << 10)

void cg_layout(const struct sema_info *info, const struct cg_options *opt, struct cg_layout *out);
/* Values of this map are per CPU (summed when read) rather than shared. */
bool cg_map_percpu(const struct rt_map *h);
/* Bytes a key of this type takes in a map's key (8 or a string's size rounded to 8). */
uint32_t cg_key_bytes(const struct ast_type *t);
/* Buckets of an lhist() map. */
uint32_t cg_lhist_buckets(const struct sema_map *m);
void cg_layout_free(struct cg_layout *l);

/*
 * Compiles the probes of one side.  Returns 0, or -1 after adding a
 * diagnostic (an internal code generation failure).
 */
int cg_compile(const struct ast_node *prog, const struct sema_info *info,
	       const struct cg_layout *layout, const struct cg_facts *facts, enum cg_side side,
	       bool keep_text, struct cg_object *obj, struct diags *diags);
void cg_object_free(struct cg_object *obj);

#endif
