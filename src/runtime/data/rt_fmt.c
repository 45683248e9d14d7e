/*
 * rt_fmt.c - probe-context halves of the value-formatting functions whose
 * input is a variable number of target reads: join(argv[, delim]).
 * Runs inside the target; ubt formats the result (output/calls.c).
 */
#include "../rt.h"

/*
 * join(): argv[0], argv[1], ... (at most RT_JOIN_MAX) into the event's
 * slots of RT_JOIN_ARG_SIZE bytes (abi.h), stopping after the first NULL
 * pointer, unreadable element or empty string, whose slot is left empty
 * so ubt stops there too, as bpftrace 0.17 prints it.
 */
void rt_fmt_join(struct rt_thread *t, char *dst, uint64_t argv) RT_API;
void rt_fmt_join(struct rt_thread *t, char *dst, uint64_t argv)
{
	for (uint64_t i = 0; i < RT_JOIN_MAX; i++) {
		char *d = dst + i * RT_JOIN_ARG_SIZE;
		uint64_t p = 0;
		d[0] = 0;
		if (rt_read(t, &p, argv + 8 * i, 8) || !p)
			return;
		rt_read_str(t, d, p, RT_JOIN_ARG_SIZE);
		if (!d[0])
			return;
	}
}
