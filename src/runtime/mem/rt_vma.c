/*
 * rt_vma.c - the mapping an address is in, for reads of a target stack
 * made on a probe's behalf (ustack: rt_stack.c).  DESIGN.md decision 15:
 * every such read is bounded by the mapping the stack pointer is in.
 *
 * Pipeline position: runtime, in the target.  rt_stack.c asks
 * rt_vma_find(sp) for [lo, hi) before its frame-pointer walk and its copy
 * of the stack; nothing may be read at or above hi.
 *
 * Why not the thread's stack: a stack pointer can be on a coroutine's stack
 * (QEMU's block layer, Boost.Context, libco, SPDK users: mmap'd or malloc'd,
 * often 64 KiB to 1 MiB, anywhere in the address space), on a sigaltstack,
 * or on a pthread's stack.  QEMU puts a 1 MiB coroutine stack right under
 * another thread's guard page:
 *
 *   7ff2d0237000-7ff2d0238000 ---p   guard of the coroutine stack
 *   7ff2d0238000-7ff2d0338000 rw-p   coroutine stack (sp near its top)
 *   7ff2d0338000-7ff2d0339000 ---p   guard of the next thread's stack
 *
 * so a copy of 8 KiB from an sp near the top faulted in qemu-io (the
 * earlier bound, the thread pointer, lay 20 MiB above).
 *
 * Finding the mapping costs system calls, so it is cached: 64 slots in the
 * process's private page (abi.h struct rt_priv), slot = hash of the
 * address's 64 KiB granule, each holding one mapping packed in 64 bits
 * ((lo >> 12) << 29 | pages), so it is written and read whole without a
 * lock.  A hit is one load and a compare.  A miss asks the kernel:
 *   - PROCMAP_QUERY (Linux 6.11): one ioctl on /proc/self/maps for the
 *     mapping covering the address;
 *   - else /proc/self/maps itself, read 256 bytes at a time and parsed as
 *     it comes (lines are sorted: stop at the first one past the address).
 * Both open /proc/self/maps for the duration of the lookup (a few
 * microseconds; O_CLOEXEC): a fork in another thread in that window gives
 * the child a copy of that descriptor.  A mapping that is not readable,
 * or no mapping at all (a corrupt %rsp), is not cached and gives -1.
 *
 * A cached mapping can go stale (munmap, mprotect, a heap trimmed): that is
 * why every read of a stack is also fault-tolerant, and rt_stack.c calls
 * rt_vma_forget() when one fails.
 */
#include "../rt.h"

#define RT_O_RDONLY 0
#define RT_O_CLOEXEC 02000000
#define RT_AT_FDCWD (-100)
#define RT_ENOTTY 25

/* linux/fs.h: struct procmap_query and PROCMAP_QUERY (Linux 6.11) */
struct rt_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end;
	uint64_t vma_flags; /* 1: readable */
	uint64_t vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define RT_PROCMAP_QUERY 0xc0686611u /* _IOWR('f', 17, struct procmap_query) */
#define RT_PROCMAP_READ 1u

static inline volatile uint64_t *slot_of(uint64_t addr)
{
	uint64_t h = ((addr >> 16) * 0x9e3779b97f4a7c15ull) >> 58; /* 6 bits: RT_VMA_SLOTS */
	return &ubt_priv.vma[h & (RT_VMA_SLOTS - 1)];
}

/*
 * One line's worth of /proc/self/maps, parsed a character at a time:
 * "lo-hi rwxp ..." -> lo, hi, readable.  Lines are sorted by address.
 */
struct maps_parse {
	uint64_t lo, hi;
	int field; /* 0: lo, 1: hi, 2: perms' first letter, 3: rest of the line */
	int found; /* 1: [lo, hi) holds the address; -1: passed it */
	int readable;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void maps_feed(struct maps_parse *m, const char *buf, long n, uint64_t addr)
{
	for (long i = 0; i < n && !m->found; i++) {
		char c = buf[i];
		if (c == '\n') {
			m->lo = m->hi = 0;
			m->field = 0;
			continue;
		}
		int v = hexval(c);
		if (m->field == 0 && v >= 0) {
			m->lo = m->lo << 4 | (uint64_t)v;
		} else if (m->field == 0 && c == '-') {
			m->field = 1;
		} else if (m->field == 1 && v >= 0) {
			m->hi = m->hi << 4 | (uint64_t)v;
		} else if (m->field == 1) {
			m->field = 2;
		} else if (m->field == 2) {
			m->readable = c == 'r';
			m->field = 3;
			if (m->lo > addr)
				m->found = -1;
			else if (addr < m->hi)
				m->found = 1;
		}
	}
}

static int from_maps_text(int fd, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	char buf[256];
	struct maps_parse m = {0};
	long n;
	while (!m.found && (n = rt_syscall4(0 /* read */, fd, (long)buf, sizeof(buf), 0)) > 0)
		maps_feed(&m, buf, n, addr);
	if (m.found != 1 || !m.readable)
		return -1;
	*lo = m.lo;
	*hi = m.hi;
	return 0;
}

/* The readable mapping holding addr, from the kernel: 0, or -1. */
static __attribute__((noinline)) int vma_ask(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	long fd = rt_syscall4(257 /* openat */, RT_AT_FDCWD, (long)"/proc/self/maps",
			      RT_O_RDONLY | RT_O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct rt_procmap_query q = {.size = sizeof(q), .query_addr = addr};
	int ret = -1;
	long r = (rt_hdr()->flags & RT_F_NO_PROCMAP_QUERY)
			 ? -RT_ENOTTY
			 : rt_syscall4(16 /* ioctl */, fd, RT_PROCMAP_QUERY, (long)&q, 0);
	if (r == 0) {
		if (q.vma_flags & RT_PROCMAP_READ) {
			*lo = q.vma_start;
			*hi = q.vma_end;
			ret = 0;
		}
	} else if (r == -RT_ENOTTY || r == -22 /* EINVAL: an older kernel's answer */) {
		ret = from_maps_text((int)fd, addr, lo, hi);
	}
	rt_syscall4(3 /* close */, fd, 0, 0, 0);
	return ret;
}

int rt_vma_find(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	volatile uint64_t *s = slot_of(addr);
	uint64_t e = *s;
	uint64_t l = (e >> RT_VMA_PAGE_BITS) << 12;
	uint64_t h = l + ((e & ((1ull << RT_VMA_PAGE_BITS) - 1)) << 12);
	if (addr - l < h - l) {
		*lo = l;
		*hi = h;
		return 0;
	}
	if (vma_ask(addr, &l, &h))
		return -1;
	*lo = l;
	*hi = h;
	uint64_t pages = (h - l) >> 12;
	if ((l >> 12) < (1ull << (64 - RT_VMA_PAGE_BITS)) && pages < (1ull << RT_VMA_PAGE_BITS))
		*s = (l >> 12) << RT_VMA_PAGE_BITS | pages;
	return 0;
}

void rt_vma_forget(uint64_t addr)
{
	*slot_of(addr) = 0;
}
