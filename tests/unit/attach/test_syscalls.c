/*
 * test_syscalls.c - the system-call tracepoints' formats
 * (src/attach/resolve/syscalls.c) from the two places they come from:
 *
 *   - the x86-64 table (syscall_tab.c, tools/gen_syscall_tab.py) must give
 *     every call the same fields, offsets and sizes as this kernel's
 *     tracefs, where tracefs knows the call (skipped without tracefs);
 *   - event names and wildcards expand the same from both;
 *   - numbers of a few calls whose tracepoint is named after the kernel's
 *     entry point (newstat is stat, 4) or which are newer than the
 *     build host's <asm/unistd_64.h> (cachestat, 451).
 */
#include "attach/resolve/syscalls.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static const char *const no_tracefs = "/nonexistent-tracefs";

static int format_from(const char *tracefs, const char *cat, const char *ev,
		       struct att_sys_format *f)
{
	if (tracefs)
		setenv("UBT_TRACEFS", tracefs, 1);
	else
		unsetenv("UBT_TRACEFS");
	return att_sys_format(cat, ev, f);
}

/* tracefs's format of one event against the table's */
static void compare(const char *tracefs, const char *cat, const char *ev)
{
	struct att_sys_format k, t;
	int kret = format_from(tracefs, cat, ev, &k);
	int tret = format_from(no_tracefs, cat, ev, &t);
	CHECK_EQ(kret, 0, "%s:%s in tracefs", cat, ev);
	CHECK_EQ(tret, 0, "%s:%s in the table", cat, ev);
	CHECK_EQ(t.nfields, k.nfields, "%s:%s: fields", cat, ev);
	for (int i = 0; i < k.nfields && i < t.nfields; i++) {
		CHECK_STR(t.fields[i].type, k.fields[i].type, "%s:%s field %d", cat, ev, i);
		CHECK_STR(t.fields[i].name, k.fields[i].name, "%s:%s field %d", cat, ev, i);
		CHECK_EQ(t.fields[i].offset, k.fields[i].offset, "%s:%s %s", cat, ev,
			 k.fields[i].name);
		CHECK_EQ(t.fields[i].size, k.fields[i].size, "%s:%s %s", cat, ev, k.fields[i].name);
		CHECK_EQ(t.fields[i].count, k.fields[i].count, "%s:%s %s", cat, ev,
			 k.fields[i].name);
	}
	att_sys_format_free(&k);
	att_sys_format_free(&t);
}

static void table_against_tracefs(void)
{
	unsetenv("UBT_TRACEFS");
	const char *tfs = att_sys_tracefs();
	if (!tfs) {
		check_skip("tracefs is not mounted: the table has nothing to be compared with");
		return;
	}
	char *dir = xstrdup(tfs);
	int compared = 0;
	for (int i = 0; i < att_sys_tab_len; i++) {
		char *enter = xasprintf("sys_enter_%s", att_sys_tab[i].name);
		char *exit = xasprintf("sys_exit_%s", att_sys_tab[i].name);
		struct att_sys_format f;
		if (!format_from(dir, "syscalls", enter, &f)) { /* an older kernel may lack it */
			att_sys_format_free(&f);
			compare(dir, "syscalls", enter);
			compare(dir, "syscalls", exit);
			compared++;
		}
		free(enter);
		free(exit);
	}
	CHECK(compared > 300, "only %d calls of the table are in tracefs", compared);
	compare(dir, "raw_syscalls", "sys_enter");
	compare(dir, "raw_syscalls", "sys_exit");
	free(dir);
}

static void names_and_numbers(void)
{
	setenv("UBT_TRACEFS", no_tracefs, 1);
	CHECK(att_sys_tracefs() == NULL);
	int n = 0;
	char **ev = att_sys_events("syscalls", "sys_exit_read*", &n);
	CHECK_EQ(n, 5, "sys_exit_read* in the table");
	static const char *const want[] = {"sys_exit_read", "sys_exit_readahead",
					   "sys_exit_readlink", "sys_exit_readlinkat",
					   "sys_exit_readv"};
	for (int i = 0; i < n && i < 5; i++)
		CHECK_STR(ev[i], want[i]);
	for (int i = 0; i < n; i++)
		free(ev[i]);
	free(ev);
	ev = att_sys_events("raw_syscalls", "*", &n);
	CHECK_EQ(n, 2);
	for (int i = 0; i < n; i++)
		free(ev[i]);
	free(ev);
	ev = att_sys_events("syscalls", "sys_enter_nosuch*", &n);
	CHECK_EQ(n, 0);
	free(ev);
	struct att_sys_format f;
	CHECK_EQ(att_sys_format("syscalls", "sys_enter_nosuch", &f), -ENOENT);
	CHECK_EQ(att_sys_format("raw_syscalls", "sys_enter_write", &f), -ENOENT);
	static const struct {
		const char *name;
		int nr;
	} nrs[] = {{"read", 0},	       {"write", 1},	   {"newstat", 4}, {"newuname", 63},
		   {"sendfile64", 40}, {"umount", 166},	   {"readv", 19},  {"exit_group", 231},
		   {"clone3", 435},    {"cachestat", 451}, {"mseal", 462}};
	for (size_t i = 0; i < ARRAY_SIZE(nrs); i++) {
		const struct att_sys_call *c = att_sys_find(nrs[i].name);
		CHECK(c != NULL, "%s", nrs[i].name);
		if (c)
			CHECK_EQ(c->nr, nrs[i].nr, "%s", nrs[i].name);
	}
	CHECK(att_sys_find("stat") == NULL, "stat's tracepoint is newstat");
	/* the table's shape for one call */
	CHECK_EQ(att_sys_format("syscalls", "sys_enter_write", &f), 0);
	CHECK_EQ(f.nfields, 8);
	if (f.nfields == 8) {
		CHECK_STR(f.fields[4].name, "__syscall_nr");
		CHECK_EQ(f.fields[4].offset, 8);
		CHECK_STR(f.fields[6].type, "const char *");
		CHECK_STR(f.fields[6].name, "buf");
		CHECK_EQ(f.fields[6].offset, 24);
	}
	att_sys_format_free(&f);
}

int main(void)
{
	names_and_numbers();
	table_against_tracefs();
	return check_summary("syscalls");
}
