/*
 * notes.h - USDT (SystemTap SDT) probe notes of an ELF file (notes.c).
 *
 * Layer rule: see elfsym.h (read-only; util/ only).
 */
#ifndef UBT_ELF_NOTES_H
#define UBT_ELF_NOTES_H

#include <stdint.h>
#include "elf/elfsym.h"

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
int usdt_notes_read(struct ef_file *f, struct usdt_notes *out);
void usdt_notes_free(struct usdt_notes *notes);

/*
 * The offset from the thread pointer of a local-exec TLS variable at
 * offset v of f's PT_TLS template (an operand's `%fs:v@tpoff`): 0, or
 * -ENOENT when f has no TLS.
 */
int ef_tls_offset(struct ef_file *f, uint64_t v, int64_t *out);

#endif
