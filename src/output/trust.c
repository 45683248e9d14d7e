/*
 * trust.c - what ubt says when the shared memory holds something that
 * cannot be (DESIGN.md decision 10: the target's memory is not ubt's).
 *
 * Pipeline position: output (and the trace loop).  Everything in the data
 * part can be written by the traced process: a buggy one by accident, a
 * hostile one on purpose (an unprivileged program an administrator traces
 * as root).  ubt therefore takes the layout (offsets, sizes, capacities)
 * from its own memory (struct cg_layout) and checks every other value it
 * reads back before it uses it as a length, an index or a count; a value
 * that fails the check costs what it stood for (one ring's pending events,
 * one map entry, one stack) and is reported here, once per kind:
 *
 *   ERROR: pid 4242 wrote into ubt's shared memory: ring of thread slot 3:
 *   a record of 65544 bytes at byte 504 (the ring's pending events are skipped)
 *
 * At most RPT_MAX kinds are named; further corrupt values are counted and
 * the count is said at exit (out_bad_summary), so a target rewriting the
 * memory in a loop cannot make ubt print without bound.  ubt then exits 1.
 */
#include "output.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RPT_MAX 16

static struct {
	int pid;
	const char *kinds[RPT_MAX]; /* the kinds named so far (string literals) */
	int nkinds;
	uint64_t count;   /* every corrupt value seen */
	uint64_t unnamed; /* of which neither named nor of a named kind */
} T;

void out_bad_init(int pid)
{
	memset(&T, 0, sizeof(T));
	T.pid = pid;
}

void out_bad(const char *kind, const char *fmt, ...)
{
	T.count++;
	for (int i = 0; i < T.nkinds; i++)
		if (T.kinds[i] == kind || !strcmp(T.kinds[i], kind))
			return;
	if (T.nkinds == RPT_MAX) {
		T.unnamed++;
		return;
	}
	T.kinds[T.nkinds++] = kind;
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (T.pid)
		fprintf(stderr, "ERROR: pid %d wrote into ubt's shared memory: %s\n", T.pid, what);
	else
		fprintf(stderr, "ERROR: ubt's shared memory was overwritten: %s\n", what);
}

uint64_t out_bad_count(void)
{
	return T.count;
}

void out_bad_summary(void)
{
	if (!T.count)
		return;
	fprintf(stderr, "ERROR: %llu corrupt value%s in shared memory ignored", (unsigned long long)T.count,
		T.count == 1 ? "" : "s");
	if (T.unnamed)
		fprintf(stderr, " (%llu of kinds not named above)", (unsigned long long)T.unnamed);
	fprintf(stderr, "; the output may be incomplete\n");
}
