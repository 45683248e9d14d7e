/*
 * usdt_sem.c - a USDT probe behind a semaphore, as dtrace -G or
 * _SDT_HAS_SEMAPHORES makes them: the note names the 2-byte counter
 * ubt_guarded_semaphore (section .probes), which tracers increment while
 * they want the probe, and the program tests it before computing the
 * probe's arguments.  Its own translation unit, because
 * _SDT_HAS_SEMAPHORES makes every probe of a file need a semaphore.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "usdt_sem.h"

__extension__ unsigned short ubt_guarded_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) void guarded(long i)
{
	if (__builtin_expect(ubt_guarded_semaphore, 0))
		DTRACE_PROBE1(ubt, guarded, i * 3);
}
