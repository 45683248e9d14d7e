/*
 * test_bounds.c - function bounds in a stripped file (src/elf/bounds.c).
 *
 * argv[1] is target_bounds built -O2 with its .symtab, argv[2] the same
 * code linked with -s (no .symtab, as Debian ships programs).  For every
 * function symbol with a size in the first, the stripped copy must give the
 * same bounds from an address inside the function: from .eh_frame, or from
 * .dynsym when the function is exported.  Also: addresses outside any
 * function (the ELF header) are not claimed, and the copy with symbols
 * answers from .symtab.
 */
#include "elf/elfsym.h"
#include "util/util.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

struct fn {
	char name[64];
	uint64_t value, size;
};

struct fns {
	struct fn v[256];
	int n;
};

static bool collect(const struct ef_sym *s, void *arg)
{
	struct fns *fs = arg;
	if (!s->dynamic && s->defined && s->type == STT_FUNC && s->size && fs->n < 256) {
		struct fn *f = &fs->v[fs->n++];
		snprintf(f->name, sizeof(f->name), "%s", s->name);
		f->value = s->value;
		f->size = s->size;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct ef_file full, stripped;
	if (argc < 3 || ef_open(&full, argv[1]) || ef_open(&stripped, argv[2])) {
		fprintf(stderr, "usage: test_bounds TARGET TARGET_STRIPPED\n");
		return 1;
	}
	struct fns fs = {.n = 0};
	ef_foreach_sym(&full, collect, &fs);
	int named = 0;
	for (int i = 0; i < fs.n; i++) {
		const struct fn *f = &fs.v[i];
		struct ef_range r;
		enum ef_bounds from;
		/* crt's _init and _fini have no unwind entry */
		if (ef_fde_around(&stripped, f->value, &r) == -ENOENT)
			continue;
		named += !strncmp(f->name, "tb_", 3);
		uint64_t mid = f->value + f->size / 2;
		CHECK_EQ(ef_func_around(&stripped, mid, &r, &from), 0, "%s", f->name);
		CHECK_EQ(r.start, f->value, "%s", f->name);
		CHECK_EQ(r.end, f->value + f->size, "%s", f->name);
		CHECK(from == EF_BOUNDS_EH_FRAME || from == EF_BOUNDS_DYNSYM, "%s: %s", f->name,
		      ef_bounds_name(from));
		CHECK_EQ(ef_func_around(&full, mid, &r, &from), 0, "%s", f->name);
		CHECK_EQ(from, EF_BOUNDS_SYMTAB, "%s", f->name);
	}
	/* tb_leaf, tb_loop, tb_static, tb_switch, and main's part: all seen */
	CHECK(named >= 4, "%d of the tb_ functions have an unwind entry", named);
	struct ef_range r;
	enum ef_bounds from;
	CHECK_EQ(ef_func_around(&stripped, 0, &r, &from), -ENOENT);
	CHECK_EQ(from, EF_BOUNDS_NONE);
	ef_close(&full);
	ef_close(&stripped);
	return check_summary("bounds");
}
