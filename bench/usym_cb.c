/*
 * usym_cb.c - the usym benchmark's f and g: f(callback) is called with four
 * callback addresses in rotation, as SPDK's spdk_thread_send_msg(thread,
 * fn, ctx) is, whose script counts `@[usym(arg1)]`.  Here the probe counts
 * `@[usym(arg0)]`: four keys, each a function symbol.
 *
 * count.c's loop calls bench_call(fn, i) (built with -DBENCH_CALL), which
 * passes f or g the i-th callback of the rotation.  f and g only mix the
 * address into their result, like a function that queues a message, and
 * compile to the same bytes.
 */
#include <stdint.h>

typedef int (*bench_cb)(void *);

extern int bench_bias;

#define CALLBACK(name, k)                                     \
	__attribute__((noinline)) int name(void *ctx)        \
	{                                                     \
		return (int)(uintptr_t)ctx + k;               \
	}

CALLBACK(msg_poll, 1)
CALLBACK(msg_read, 2)
CALLBACK(msg_write, 3)
CALLBACK(msg_flush, 4)

static bench_cb const callbacks[4] = {msg_poll, msg_read, msg_write, msg_flush};

__attribute__((noinline)) int f(bench_cb cb)
{
	return (int)((uintptr_t)cb >> 4) + bench_bias;
}

__attribute__((noinline)) int g(bench_cb cb)
{
	return (int)((uintptr_t)cb >> 4) + bench_bias;
}

int bench_bias = 1;

int bench_call(int (*fn)(int), int x)
{
	int (*call)(bench_cb) = (int (*)(bench_cb))(void *)fn;

	return call(callbacks[x & 3]);
}
