/*
 * rt_str.c - string functions of scripts that run in probe context:
 * strncmp(), strcontains(), strlen(), and `==` of strings and arrays, on the probe's
 * own buffers (a string value is a NUL-padded buffer of known size, so
 * every read is bounded by it).
 * Map sizes: len(@m).
 */
#include "../rt.h"

/* strncmp(a, b, n): 0 when the first n characters (up to a NUL) are equal, else 1 */
int64_t rt_strncmp(const char *a, uint64_t asize, const char *b, uint64_t bsize, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		char x = i < asize ? a[i] : 0, y = i < bsize ? b[i] : 0;
		if (x != y)
			return 1;
		if (!x)
			return 0;
	}
	return 0;
}

/* a == b of arrays, records, tuples: 0 when the n bytes are equal, else 1 */
int64_t rt_memneq(const void *a, const void *b, uint64_t n)
{
	const unsigned char *x = a, *y = b;
	for (uint64_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return 1;
	return 0;
}

/* strlen(s) (bpftrace 0.25): the bytes before the first NUL of the buffer */
int64_t rt_strlen(const char *s, uint64_t size)
{
	uint64_t n = 0;
	while (n < size && s[n])
		n++;
	return (int64_t)n;
}

/* str_concat(a, b): a's bytes up to its NUL, then b's, cut to the
 * dsize - 1 bytes of dst and NUL-terminated */
void rt_strconcat(char *dst, uint64_t dsize, const char *a, uint64_t asize, const char *b,
		  uint64_t bsize)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < asize && a[i] && n + 1 < dsize; i++)
		dst[n++] = a[i];
	for (uint64_t i = 0; i < bsize && b[i] && n + 1 < dsize; i++)
		dst[n++] = b[i];
	while (n < dsize)
		dst[n++] = 0;
}

/* strcontains(hay, needle): 1 when needle occurs in hay (an empty needle always does) */
int64_t rt_strcontains(const char *h, uint64_t hsize, const char *nd, uint64_t nsize)
{
	uint64_t hl = 0, nl = 0;
	while (hl < hsize && h[hl])
		hl++;
	while (nl < nsize && nd[nl])
		nl++;
	for (uint64_t i = 0; i + nl <= hl; i++) {
		uint64_t k = 0;
		while (k < nl && h[i + k] == nd[k])
			k++;
		if (k == nl)
			return 1;
	}
	return 0;
}

/* len(@m): entries whose key is in the map now */
int64_t rt_map_len(struct rt_map *m)
{
	const struct rt_map *lay = rt_map_lay(m);
	uint32_t used = __atomic_load_n(&m->used, __ATOMIC_ACQUIRE);
	const volatile uint32_t *live = (const volatile uint32_t *)((char *)m + lay->live_off);
	int64_t n = 0;
	for (uint32_t i = 0; i < used && i < lay->cap; i++)
		n += live[rt_map_nth(lay->rows, i)] != 0;
	return n;
}
