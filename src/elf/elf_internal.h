/*
 * elf_internal.h - what the ELF layer's files share among themselves
 * (libelf types; the layer's headers keep them out of everyone else's).
 */
#ifndef UBT_ELF_INTERNAL_H
#define UBT_ELF_INTERNAL_H

#include <gelf.h>

/* The section called name (and its header in *out), or NULL. */
Elf_Scn *ef_section(Elf *e, const char *name, GElf_Shdr *out);

#endif
