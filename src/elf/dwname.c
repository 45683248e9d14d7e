/*
 * dwname.c - the name of an inlined call's function, from DWARF: the
 * DW_TAG_inlined_subroutine's abstract origin's DW_AT_name, through
 * DW_AT_specification too (libdw's dwarf_attr_integrate).  Shared by
 * resolve (inline.c: a function's inlined copies) and output (srcinfo.c:
 * the inlined frames of a stack).
 */
#include "elfsym.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

const char *ef_dw_origin_name(void *die)
{
	Dwarf_Attribute at;
	Dwarf_Die origin;
	if (!dwarf_attr(die, DW_AT_abstract_origin, &at) || !dwarf_formref_die(&at, &origin))
		return NULL;
	Dwarf_Attribute nm;
	return dwarf_attr_integrate(&origin, DW_AT_name, &nm) ? dwarf_formstring(&nm) : NULL;
}
