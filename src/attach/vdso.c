/*
 * vdso.c - where the target's vDSO clock_gettime is, so that `nsecs` in
 * probe code reads the clock without a system call.
 *
 * Every process on the machine maps the same vDSO image (it is part of the
 * running kernel), so the function's offset inside ubt's own vDSO (found
 * through AT_SYSINFO_EHDR and the image's dynamic symbol table) plus the
 * base of the target's [vdso] mapping (from /proc/PID/maps) is its address
 * in the target.
 */
#include "attach.h"
#include "elfsym.h"

#include <elf.h>
#include <string.h>
#include <sys/auxv.h>

/* Offset of `name` from the start of ubt's own vDSO image, 0 if absent. */
static uint64_t own_vdso_offset(const char *name)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return 0;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
		const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		size_t n = sh[i].sh_size / sizeof(*sym);
		for (size_t k = 0; k < n; k++)
			if (sym[k].st_value && !strcmp(str + sym[k].st_name, name))
				return sym[k].st_value; /* the image is linked at 0 */
	}
	return 0;
}

uint64_t att_vdso_gettime(pid_t pid)
{
	uint64_t off = own_vdso_offset("__vdso_clock_gettime");
	struct proc_map *maps;
	int n;
	uint64_t addr = 0;
	if (!off || proc_maps_read(pid, &maps, &n))
		return 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(maps[i].path, "[vdso]")) {
			addr = maps[i].start + off;
			break;
		}
	proc_maps_free(maps, n);
	return addr;
}
