/*
 * lifelib.c - liblifector.so, linked into prog_life: its constructor runs
 * in the dynamic loader, before the program's entry point, and sleeps
 * LIFE_CTOR_SLEEP_MS milliseconds when that is set.  It holds a `ubt -c`
 * command on its way to the entry point for as long as a test needs to
 * kill ubt right then (tests/e2e/life.test).
 */
#include <stdlib.h>
#include <time.h>

__attribute__((constructor)) static void life_ctor(void)
{
	const char *v = getenv("LIFE_CTOR_SLEEP_MS");
	long ms = v ? atol(v) : 0;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	if (ms > 0)
		nanosleep(&ts, NULL);
}
