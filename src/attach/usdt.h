/*
 * usdt.h - USDT (SystemTap SDT) probes in ELF files: reading the
 * .note.stapsdt notes and parsing their argument operands.  Used by
 * attach (usdt.c: resolving usdt attach points) and by the listing (list.c).
 */
#ifndef UBT_USDT_H
#define UBT_USDT_H

#include <stdint.h>
#include <stddef.h>
#include "attach/elfsym.h"
#include "codegen/codegen.h"

/* One note: one location of a probe (a probe inlined twice has two). */
struct usdt_note {
	char *provider;
	char *name;
	uint64_t pc;   /* link-time address of the nop, adjusted by .stapsdt.base */
	uint64_t sema; /* link-time address of the semaphore, 0 if none */
	char *args;    /* operand text, e.g. "-4@%edx 8@-16(%rbp)" */
};

struct usdt_notes {
	struct usdt_note *v;
	int n;
};

/* Reads every stapsdt note of f (none is not an error: n = 0). */
int usdt_notes_read(struct elf_file *f, struct usdt_notes *out);
void usdt_notes_free(struct usdt_notes *notes);

/*
 * Parses a note's operand text into spec.  Symbols (`g(%rip)`, absolute
 * `g`) are looked up in f and made relative to the location.  Returns 0, or
 * -EINVAL with a reason in err.
 */
int usdt_args_parse(struct elf_file *f, const struct usdt_note *note, struct cg_usdt_spec *spec,
		    char *err, size_t errlen);

#endif
