/*
 * calls.c - events that ask ubt to do something other than print a
 * printf line: print(value), and the functions bpftrace runs in user space
 * (system, cat, time, strftime, ...).  Probe code records the call id and
 * its argument values (runtime/abi.h, RT_EV_VALUE / RT_EV_CALL); output.c
 * hands each record here, in the thread's event order.
 */
#include "output.h"
#include "output_internal.h"

void out_event_call(struct out *o, uint32_t type, uint32_t id, const uint8_t *payload,
		    uint32_t len)
{
	(void)o, (void)type, (void)id, (void)payload, (void)len;
}
