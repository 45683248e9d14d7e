/*
 * progs.h - declarations shared by the e2e target programs in tests/progs.
 * The functions declared here are defined in separate translation units
 * so that the calls to them are never inlined.
 */
#ifndef UBT_TEST_PROGS_H
#define UBT_TEST_PROGS_H

extern int bias;

int f(int x);
int add(int a, long b, short c, unsigned char d, long long e, int g);
int mul(int a, int b);
const char *name_of(int id);
long many(long a, long b, long c, long d, long e, long f, long g, long h);
int fib(int n);

#endif
