/*
 * clock.c - the scale from the TSC to CLOCK_BOOTTIME nanoseconds that the
 * runtime's rt_nsecs() (the `nsecs` builtin) uses, measured in ubt and
 * written into the shared header before probes are armed.  Every process
 * on the machine reads the same invariant TSC.
 */
#include "attach/target/target.h"
#include "runtime/abi.h"

#include <time.h>
#include <x86intrin.h>

static uint64_t boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A (tsc, ns) pair taken as close together as the clock allows. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = __rdtsc(), n = boot_ns(), t1 = __rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

/* Measures once per ubt run (call it with h == NULL before threads are stopped). */
void att_clock_calibrate(struct rt_shm_header *h)
{
	static uint64_t tsc_base, ns_base, mult;
	if (!mult) {
		uint64_t t0, n0;
		struct timespec pause = {0, 4000000};
		sample(&t0, &n0);
		nanosleep(&pause, NULL);
		sample(&tsc_base, &ns_base);
		mult = tsc_base > t0
			       ? (uint64_t)(((unsigned __int128)(ns_base - n0) << 32) / (tsc_base - t0))
			       : 1;
	}
	if (h) {
		h->tsc_base = tsc_base;
		h->ns_base = ns_base;
		h->tsc_mult = mult;
	}
}
