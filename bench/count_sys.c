/*
 * count_sys.c - f and g of the system-call benchmark (bench/count.c built
 * as bench/count_sys; bench/run.py --probe raw_syscalls): each makes one
 * getppid(2), which the kernel always enters (no vDSO answer, no cache).
 *
 *   f: libc's getppid wrapper, `mov $0x6e,%eax; syscall; ret`: a site
 *      ubt patches for `tracepoint:raw_syscalls:sys_enter`;
 *   g: the same three instructions in an anonymous executable page made at
 *      start, like a JIT's code: no file, so ubt does not search it and g
 *      stays unprobed (kernel tracepoints fire for both).
 *
 * So for ubt, f - g in the same round is the probe's cost per system call;
 * for the kernel's tracepoints, which fire for f and g alike, it is g
 * probed minus g unprobed (bench/run.py prints both).
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long (*stub)(void);

__attribute__((constructor)) static void make_stub(void)
{
	static const unsigned char code[] = {
	    0xb8, 0x6e, 0x00, 0x00, 0x00, /* mov $SYS_getppid,%eax */
	    0x0f, 0x05,			  /* syscall */
	    0xc3,			  /* ret */
	};
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		_exit(2);
	stub = (long (*)(void))p;
}

__attribute__((noinline)) int f(int x) { return (int)getppid() + x; }

__attribute__((noinline)) int g(int x) { return (int)stub() + x; }
