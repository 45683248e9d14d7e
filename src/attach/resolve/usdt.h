/*
 * usdt.h - USDT (SystemTap SDT) probes in ELF files: parsing the
 * argument operands of their notes (the notes themselves: elf/notes.h).  Used by
 * attach (usdt.c: resolving usdt attach points) and by the listing (list.c).
 *
 * Room rule (attach/resolve/, see resolve.h): reads files only; nothing
 * here touches a process.
 */
#ifndef UBT_USDT_H
#define UBT_USDT_H

#include <stdint.h>
#include <stddef.h>
#include "elf/elfsym.h"
#include "elf/notes.h"
#include "codegen/codegen.h"

/*
 * The symbols an operand may name (usdt_args.c), looked up by the caller:
 * find() gives sym's link-time address, or with tpoff its offset from the
 * thread pointer (a local-exec TLS variable, `%fs:v@tpoff`); 0 or -ENOENT.
 */
struct usdt_syms {
	int (*find)(void *ctx, const char *name, bool tpoff, int64_t *value);
	void *ctx;
};

#define USDT_ERR_LEN 200

/* Why each argument that became CG_USDT_BAD could not be parsed ("" for the others). */
struct usdt_arg_errs {
	char msg[CG_USDT_MAX_ARGS][USDT_ERR_LEN];
};

/*
 * One operand, text[0..len): 0, or -EINVAL with a->kind CG_USDT_BAD and
 * "cannot parse argument 'TEXT': why" in err.  pc is the location's
 * link-time address (symbols become relative to it).
 */
int usdt_arg_parse(const char *text, size_t len, uint64_t pc, const struct usdt_syms *syms,
		   struct cg_usdt_arg *a, char *err, size_t errlen);
/*
 * A note's operand list into spec: every operand gets its slot, those that
 * cannot be parsed as CG_USDT_BAD (reason in errs, which may be NULL), so
 * only a script reading one of them is refused.
 */
void usdt_args_parse(const char *args, uint64_t pc, const struct usdt_syms *syms,
		     struct cg_usdt_spec *spec, struct usdt_arg_errs *errs);

/* The symbols of an ELF file for usdt_args_parse (usdt.c). */
struct usdt_syms usdt_elf_syms(struct ef_file *f);

#endif
