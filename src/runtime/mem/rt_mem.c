/*
 * rt_mem.c - the block-copy routines the compilers (gcc for the runtime,
 * LLVM for probe code) may call.  Hidden, so they never interpose on the
 * target's own.  Byte loops are enough: probe records are small.
 */
#include "../rt.h"

void *memcpy(void *dst, const void *src, size_t n)
{
	void *ret = dst;
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
	return ret;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *ret = dst;
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(c) : "memory");
	return ret;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}
