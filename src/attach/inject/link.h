/*
 * link.h - a small static linker for x86-64 relocatable objects.
 *
 * ubt places code into the target itself instead of asking the target's
 * dynamic loader: the runtime object (built with the project) and the
 * probe code object (from LLVM) are linked here, at the address the code
 * will have in the target, into one flat image that is copied there.
 *
 * Room rule (attach/inject/, see session_internal.h): the linker itself is
 * pure (memory in, image out); session.c and placement.c copy the image
 * into the target.
 */
#ifndef UBT_LINK_H
#define UBT_LINK_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

struct link_input {
	const void *elf;
	size_t size;
	const char *name; /* for messages: "runtime", "probes" */
};

/* A symbol the inputs refer to but do not define (e.g. ubt_shm). */
struct link_extern {
	const char *name;
	uint64_t addr;
};

struct link_symbol {
	char *name;
	uint64_t addr;
};

/* A section of an input as placed in the image (for `-d link`). */
struct link_section {
	char *input; /* link_input.name */
	char *name;
	uint64_t addr, size;
	bool exec, write; /* SHF_EXECINSTR, SHF_WRITE (.data.rel.ro*) */
};

struct link_image {
	uint8_t *bytes; /* size bytes, to be placed at base */
	size_t size;
	uint64_t base;
	struct link_symbol *syms; /* global symbols defined by the inputs */
	int nsyms;
	struct link_section *secs; /* every placed section, in address order */
	int nsecs;
	uint64_t got;                /* the GOT's address, after the sections */
	int ngot;                    /* its entries */
	struct link_symbol *externs; /* the externs the inputs referred to, with their addresses */
	int nexterns;
};

/*
 * Links the inputs at base.  Returns 0, or -EINVAL with a message in err
 * (an undefined symbol, an unsupported relocation, an out-of-range one).
 */
int link_objects(const struct link_input *in, int nin, uint64_t base,
		 const struct link_extern *ext, int next, struct link_image *out, char *err,
		 size_t errlen);
/* Address of a global symbol of the image, or 0. */
uint64_t link_lookup(const struct link_image *img, const char *name);
void link_image_free(struct link_image *img);

#endif
