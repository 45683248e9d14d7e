/*
 * rt.h - internal declarations of the runtime injected into the target.
 *
 * The runtime is linked by ubt itself (src/attach/inject/link.c) together with the
 * probe code, into memory it maps in the target.  It has no dynamic
 * relocations, no writable data of its own (all state is in the shared
 * data part, reached through `ubt_shm`), no dependency on the target's
 * libc or loader, and never calls exit/abort/printf: trouble is reported
 * through counters in shared memory.  Built with -mgeneral-regs-only
 * because trampolines do not save vector registers.
 *
 * Room rule: code here runs inside the target, in any thread, at any
 * instruction of the program: it includes only abi.h, rt.h and the
 * compiler's freestanding headers, and nothing of ubt's.  The files are
 * in three folders (meson.build lists them in link order): thread/ (the
 * target's threads: per-thread state, probe stacks, the handlers
 * trampolines and signals enter), data/ (maps, the event ring, formatted
 * values, strings, builtins, time, warnings) and mem/ (safe reads, the
 * mappings they may touch, stacks, the runtime's own allocations).
 */
#ifndef UBT_RT_H
#define UBT_RT_H

#include <stddef.h>
#include <stdint.h>
#include "abi.h"

#define RT_API __attribute__((visibility("hidden")))
/* keeps every register but its result: abi.h, RT_PRESERVING_FUNCS */
#define RT_PRESERVING __attribute__((no_caller_saved_registers))

/* The data part's first byte; defined by the linker at attach time. */
extern char ubt_shm[] RT_API;

static inline struct rt_shm_header *rt_hdr(void)
{
	return (struct rt_shm_header *)ubt_shm;
}

/* This process's private page (abi.h, struct rt_priv); defined by the linker. */
extern struct rt_priv ubt_priv RT_API;

/*
 * Where the runtime reads the layout (sizes, offsets, capacities of the
 * header, the thread table, the rings and each map): a copy of the data
 * part's headers at the same offsets.  In the target it is the data part
 * itself (ubt_priv.layout is 0).  In ubt (BEGIN, END, interval probes run
 * there against the same shared memory) it is ubt's read-only copy, so a
 * target that rewrites the shared headers cannot steer ubt's own writes
 * (docs/ARCHITECTURE.md, "Shared memory is untrusted").  Counters and
 * contents (used, lock, slots, keys, values, ring heads) are always read
 * from ubt_shm, and an index found there is checked against the layout.
 */
static inline const char *rt_layout_base(void)
{
	return ubt_priv.layout ? (const char *)ubt_priv.layout : ubt_shm;
}

static inline const struct rt_shm_header *rt_lay(void)
{
	return (const struct rt_shm_header *)rt_layout_base();
}

/* The layout of the map whose shared header is m. */
static inline const struct rt_map *rt_map_lay(const struct rt_map *m)
{
	return (const struct rt_map *)(rt_layout_base() + ((const char *)m - ubt_shm));
}

/* Entries a map's arrays have room for (rt_map_nth's range). */
static inline uint32_t rt_map_places(const struct rt_map *lay)
{
	return lay->rows ? lay->rows * RT_MAP_SPREAD : lay->cap;
}

/* System calls without libc (only on slow paths: never on a probe's common path). */
static inline long rt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long rt_syscall4(long nr, long a, long b, long c, long d)
{
	return rt_syscall6(nr, a, b, c, d, 0, 0);
}

static inline long rt_syscall0(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
	return ret;
}

static inline long rt_getpid(void) { return rt_syscall0(39 /* getpid */); }

/*
 * The thread pointer, a thread's identity: %fs:0, which points to itself
 * under the x86-64 TLS ABI (glibc, musl).  Go's threads break that rule
 * (%fs points into the M's tls array, whose word there is 0): for them the
 * kernel's tid with the top bit set, never an address (gettid, a system
 * call per slow path; arch_prctl(ARCH_GET_FS) reads an MSR, which costs
 * a VM exit: 4.5 us a hit here).  The inline paths that hash %fs:0
 * (codegen's cg_thread_slot, rt_pstack_call, the return trampoline) take
 * the slow path when it is 0: a free slot's owner is 0 too, and every Go
 * thread would share it (one probe stack for all: goroutines resumed on
 * each other's stacks).
 */
static inline uint64_t rt_thread_pointer(void)
{
	uint64_t tp;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	if (__builtin_expect(!tp, 0))
		tp = (uint64_t)rt_syscall0(186 /* gettid */) | 1ull << 63;
	return tp;
}

