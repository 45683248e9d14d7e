/*
 * ctorlib.c - libubtctor.so, a library whose constructor calls one of its
 * functions before the program's main() (and entry point) is reached:
 * `ubt -c prog_ctor -e 'uprobe:.../libubtctor.so:ctor_hello { ... }'` must
 * see that call (tests/e2e/args.test), as kernel uprobes do.
 */
volatile int ctor_calls;

int __attribute__((noinline)) ctor_hello(int from)
{
	ctor_calls++;
	return from + 1;
}

static void __attribute__((constructor)) ctor_init(void)
{
	ctor_hello(0);
}
