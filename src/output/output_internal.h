#ifndef UBT_OUTPUT_INTERNAL_H
#define UBT_OUTPUT_INTERNAL_H

#include <stdlib.h>
#include "output.h"
#include "util/util.h"

/* printf.c: formats a printf record's arguments into b. */
void out_format(struct buf *b, const struct sema_printf *pf, const uint8_t *args);
/* maps.c: s (at most max bytes, up to a NUL) as a JSON string. */
void out_json_str(struct buf *b, const char *s, size_t max);

#endif
