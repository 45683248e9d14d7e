/*
 * test_syscall_sites.c - table tests of arch_syscall_sites()
 * (src/attach/arch/x86_64/syscall.c): a function's bytes in, its `syscall`
 * instructions, their jump sites and numbers out.  Then libc's own
 * wrappers, as this process has them mapped: write() holds a site with
 * number 1 and getpid() one with 39.
 */
#include "attach/arch/arch.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "../check.h"

#define BASE 0x401000u
#define MAXS 4

static const struct row {
	const char *name;
	uint8_t code[48];
	size_t len;
	int nsites;
	struct arch_sys_site want[MAXS]; /* offsets from BASE */
} rows[] = {
    {"write() of Debian 12's libc (glibc 2.36), its single-threaded path",
     {
	 0x80, 0x3d, 0x91, 0x32, 0x0e, 0x00, 0x00, /* cmpb $0x0,0xe3291(%rip) */
	 0x74, 0x17,				   /* je +0x17 */
	 0xb8, 0x01, 0x00, 0x00, 0x00,		   /* mov $0x1,%eax */
	 0x0f, 0x05,				   /* syscall */
	 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff,	   /* cmp $-0x1000,%rax */
	 0x77, 0x58,				   /* ja +0x58 */
	 0xc3,					   /* ret */
     },
     25,
     1,
     {{0x0e, 0x09, 1}}},
    {"read() of Debian 12's libc: xor %eax,%eax; syscall (number 0, no room for a jump)",
     {
	 0x80, 0x3d, 0x31, 0x33, 0x0e, 0x00, 0x00, /* cmpb $0x0,0xe3331(%rip) */
	 0x74, 0x17,				   /* je +0x17 */
	 0x31, 0xc0,				   /* xor %eax,%eax */
	 0x0f, 0x05,				   /* syscall */
	 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff,	   /* cmp $-0x1000,%rax */
	 0xc3,					   /* ret */
     },
     20,
     1,
     {{0x0b, 0x0b, 0}}},
    {"mov $60,%rax (7 bytes); syscall",
     {0x48, 0xc7, 0xc0, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xf4},
     10,
     1,
     {{0x07, 0x00, 60}}},
    {"syscall(2): the number from %rdi, known only at run time",
     {
	 0x48, 0x89, 0xf8, /* mov %rdi,%rax */
	 0x48, 0x89, 0xf7, /* mov %rsi,%rdi */
	 0x48, 0x89, 0xd6, /* mov %rdx,%rsi */
	 0x0f, 0x05,	   /* syscall */
	 0xc3,		   /* ret */
     },
     12,
     1,
     {{0x09, 0x09, -1}}},
    {"0f 05 inside an immediate is no site",
     {0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3}, /* mov $0x50f,%eax; ret */
     6,
     0,
     {{0}}},
    {"a mov into another register does not name the call",
     {0xbf, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3}, /* mov $1,%edi; syscall */
     8,
     1,
     {{0x05, 0x05, -1}}},
    {"a mov that is not adjacent does not name the call",
     {0xb8, 0xe7, 0x00, 0x00, 0x00, 0x90, 0x0f, 0x05, 0xf4}, /* mov $231,%eax; nop; syscall */
     9,
     1,
     {{0x06, 0x06, -1}}},
    {"two calls in one function (exit_group, then exit)",
     {
	 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05, /* mov $231,%eax; syscall */
	 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05, /* mov $60,%eax; syscall */
	 0xf4,					   /* hlt */
     },
     15,
     2,
     {{0x05, 0x00, 231}, {0x0c, 0x07, 60}}},
    {"an undecodable byte is skipped and decoding goes on",
     {0x06, 0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3}, /* (bad); mov $39,%eax; syscall */
     9,
     1,
     {{0x06, 0x01, 39}}},
};

static void table(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct arch_sys_site got[MAXS];
		int n = arch_syscall_sites(r->code, r->len, BASE, got, MAXS);
		CHECK_EQ(n, r->nsites, "%s", r->name);
		for (int k = 0; k < n && k < r->nsites; k++) {
			CHECK_EQ(got[k].insn, BASE + r->want[k].insn, "%s: site %d insn", r->name,
				 k);
			CHECK_EQ(got[k].site, BASE + r->want[k].site, "%s: site %d jump site",
				 r->name, k);
			CHECK_EQ(got[k].nr, r->want[k].nr, "%s: site %d number", r->name, k);
		}
	}
	struct arch_sys_site one;
	CHECK_EQ(arch_syscall_sites(rows[7].code, rows[7].len, BASE, &one, 1), 2,
		 "the count goes past max");
	CHECK_EQ(one.nr, 231);
}

/* libc's wrapper of name, as mapped here: its first bytes hold a site with nr.
 * Looked up in libc itself: under ASan the default scope finds the interceptor. */
static void libc_wrapper(const char *name, int nr)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	CHECK(libc != NULL, "libc.so.6 is loaded");
	const uint8_t *f = libc ? dlsym(libc, name) : NULL;
	CHECK(f != NULL, "%s", name);
	if (!f)
		return;
	struct arch_sys_site s[8];
	int n = arch_syscall_sites(f, 64, (uint64_t)(uintptr_t)f, s, 8);
	bool found = false;
	for (int k = 0; k < n && k < 8; k++)
		if (s[k].nr == nr && s[k].site + 5 == s[k].insn &&
		    !memcmp((const uint8_t *)(uintptr_t)s[k].insn, "\x0f\x05", 2))
			found = true;
	CHECK(found, "%s: no `mov $%d,%%eax; syscall` in its first 64 bytes (%d sites)", name, nr,
	      n);
	dlclose(libc);
}

int main(void)
{
	table();
	libc_wrapper("write", 1);
	libc_wrapper("getpid", 39);
	return check_summary("syscall_sites");
}
