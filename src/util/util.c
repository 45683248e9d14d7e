/*
 * util.c - allocation wrappers, growable arrays and buffers for the tracer.
 *
 * Every allocation of ubt's own code goes through the x* wrappers below
 * (LLVM's, libelf's and libdw's do not: they allocate inside those
 * libraries).  A build configured with -Dfail_alloc=true can make the Nth
 * wrapper call fail (UBT_FAIL_ALLOC=N in the environment), as if malloc()
 * had returned NULL: tests/failalloc walks N over a whole run to show
 * that each point ends ubt with a clear message and leaves the target as
 * it was.  Other builds have no counter and no getenv().
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Out of memory ends ubt at once, with a message and status 1: what is
 * buffered for stdout is written, and nothing else runs (no atexit
 * handler, no static destructor of LLVM's, no leak check: ubt's state is
 * whatever it was at this allocation, and the session lives in shared
 * memory no leak checker scans).  A process ubt was attached to is
 * restored by the watchdog, which sees ubt's end of its pipe close
 * (attach/inject/watchdog.c).
 */
static void oom(void)
{
	fputs("ERROR: out of memory\n", stderr);
	fflush(NULL);
	_exit(1);
}

#ifdef UBT_FAIL_ALLOC
static long alloc_count;

static void alloc_report(void) { fprintf(stderr, "ubt: %ld allocations\n", alloc_count); }

/* UBT_FAIL_ALLOC=N: the Nth call fails; =count: none does, and the
 * number of calls is printed at exit (how far N may go). */
bool alloc_should_fail(void)
{
	static long fail_at = -1;
	if (fail_at < 0) {
		const char *e = getenv("UBT_FAIL_ALLOC");
		fail_at = e ? strtol(e, NULL, 10) : 0;
		if (e && !strcmp(e, "count"))
			atexit(alloc_report);
	}
	return __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED) == fail_at;
}
#endif

void *xmalloc(size_t n)
{
	void *p = alloc_should_fail() ? NULL : malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = alloc_should_fail() ? NULL : calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = alloc_should_fail() ? NULL : realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (alloc_should_fail() || vasprintf(&s, fmt, ap) < 0)
		oom();
	va_end(ap);
	return s;
}

void vec_push(struct vec *v, void *item)
{
	if (v->len == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->items = xrealloc(v->items, v->cap * sizeof(*v->items));
	}
	v->items[v->len++] = item;
}

void vec_free(struct vec *v)
{
	free(v->items);
	v->items = NULL;
	v->len = v->cap = 0;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->data = xrealloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->data = xrealloc(b->data, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct buf b = {0};
	char tmp[65536];
	int ret = 0;
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		buf_append(&b, tmp, n);
	}
	close(fd);
	if (ret) {
		buf_free(&b);
		return ret;
	}
	if (!b.data)
		b.data = xcalloc(1, 1);
	*out = b.data;
	*len = b.len;
	return 0;
}
