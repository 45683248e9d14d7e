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

/*
 * signal(SIG) (--unsafe): SIG to the whole target process, as bpftrace's
 * bpf_send_signal() sends it to the current process: kill(2) on the pid
 * ubt wrote into the header.  Out of 1..64 (a computed value): nothing,
 * as the helper fails then.  If this thread takes the signal, its handler
 * runs as the system call returns, before the probed code goes on.
 */
void rt_signal(uint64_t sig)
{
	if (sig < 1 || sig > 64)
		return;
	rt_syscall6(62 /* kill */, (long)rt_hdr()->pid, (long)sig, 0, 0, 0, 0);
}
