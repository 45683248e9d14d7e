/*
 * target.c - the program tests/failalloc/run.py traces while ubt's
 * allocations fail one by one.  It calls work() a fixed number of times,
 * then, once no tracer holds it any more, checks that it was left as it
 * was: its code in memory equals its code in the file (no patch byte
 * left) and no mapping of ubt's remains.  It says "started" first (under
 * `ubt -c` a command that never reached main() was never run, which is
 * how ubt leaves it when it fails before starting it).  Between the loop
 * and the check it says
 * "loop done" and reads its standard input to the end: the runner closes
 * it once ubt and its watchdog are done with the process.  It prints one
 * line and exits with status 3, so that a run cut short or a changed
 * result shows.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long work(long i)
{
	__asm__ volatile("" ::: "memory");
	return i * 3 + 1;
}

static int tracer(void)
{
	char line[256];
	int pid = 0;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			pid = atoi(line + 10);
	if (f)
		fclose(f);
	return pid;
}

/* The main program's executable segment, compared with the file. */
static int code_diff;
static int check_code(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the first entry is the program itself */
	int fd = open("/proc/self/exe", O_RDONLY);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		char *file = malloc(ph->p_filesz);
		if (pread(fd, file, ph->p_filesz, ph->p_offset) != (ssize_t)ph->p_filesz ||
		    memcmp(file, (char *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz))
			code_diff = 1;
		free(file);
	}
	close(fd);
	return 1;
}

static int ubt_mappings(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "/memfd:ubt") != NULL;
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000, sum = 0;
	printf("target %d: started\n", (int)getpid());
	fflush(stdout);
	struct timespec ts = {0, 200000}; /* 0.2 ms: about half a second of calls */
	for (long i = 0; i < n; i++) {
		sum += work(i);
		nanosleep(&ts, NULL);
	}
	printf("target %d: loop done\n", (int)getpid());
	fflush(stdout);
	while (getchar() != EOF)
		;
	/* a tracer that died leaves the watchdog restoring: wait for it */
	for (int i = 0; i < 1000 && tracer(); i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	dl_iterate_phdr(check_code, NULL);
	printf("target %d: sum=%ld traced=%d code_changed=%d ubt_mappings=%d\n", (int)getpid(),
	       sum, tracer() != 0, code_diff, ubt_mappings());
	return 3;
}
