/*
 * findlib.h - a program or library named without a path (findlib.c).
 *
 * Layer rule: see elfsym.h (read-only; util/ only).
 */
#ifndef UBT_ELF_FINDLIB_H
#define UBT_ELF_FINDLIB_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * name found as the dynamic linker would (pid's mappings when pid > 0,
 * PATH, /etc/ld.so.cache, library directories): a malloc'ed path or NULL.
 */
char *ef_find_binary(pid_t pid, const char *name);
/* Where ef_find_binary() looks, for a message: malloc'ed. */
char *ef_find_binary_where(pid_t pid);
/* "libc" matches libc.so.6, "stdc++" libstdc++.so.6 (file name base). */
bool ef_lib_name_matches(const char *base, const char *name);

#endif