/*
 * One 8-byte load of target memory that may fault: 0 with *v, or -EFAULT.
 * Its entry in the exception table (.rt_extable, rt_read.c) sends a thread
 * that faults here to the label `fault`, with every register as it was
 * before the load.
 * Only where a fault reaches rt_sigsegv: rt_read_direct(t) said yes.
 */
static inline __attribute__((always_inline)) int rt_ld8(uint64_t addr, uint64_t *v)
{
	uint64_t x;
	/* asm goto: the fixup is the C label, so a load costs no test; the word
	 * is an "m" operand, not a "memory" clobber, which would make a loop
	 * over the stack reload everything it keeps in registers */
	__asm__ goto("1: movq %[m], %[x]\n"
		     ".pushsection .rt_extable,\"a\"\n"
		     ".p2align 2\n"
		     ".long 1b - .\n"
		     ".long %l[fault] - .\n"
		     ".popsection\n"
		     : [x] "=r"(x)
		     : [m] "m"(*(const uint64_t *)addr)
		     :
		     : fault);
	*v = x;
	return 0;
fault:
	return -14;
}

/* rt_read.c: may this thread read directly (a fault reaches rt_sigsegv)? */
/* rt_thread.c: a fork child's probes turned on at its first hit (1), or not */
uint32_t rt_fork_enable(void) RT_API;
int rt_read_direct(struct rt_thread *t) RT_API;
/* rt_read.c: n bytes at src, directly (direct) or by process_vm_readv; 0 or -EFAULT */
int64_t rt_read_raw(int direct, void *dst, uint64_t src, uint64_t n) RT_API;
/* rt_read.c: process_vm_readv of up to n bytes at src: the bytes read (a partial read stops
 * at the first page that cannot be read), or -EFAULT */
int64_t rt_read_some(void *dst, uint64_t src, uint64_t n) RT_API;
/* rt_vma.c: the mapping [*lo, *hi) holding addr, readable: 0, or -1 when there is none */
int rt_vma_find(uint64_t addr, uint64_t *lo, uint64_t *hi) RT_API;
/* rt_vma.c: forget what is known of the mapping holding addr (it changed) */
void rt_vma_forget(uint64_t addr) RT_API;

/* Called by probe code (see codegen): */
struct rt_thread *rt_thread_enter(void) RT_API;
void rt_thread_exit(struct rt_thread *t) RT_API;
void *rt_ring_reserve(struct rt_thread *t, uint32_t len) RT_API;
void rt_ring_commit(struct rt_thread *t) RT_API;
int64_t rt_map_lookup(struct rt_map *m, const uint64_t *key, int insert) RT_API;
uint32_t rt_gettid(void) RT_API;
int64_t rt_map_delete(struct rt_map *m, const uint64_t *key) RT_API;
uint32_t rt_rand(void) RT_API;
void rt_comm(char *dst) RT_API;
uint64_t rt_ids(uint32_t what) RT_API;
void rt_ids_load(struct rt_ids *dst) RT_API;
struct rt_thread *rt_thread_find(void) RT_API;
int rt_host_ids(uint32_t *pid, uint32_t *tid) RT_API; /* rt_thread.c: RT_F_PIDNS */
void rt_signal(uint64_t sig) RT_API;
int64_t rt_read(struct rt_thread *t, void *dst, uint64_t src, uint64_t n) RT_API;
int64_t rt_read_str(struct rt_thread *t, char *dst, uint64_t src, uint64_t n) RT_API;
int64_t rt_read_u64(uint32_t *state, uint64_t *dst, uint64_t src) RT_API;
int64_t rt_write_u64(uint64_t dst, uint64_t v) RT_API;
void rt_sigsegv(int sig, void *info, void *ucv) RT_API;
uint64_t rt_stack_id(void *regs, uint64_t site, uint32_t kind, uint32_t n,
		     struct rt_thread *t, uint64_t fp) RT_API;
int64_t rt_strncmp(const char *a, uint64_t asize, const char *b, uint64_t bsize, uint64_t n) RT_API;
int64_t rt_memneq(const void *a, const void *b, uint64_t n) RT_API;
int64_t rt_strcontains(const char *h, uint64_t hsize, const char *nd, uint64_t nsize) RT_API;
int64_t rt_strlen(const char *s, uint64_t size) RT_API;
void rt_strconcat(char *dst, uint64_t dsize, const char *a, uint64_t asize, const char *b,
		  uint64_t bsize) RT_API;
int64_t rt_map_len(struct rt_map *m) RT_API;

/* Compilers may emit calls to these for block copies. */
void *memcpy(void *dst, const void *src, size_t n) RT_API;
void *memset(void *dst, int c, size_t n) RT_API;
void *memmove(void *dst, const void *src, size_t n) RT_API;
int memcmp(const void *a, const void *b, size_t n) RT_API;

#endif
