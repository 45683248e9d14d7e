/*
 * elfsym.h - finding things in the target's ELF files and address space:
 * symbols (.symtab and .dynsym, via libelf), the mappings of a process
 * (/proc/PID/maps) and where a file is loaded in it.
 *
 * Layer rule (src/elf/): read-only, below attach and output.  It opens ELF
 * files and reads /proc/PID/maps; it never touches a process otherwise and
 * includes nothing of ubt but util/ (tests/layers/check.py).  Its names
 * begin with ef_ (an ELF file: ef_open, ef_foreach_sym, ...) or proc_ (a
 * process's /proc files), never with libelf's elf_, so that a reader
 * tells ubt's layer from the library under it.  The layer's other files:
 * notes.h (USDT notes), findlib.h (a library by name, as ld.so finds it);
 * bounds.c implements this header's ef_func_around (function bounds).
 */
#ifndef UBT_ELFSYM_H
#define UBT_ELFSYM_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>

struct ef_symbol {
	char *name;        /* malloc'ed copy; the caller frees it */
	uint64_t value;    /* st_value: link-time virtual address */
	uint64_t size;     /* st_size: 0 if unknown */
	uint64_t file_off; /* offset of the symbol's first byte in the file */
};

/* [start, end) of link-time addresses */
struct ef_range {
	uint64_t start, end;
};

struct ef_file {
	char *path;
	int fd;
	void *elf;       /* Elf * (libelf) */
	bool is_pie;     /* ET_DYN */
	uint64_t entry;  /* e_entry */
	dev_t dev;
	ino_t ino;
	/* the caller's choice: ignore the separate debug file (ef_debug_file
	 * returns NULL), as if it were not installed (bench/coverage) */
	bool no_debug_file;
	/* .eh_frame's FDE ranges, sorted, read on first use (bounds.c) */
	struct ef_range *fde;
	size_t nfde;
	bool fde_read;
};

int ef_open(struct ef_file *f, const char *path);
void ef_close(struct ef_file *f);
/*
 * Finds a function symbol (STT_FUNC or STT_GNU_IFUNC, defined) by exact
 * name in .symtab, then .dynsym.  -ENOENT if absent.
 */
int ef_find_func(struct ef_file *f, const char *name, struct ef_symbol *sym);
/*
 * Every function symbol of f with an address (STT_FUNC or STT_GNU_IFUNC; an
 * undefined one with an address is a non-PIE program's PLT entry) from
 * .symtab and .dynsym, and, when f has no .symtab, from the
 * .symtab of its separate debug file (ef_debug_file): the names bpftrace
 * lists and attaches.  A name may come from several tables.  rank: 2 for
 * global or weak, +1 for a default version (see sym_rank in elfsym.c).
 */
struct ef_func {
	const char *name; /* valid during the call only */
	uint64_t value, size;
	int rank;
	bool dynamic;    /* from .dynsym: exported */
	bool debug_file; /* from the separate debug file */
	bool plt;        /* undefined, with an address: a PLT entry */
};
typedef void (*ef_func_fn)(const struct ef_func *fn, void *arg);
void ef_foreach_func(struct ef_file *f, ef_func_fn fn, void *arg);
/*
 * gosym.c: the functions of a Go program's .gopclntab (Go 1.18+), for one
 * without .symtab; ef_foreach_func calls it when neither the file nor its
 * debug file has one.  False when the file has no such table.
 */
bool ef_foreach_go_func(struct ef_file *f, ef_func_fn fn, void *arg);
/* dwname.c: the function name of DWARF die (a Dwarf_Die *, an inlined
 * call) through its abstract origin, or NULL */
const char *ef_dw_origin_name(void *die);
/* gosym.c: elf (an Elf *) is a Go program (.gopclntab or .go.buildinfo) */
bool ef_elf_is_go(void *elf);
/* gosym.c: a Go program built without DWARF (no .debug_frame:
 * `-ldflags=-w`); its code keeps frame pointers on x86-64 (Go 1.7 and
 * later) */
bool ef_elf_go_without_cfi(void *elf);

/*
 * Every symbol of .symtab, then of .dynsym (the file's own tables,
 * not a debug file's), in table order: the one walk over symbol tables
 * that the rest of ubt builds on.  fn returns true to stop the walk;
 * ef_foreach_sym then returns true.
 */
