/*
 * util.h - small helpers shared by every stage of ubt (the tracer side only;
 * the injected runtime in src/runtime never includes this file).
 *
 * Memory allocation failure in the tracer is not recoverable in any useful
 * way, so the x* allocators print "ERROR: out of memory" and end the tracer
 * with status 1 (never the target: nothing here runs inside the traced
 * process, and the watchdog restores a process ubt was attached to).
 */
#ifndef UBT_UTIL_H
#define UBT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + (a)-1) & ~((__typeof__(x))(a)-1))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * -Dfail_alloc=true builds: true for the Nth call when UBT_FAIL_ALLOC=N is
 * set (counting every x* allocation and every other call of this), so
 * that the caller takes its out-of-memory path.  Always false otherwise.
 */
#ifdef UBT_FAIL_ALLOC
bool alloc_should_fail(void);
#else
static inline bool alloc_should_fail(void) { return false; }
#endif

/*
 * A growable array of pointers.  vec_push() keeps items in insertion order;
 * that order is observable (probe numbering, map print order for ties).
 */
struct vec {
	void **items;
	size_t len, cap;
};
void vec_push(struct vec *v, void *item);
void vec_free(struct vec *v);

/* A growable byte/char buffer; always NUL-terminated when len > 0. */
struct buf {
	char *data;
	size_t len, cap;
};
void buf_append(struct buf *b, const void *p, size_t n);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(struct buf *b);

/* Reads a whole file; returns 0 or -errno.  *out is NUL-terminated. */
int read_file(const char *path, char **out, size_t *len);

#endif
