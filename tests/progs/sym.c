/*
 * sym.c - e2e target of the symbol, stack and library tests.
 *
 *   prog_sym_<variant> N [wait] [dlopen]
 *
 * calls main -> sym_outer -> sym_middle -> sym_inner N times (each
 * noinline, so the call chain is the same at every optimisation level),
 * and sym_inner calls sym_lib_work() in libubtsym.so, which calls
 * sym_lib_leaf().  `wait`: print "ready", then wait for a line on stdin
 * or SIGUSR1 before the loop (a target for -p).  `dlopen`: after the
 * loop, dlopen libubtdl.so from the program's directory and call
 * sym_dl_func(7) N times (probes armed when the library loads).
 * `apply`: then call sym_apply(fn, i) N times with fn alternating between
 * sym_lib_leaf and sym_inner (a function pointer argument, for usym()).
 * `cgoto` (with `dlopen`): then call the library's dl_cgoto() N times and
 * print `cgoto <y>`.
 * `getpid` (with `dlopen`): then call the library's dl_getpid(), a system
 * call made by the library's own `syscall` instruction, and libc's
 * getpid() N times each, and print `getpid <times they agreed>`.
 * `slow`: sleep 20 ms before each call of sym_outer (a probe that calls
 * exit() at its first hit sees no second one, so a differential test
 * prints while the target lives).
 * Prints `sum <total>` at the end.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symlib.h"

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) int sym_inner(int x)
{
	return sym_lib_work(x) + 1;
}

__attribute__((noinline)) int sym_middle(int x)
{
	int r = sym_inner(x + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) int sym_outer(int x)
{
	int r = sym_middle(x + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) int sym_apply(int (*fn)(int), int x)
{
	return fn(x);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 1;
	bool wait = false, dl = false, apply = false, slow = false, cgoto = false, gpid = false;
	for (int i = 2; i < argc; i++) {
		wait |= !strcmp(argv[i], "wait");
		dl |= !strcmp(argv[i], "dlopen");
		apply |= !strcmp(argv[i], "apply");
		slow |= !strcmp(argv[i], "slow");
		cgoto |= !strcmp(argv[i], "cgoto");
		gpid |= !strcmp(argv[i], "getpid");
	}
	if (wait) {
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		fflush(stdout);
		while (!go)
			pause();
	}
	long sum = 0;
	for (long i = 0; i < n; i++) {
		if (slow)
			usleep(20000);
		sum += sym_outer((int)i);
	}
	for (long i = 0; apply && i < n; i++)
		sum += sym_apply(i % 2 ? sym_inner : sym_lib_leaf, (int)i);
#ifndef SYM_STATIC
	if (dl) {
		char path[4096];
		ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 32);
		if (len < 0)
			return 1;
		path[len] = 0;
		strcpy(strrchr(path, '/') + 1, "libubtdl.so");
		void *h = dlopen(path, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		int (*fn)(int) = (int (*)(int))dlsym(h, "sym_dl_func");
		for (long i = 0; i < n; i++)
			sum += fn(7);
		if (cgoto) { /* its own line: the sum stays what the other tests expect */
			long (*cg)(unsigned char, long) =
			    (long (*)(unsigned char, long))dlsym(h, "dl_cgoto");
			long y = 0;
			for (long i = 0; i < n; i++)
				y = cg((unsigned char)((i * 7) % 5), y);
			printf("cgoto %ld\n", y);
		}
		if (gpid) { /* the library's own system call, and libc's, N times each */
			long (*gp)(void) = (long (*)(void))dlsym(h, "dl_getpid");
			long (*lp)(void) = (long (*)(void))dlsym(h, "dl_libc_getpid");
			long same = 0;
			for (long i = 0; i < n; i++)
				same += gp() == lp();
			printf("getpid %ld\n", same);
		}
	}
#endif
	printf("sum %ld\n", sum);
	return 0;
}
