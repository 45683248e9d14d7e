/*
 * proc.c - one reader of the lines and fields of /proc/PID/status and
 * /proc/PID/stat.
 *
 * Pipeline position: anywhere a room asks the kernel about a process that
 * ptrace does not answer: who traces it (a refused seize, the watchdog
 * waiting for ubt's links to go), its seccomp mode (a refused remote
 * mmap), the signals its threads catch, block or have pending (a profile
 * probe's signal), when it started (a fork that is not the traced
 * process).  Reading only; a process that is gone reads as -ENOENT.
 */
#include "attach/target/target.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_proc(pid_t pid, pid_t tid, const char *name, char **text)
{
	char path[96];
	size_t len;
	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return read_file(path, text, &len);
}

int proc_status_text(pid_t pid, pid_t tid, const char *key, char *val, size_t size)
{
	char *text;
	int err = read_proc(pid, tid, "status", &text);
	if (err)
		return err;
	size_t kl = strlen(key);
	err = -ENOENT;
	for (char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
		if (strncmp(line, key, kl) || line[kl] != ':')
			continue;
		const char *v = line + kl + 1 + strspn(line + kl + 1, " \t");
		size_t n = strcspn(v, "\n");
		if (size) {
			n = n < size - 1 ? n : size - 1;
			memcpy(val, v, n);
			val[n] = 0;
		}
		err = 0;
		break;
	}
	free(text);
	return err;
}

int proc_status_u64(pid_t pid, pid_t tid, const char *key, int base, uint64_t *v)
{
	char val[64];
	int err = proc_status_text(pid, tid, key, val, sizeof(val));
	*v = err ? 0 : strtoull(val, NULL, base);
	return err;
}

pid_t proc_tracer_pid(pid_t pid, pid_t tid)
{
	uint64_t v;
	proc_status_u64(pid, tid, "TracerPid", 10, &v);
	return (pid_t)v;
}

uint64_t proc_stat_u64(pid_t pid, int field)
{
	char *text;
	uint64_t v = 0;
	if (read_proc(pid, 0, "stat", &text))
		return 0;
	/* field 2, the command, is in parentheses and may hold blanks */
	char *p = strrchr(text, ')');
	for (int f = 2; p && *p && f < field; p++)
		if (*p == ' ')
			f++;
	if (p && field > 2)
		v = strtoull(p, NULL, 10);
	free(text);
	return v;
}
