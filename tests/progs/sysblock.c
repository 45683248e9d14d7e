/*
 * sysblock.c - e2e target of the system-call tracepoints
 * (tests/e2e/syscalls.test): a readv(2) that is blocked in the kernel when
 * ubt attaches, restarted by a signal whose handler has SA_RESTART, then a
 * second readv that a signal without SA_RESTART ends with EINTR.  (readv,
 * not read: glibc loads readv's number with a `mov $19, %eax` that ubt
 * patches, so the restart runs next to a patched site.)
 *
 *   prog_sysblock_O2_pie FIFO [read]
 *
 * With `read`, the same with read(2), whose site is the `syscall` itself
 * (glibc loads its number with a 2-byte `xor %eax,%eax`): the patch covers
 * the `syscall` the thread is blocked in, and the restart must find the
 * relocated one in the trampoline.
 *
 * Makes FIFO, opens it read-write (so that open does not wait for a
 * writer), prints `ready`, and reads: SIGUSR1 (SA_RESTART) interrupts the
 * first read, which the kernel restarts at its `syscall` instruction;
 * then the test writes a line, and `read N handler H` is printed.  The
 * second read waits until SIGUSR2 (no SA_RESTART): `eintr 1`.  Then
 * `exit`, status 0.  Under ubt both must behave exactly so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, usr2;
static int use_read;

static ssize_t get(int fd, struct iovec *iov)
{
	return use_read ? read(fd, iov->iov_base, iov->iov_len) : readv(fd, iov, 1);
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	use_read = argc > 2 && !strcmp(argv[2], "read");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	if (mkfifo(argv[1], 0600) && errno != EEXIST)
		return 3;
	int fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return 4;
	char buf[64];
	struct iovec iov = {buf, sizeof(buf)};
	printf("ready\n");
	fflush(stdout);
	ssize_t n = get(fd, &iov);
	printf("read %zd handler %d\n", n, (int)usr1);
	fflush(stdout);
	n = get(fd, &iov);
	printf(n < 0 && errno == EINTR ? "eintr %d\n" : "no eintr %d\n", (int)usr2);
	printf("exit\n");
	return 0;
}
