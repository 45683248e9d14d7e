/*
 * rt_builtin.c - runtime helpers behind builtins and string functions that
 * probe code calls (nsecs is in rt_time.c): rand, comm, uid/gid/numaid (system calls:
 * rare in scripts, documented in docs/compat.md).  Reads of target memory,
 * str() included, are in rt_read.c.
 *
 * Pipeline position: linked with the probe code and injected into the
 * target (see rt.h); the same object serves BEGIN/END inside ubt.
 */
#include "rt.h"

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

/* rand: a 32-bit value from the TSC through splitmix64 (bpftrace's is
 * bpf_get_prandom_u32: not cryptographic either). */
uint32_t rt_rand(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t z = ((uint64_t)hi << 32 | lo) + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

/* comm: the thread's name (16 bytes, NUL-padded) via prctl(PR_GET_NAME). */
void rt_comm(char *dst)
{
	for (int i = 0; i < 16; i++)
		dst[i] = 0;
	rt_syscall6(157 /* prctl */, 16 /* PR_GET_NAME */, (long)dst, 0, 0, 0, 0);
}

/* uid, gid, numaid: what = 0, 1, 2 */
uint64_t rt_ids(uint32_t what)
{
	if (what == 0)
		return (uint64_t)rt_syscall6(102 /* getuid */, 0, 0, 0, 0, 0, 0);
	if (what == 1)
		return (uint64_t)rt_syscall6(104 /* getgid */, 0, 0, 0, 0, 0, 0);
	uint32_t cpu = 0, node = 0;
	rt_syscall6(309 /* getcpu */, (long)&cpu, (long)&node, 0, 0, 0, 0);
	return what == 2 ? node : cpu;
}
