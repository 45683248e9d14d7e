/*
 * seccomp.c - a target with a seccomp filter that refuses memfd_create
 * (with EPERM): ubt cannot place its code there and must say why, with a
 * hint, and leave the process untouched.
 *
 *   prog_seccomp   prints `ready`, calls f in a loop; exits 0 on SIGTERM
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progs.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1 /* EPERM */),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
	signal(SIGTERM, on_term);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; !stop; i++) {
		f((int)i);
		usleep(1000);
	}
	printf("exit\n");
	return 0;
}
