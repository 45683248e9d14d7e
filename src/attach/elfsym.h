/*
 * elfsym.h - finding things in the target's ELF files and address space:
 * symbols (.symtab and .dynsym, via libelf), the mappings of a process
 * (/proc/PID/maps) and where a file is loaded in it.
 */
#ifndef UBT_ELFSYM_H
#define UBT_ELFSYM_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>

struct elf_symbol {
	char *name;        /* malloc'ed copy; the caller frees it */
	uint64_t value;    /* st_value: link-time virtual address */
	uint64_t size;     /* st_size: 0 if unknown */
	uint64_t file_off; /* offset of the symbol's first byte in the file */
};

struct elf_file {
	char *path;
	int fd;
	void *elf;       /* Elf * (libelf) */
	bool is_pie;     /* ET_DYN */
	uint64_t entry;  /* e_entry */
	dev_t dev;
	ino_t ino;
};

int elf_file_open(struct elf_file *f, const char *path);
void elf_file_close(struct elf_file *f);
/*
 * Finds a function symbol (STT_FUNC or STT_GNU_IFUNC, defined) by exact
 * name in .symtab, then .dynsym.  -ENOENT if absent.
 */
int elf_find_func(struct elf_file *f, const char *name, struct elf_symbol *sym);
/* Finds any defined symbol (functions and objects) by name. */
int elf_find_symbol(struct elf_file *f, const char *name, struct elf_symbol *sym);

/* One line of /proc/PID/maps. */
struct proc_map {
	uint64_t start, end, offset;
	char perms[5];
	dev_t dev;
	ino_t ino;
	char *path; /* may be "" or "[vdso]" etc. */
};

int proc_maps_read(pid_t pid, struct proc_map **maps, int *n);
void proc_maps_free(struct proc_map *maps, int n);

/* The mapping of libc.so.N in maps, or NULL. */
const struct proc_map *proc_find_libc(const struct proc_map *maps, int n);

/*
 * The load bias of file f in the process: runtime address = bias + vaddr.
 * Matched by device and inode (so a path given relative to ubt's cwd or
 * through a symlink still matches).  -ENOENT if f is not mapped.
 */
int proc_load_bias(const struct proc_map *maps, int n, const struct elf_file *f, uint64_t *bias);

#endif
