/*
 * lifelib.c - liblifector.so, linked into prog_life, holds a `ubt -c`
 * command on its way to where ubt stops it, for as long as a test needs to
 * kill ubt right then (tests/e2e/life.test):
 *
 *  - its constructor sleeps LIFE_CTOR_SLEEP_MS milliseconds when that is
 *    set: after ubt's stop point (ubt -c attaches before constructors);
 *  - with LIFE_LOADER_SLEEP=1 in the environment, the dynamic loader
 *    sleeps 1.5 s while it relocates this library (its IFUNC resolver),
 *    before its last start-up _dl_debug_state(), where ubt -c stops the
 *    command: ubt's stub is there all that time.  The resolver runs before
 *    libc is ready, so it makes its system calls itself.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

static long raw3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

static void life_nothing(void)
{
}

__attribute__((no_stack_protector)) static void (*life_slow_resolve(void))(void)
{
	static const char path[] = "/proc/self/environ", want[] = "LIFE_LOADER_SLEEP=1";
	static char buf[65536];
	long fd = raw3(SYS_open, (long)path, 0, 0), n = 0, r;
	if (fd < 0)
		return life_nothing;
	while (n < (long)sizeof(buf) && (r = raw3(SYS_read, fd, (long)(buf + n), sizeof(buf) - n)) > 0)
		n += r;
	raw3(SYS_close, fd, 0, 0);
	for (long i = 0; i + (long)sizeof(want) - 1 <= n; i++) {
		long k = 0;
		while (k < (long)sizeof(want) - 1 && buf[i + k] == want[k])
			k++;
		if (k == (long)sizeof(want) - 1 && (i == 0 || buf[i - 1] == 0)) {
			struct timespec ts = {1, 500000000};
			raw3(SYS_nanosleep, (long)&ts, 0, 0);
			break;
		}
	}
	return life_nothing;
}

static void life_slow(void) __attribute__((ifunc("life_slow_resolve")));

volatile int life_lib_mark; /* prog_life sets it: the library stays NEEDED */

__attribute__((constructor)) static void life_ctor(void)
{
	const char *v = getenv("LIFE_CTOR_SLEEP_MS");
	long ms = v ? atol(v) : 0;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	life_slow();
	if (ms > 0)
		nanosleep(&ts, NULL);
}
