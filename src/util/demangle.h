/*
 * demangle.h - C++ demangling through libstdc++'s __cxa_demangle, loaded
 * on first use (see demangle.c).
 */
#ifndef UBT_DEMANGLE_H
#define UBT_DEMANGLE_H

#include <stdbool.h>

/* False when BPFTRACE_NO_CPP_DEMANGLE is set (as bpftrace). */
bool demangle_enabled(void);
/* The demangled form of an Itanium-mangled name (malloc'ed), NULL if name
 * is not mangled or cannot be demangled. */
char *demangle(const char *name);
/* "ns::foo(int) const" -> "ns::foo" (malloc'ed). */
char *demangle_base(const char *demangled);

#endif
