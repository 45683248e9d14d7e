/*
 * rt_time.c - the `nsecs` builtin inside the target: CLOCK_BOOTTIME in
 * nanoseconds without a system call.  ubt reads the TSC and
 * clock_gettime(CLOCK_BOOTTIME) twice, some milliseconds apart, before
 * the probes are armed (attach/target/clock.c), and stores the scale in the
 * header; here it is one rdtsc and a 64x64->128 multiply.  Probe code
 * emits the same sequence inline (codegen/cg_time.c); this is the
 * runtime's own copy, for C code in the target.
 */
#include "../rt.h"

uint64_t rt_nsecs(void) RT_API RT_PRESERVING;
uint64_t rt_nsecs(void)
{
	const struct rt_shm_header *h = rt_hdr();
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t d = (((uint64_t)hi << 32) | lo) - h->tsc_base;
	return h->ns_base + (uint64_t)(((unsigned __int128)d * h->tsc_mult) >> 32);
}
