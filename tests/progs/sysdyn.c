/*
 * sysdyn.c - e2e target of the system-call sites without a `mov $NR,
 * %eax` a jump can go over (tests/e2e/syscalls.test): syscall(2), whose
 * number only %rax knows; read(2), whose number glibc loads with a 2-byte
 * `xor %eax,%eax`; _exit(2), which makes exit_group with `mov %esi,%eax`.
 * A fixed workload, the same on every run, for counts compared with the
 * kernel's tracepoints (bpftrace 0.17).
 *
 *   prog_sysdyn_O2_pie N
 *
 * N times: syscall(SYS_getppid); syscall(SYS_write) of 3 bytes to
 * /dev/null; read(2) of 4 bytes from /dev/zero; getppid() through the
 * program's own `syscall` instruction (inline asm, not libc's).  Then it
 * prints `done` and ends with _exit(0), which makes exit_group(0).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* getppid through a `syscall` in this program's own code */
static long own_getppid(void)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10;
	int nul = open("/dev/null", O_WRONLY), zero = open("/dev/zero", O_RDONLY);
	char buf[4];
	for (long i = 0; i < n; i++) {
		if (syscall(SYS_getppid) != getppid() || syscall(SYS_write, nul, "abc", 3) != 3)
			return 1;
		if (read(zero, buf, sizeof(buf)) != 4 || own_getppid() != getppid())
			return 1;
	}
	printf("done\n");
	fflush(stdout);
	_exit(0);
}
