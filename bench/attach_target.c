/*
 * attach_target.c - target for bench/attach.py: 4 threads calling ten
 * different functions in hot loops, so attaching to and detaching from
 * it has ten sites to patch while threads run through them.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define FN(n) __attribute__((noinline)) int fn##n(int x) { return x * (n + 3) + (x >> n); }
FN(0) FN(1) FN(2) FN(3) FN(4) FN(5) FN(6) FN(7) FN(8) FN(9)

static volatile int sink;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0;; i++)
		sink = fn0(i) + fn1(i) + fn2(i) + fn3(i) + fn4(i) + fn5(i) + fn6(i) + fn7(i) +
		       fn8(i) + fn9(i);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	pause();
	return 0;
}
