#ifndef UBT_OUTPUT_INTERNAL_H
#define UBT_OUTPUT_INTERNAL_H

#include <stdlib.h>
#include "output.h"
#include "util/util.h"

/* printf.c: formats a printf record's arguments into b. */
void out_format(struct buf *b, const struct sema_printf *pf, const uint8_t *args);

#endif
