/*
 * rt_builtin.c - runtime helpers behind builtins and string functions that
 * probe code calls (nsecs is in rt_time.c): rand, comm, uid/gid/numaid (system calls:
 * rare in scripts, documented in docs/compat.md), and str(), which reads
 * target memory with process_vm_readv so that a bad pointer yields ""
 * instead of a crash.
 *
 * Pipeline position: linked with the probe code and injected into the
 * target (see rt.h); the same object serves BEGIN/END inside ubt.
 */
#include "rt.h"

struct rt_iovec {
	void *base;
	uint64_t len;
};

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

/*
 * str(p, n): copies the NUL-terminated string at p (in process pid, the
 * process running this code) into dst[0..n-1], always NUL-terminated;
 * "" when p cannot be read.  process_vm_readv reports a bad address as an
 * error instead of faulting; a read that crosses into an unmapped page is
 * retried up to the page end.
 */
void rt_read_str(char *dst, uint64_t src, uint32_t n, uint32_t pid)
{
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++)
		dst[i] = 0;
	uint64_t want = n - 1;
	while (want) {
		struct rt_iovec l = {dst, want}, r = {(void *)src, want};
		long got = rt_syscall6(310 /* process_vm_readv */, pid, (long)&l, 1, (long)&r, 1, 0);
		if (got > 0)
			break;
		uint64_t to_page = 4096 - (src & 4095);
		if (to_page >= want)
			return;
		want = to_page;
	}
	for (uint32_t i = 0; i + 1 < n; i++)
		if (!dst[i]) {
			for (; i < n; i++)
				dst[i] = 0;
			break;
		}
	dst[n - 1] = 0;
}
