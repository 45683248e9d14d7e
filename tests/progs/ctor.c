/*
 * ctor.c - prog_ctor: linked with libubtctor.so (ctorlib.c), whose
 * constructor calls ctor_hello(0) before main(); main calls ctor_hello(1)
 * and prints `calls N` (N = 2).
 */
#include <stdio.h>

extern volatile int ctor_calls;
int ctor_hello(int from);

int main(void)
{
	ctor_hello(1);
	printf("calls %d\n", ctor_calls);
	return 0;
}