struct ef_sym {
	const char *name; /* "" when it has none (a section's); valid during the call only */
	uint64_t value, size;
	int type;         /* STT_FUNC, STT_OBJECT, ... */
	bool defined;     /* st_shndx is not SHN_UNDEF */
	bool dynamic;     /* from .dynsym */
};
typedef bool (*ef_sym_fn)(const struct ef_sym *s, void *arg);
bool ef_foreach_sym(struct ef_file *f, ef_sym_fn fn, void *arg);

/*
 * Bytes after the function [value, value + size) that belong to no symbol
 * and no other section, up to the next 16-byte boundary (compilers align
 * functions to 16 and fill the gap with nops or int3): 0 when unknown.
 */
uint64_t ef_fill_after(struct ef_file *f, uint64_t value, uint64_t size);

/* Reads len bytes of f at link-time address vaddr (from its PT_LOAD): 0,
 * -EFAULT when no segment holds them in the file, -EIO. */
int ef_read_vaddr(struct ef_file *f, uint64_t vaddr, uint8_t *buf, size_t len);

/* Finds any defined symbol (functions and objects) by name. */
int ef_find_symbol(struct ef_file *f, const char *name, struct ef_symbol *sym);

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
/* Process pid maps the file (dev, ino): false if not, or if its maps cannot be read. */
bool proc_maps_file(pid_t pid, dev_t dev, ino_t ino);

/* The mapping of libc.so.N in maps, or NULL. */
const struct proc_map *proc_find_libc(const struct proc_map *maps, int n);

/*
 * The load bias of file f in the process: runtime address = bias + vaddr.
 * Matched by device and inode (so a path given relative to ubt's cwd or
 * through a symlink still matches).  -ENOENT if f is not mapped.
 */
int proc_load_bias(const struct proc_map *maps, int n, const struct ef_file *f, uint64_t *bias);

/*
 * The program and the files the process has mapped executable, as paths
 * through /proc/PID/root, the program first.  -ESRCH if pid is gone.
 */
int proc_objects(pid_t pid, char ***paths, int *n);
void proc_objects_free(char **paths, int n);

/*
 * The separate debug file of a stripped ELF file (Debian's -dbg and
 * -dbgsym packages): /usr/lib/debug/.build-id/xx/yyyy.debug from the
 * build-id note, else .gnu_debuglink next to the file or under
 * /usr/lib/debug.  NULL when there is none.
 */
char *ef_debug_file(const struct ef_file *f);

/*
 * The function around link-time address pc, for the branch check of a
 * probe site inside it (bounds.c): the smallest function symbol with a
 * size holding pc (.symtab, .dynsym), else the debug file's, else the
 * .eh_frame FDE holding pc.  *from says which; -ENOENT when none does.
 */
enum ef_bounds {
	EF_BOUNDS_NONE,	      /* nothing holds the address */
	EF_BOUNDS_SYMTAB,     /* the file's .symtab */
	EF_BOUNDS_DYNSYM,     /* the file's .dynsym */
	EF_BOUNDS_DEBUG_FILE, /* the .symtab of its separate debug file */
	EF_BOUNDS_EH_FRAME,   /* an FDE of its .eh_frame */
};
int ef_func_around(struct ef_file *f, uint64_t pc, struct ef_range *out, enum ef_bounds *from);
/*
 * ef_fill_after() for a function whose bounds came from ef_func_around():
 * also ends where any function (an FDE of a static function in a stripped
 * file) holds a byte of the gap.
 */
uint64_t ef_fill_after_func(struct ef_file *f, uint64_t start, uint64_t size);
/*
 * The size of the function whose symbol at vaddr says size: size itself,
 * or when it is 0 (asm without .size, crt's functions) the length of the
 * .eh_frame FDE that starts at vaddr, else 0 (unknown).
 */
uint64_t ef_entry_size(struct ef_file *f, uint64_t vaddr, uint64_t size);
/* The FDE of f's .eh_frame holding pc: 0, or -ENOENT. */
int ef_fde_around(struct ef_file *f, uint64_t pc, struct ef_range *out);
/* Every FDE range of f's .eh_frame, by address: the functions of a stripped
 * file that no symbol names (libc's start_thread) among them. */
typedef void (*ef_range_fn)(const struct ef_range *r, void *arg);
void ef_foreach_fde(struct ef_file *f, ef_range_fn fn, void *arg);
/* ".symtab", ".dynsym", "debug file", ".eh_frame" or "unknown" */
const char *ef_bounds_name(enum ef_bounds from);

#endif
