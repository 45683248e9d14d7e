/*
 * ids.c - e2e target for comm, uid and gid (tests/e2e/ids.test): a thread
 * renamed by itself and by another thread, credentials changed in one
 * thread (raw system calls) and in all of them (glibc's setuid()), each
 * change followed by a call of f(step) in the thread concerned.
 *
 *   prog_ids_O2_pie     (run as root)
 *
 *   step thread  before the call                               comm / uid / gid
 *   1    main    -                                             prog_ids_O2_pie 0 0
 *   2    worker  prctl(PR_SET_NAME, "ids-worker") (itself)     ids-worker 0 0
 *   3    worker  pthread_setname_np(worker, "w-renamed") (main) w-renamed 0 0
 *   4    worker  prctl(PR_SET_NAME, "w-prctl") (itself)        w-prctl 0 0
 *   5    worker  setreuid/setregid(65534, -1) raw (this thread) w-prctl 65534 65534
 *   6    main    -                                             prog_ids_O2_pie 0 0
 *   7    main    setgid(65533), setuid(65533) (every thread)   prog_ids_O2_pie 65533 65533
 *   8    worker  -                                             w-prctl 65533 65533
 *
 * Every change is followed by a pause of PAUSE_MS before the call (a
 * tracer may notice changes made by other means than its probes with a
 * delay; ubt polls every 64 ms).  The threads take turns (`turn`), so the
 * calls happen in step order, 50 ms apart at least.  Prints `done` at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

#define PAUSE_MS 300

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn; /* 0: main's, 1: worker's */

static void pause_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/*
 * Hands the turn to the other thread and waits until it is back.  The
 * pause first lets a tracer print this thread's last event before the
 * other thread's next one (ubt drains thread by thread).
 */
static void pass(int me)
{
	pause_ms(50);
	pthread_mutex_lock(&lock);
	turn = !me;
	pthread_cond_broadcast(&cond);
	while (turn != me)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void wait_turn(int me)
{
	pthread_mutex_lock(&lock);
	while (turn != me)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	(void)arg;
	wait_turn(1);
	prctl(PR_SET_NAME, "ids-worker", 0, 0, 0);
	f(2);
	pass(1); /* main renames this thread */
	f(3);
	prctl(PR_SET_NAME, "w-prctl", 0, 0, 0);
	pause_ms(PAUSE_MS);
	f(4);
	/* this thread only: glibc's wrappers would change every thread */
	syscall(SYS_setregid, 65534, -1);
	syscall(SYS_setreuid, 65534, -1);
	pause_ms(PAUSE_MS);
	f(5);
	pass(1); /* main changes every thread's ids */
	f(8);
	pause_ms(50);
	pthread_mutex_lock(&lock);
	turn = 0;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t w;
	f(1);
	pthread_create(&w, NULL, worker, NULL);
	pass(0);
	pthread_setname_np(w, "w-renamed");
	pause_ms(PAUSE_MS);
	pass(0);
	f(6);
	if (setgid(65533) || setuid(65533))
		perror("setuid");
	pause_ms(PAUSE_MS);
	f(7);
	pass(0);
	pthread_join(w, NULL);
	printf("done\n");
	return 0;
}
