/*
 * ctx.c - e2e target for the context builtins and signal():
 *
 *   prog_ctx_O2_pie N [rename]
 *
 * Catches SIGUSR1 (the handler only sets a flag), then calls f(i)
 * (tests/progs/f.c) for i in 0..N-1 and prints `got SIGUSR1 after f(i)`
 * when the flag was set by the time f(i) returned, so a script's
 * `signal("SIGUSR1")` in a probe on f shows at which call it arrived.
 * With `rename`, the thread renames itself `renamed` (prctl PR_SET_NAME)
 * before calling f(N/2), so `comm` must change there.  Prints
 * `checksum <sum of f's results>` at the end and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "progs.h"

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got = 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 8;
	int rename = argc > 2 && !strcmp(argv[2], "rename");
	unsigned long sum = 0;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (long i = 0; i < n; i++) {
		if (rename && i == n / 2)
			prctl(PR_SET_NAME, "renamed", 0, 0, 0);
		sum += (unsigned int)f((int)i);
		if (got) {
			printf("got SIGUSR1 after f(%ld)\n", i);
			got = 0;
		}
	}
	printf("checksum %lu\n", sum);
	return 0;
}
