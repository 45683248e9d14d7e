/*
 * demangle.c - C++ symbol names for people: "_ZN2ns3fooEi" -> "ns::foo(int)".
 *
 * Used on the tracer side only: by attach (matching `uprobe:BIN:"ns::foo"`
 * against mangled symbols) and by output (usym, func, ustack).  The project
 * has no C++ of its own, so the demangler is libstdc++'s __cxa_demangle, a
 * C-callable function, found with dlopen() on first use: ubt does not link
 * libstdc++, and on a system without it names simply stay mangled.
 * BPFTRACE_NO_CPP_DEMANGLE (any value but "0") turns demangling off, as in
 * bpftrace.
 */
#include "demangle.h"
#include "util.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn find_demangler(void)
{
	static cxa_demangle_fn fn;
	static bool tried;
	if (tried)
		return fn;
	tried = true;
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	return fn;
}

bool demangle_enabled(void)
{
	const char *e = getenv("BPFTRACE_NO_CPP_DEMANGLE");
	return !e || !strcmp(e, "0") || !*e;
}

char *demangle(const char *name)
{
	/* Itanium ABI names start with _Z (also "_GLOBAL__sub_I_..." stays as is) */
	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	cxa_demangle_fn fn = find_demangler();
	if (!fn)
		return NULL;
	int status = 0;
	char *out = fn(name, NULL, NULL, &status);
	if (status || !out) {
		free(out);
		return NULL;
	}
	return out;
}

char *demangle_base(const char *demangled)
{
	/*
	 * "ns::foo(int) const" -> "ns::foo"; "int ns::bar<int>(int)" (templates
	 * with a return type) -> "ns::bar<int>".  The parameter list is the
	 * last top-level "(...)".
	 */
	size_t len = strlen(demangled);
	int depth = 0;
	size_t open = len;
	for (size_t i = len; i-- > 0;) {
		char c = demangled[i];
		if (c == ')')
			depth++;
		else if (c == '(' && --depth == 0) {
			open = i;
			break;
		}
	}
	size_t start = 0;
	depth = 0;
	for (size_t i = 0; i < open; i++) {
		char c = demangled[i];
		if (c == '<' || c == '(')
			depth++;
		else if ((c == '>' || c == ')') && depth)
			depth--;
		else if (c == ' ' && !depth)
			start = i + 1;
	}
	return xstrndup(demangled + start, open - start);
}
