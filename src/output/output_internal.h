#ifndef UBT_OUTPUT_INTERNAL_H
#define UBT_OUTPUT_INTERNAL_H

#include <stdlib.h>
#include "output.h"
#include "util/util.h"

/* printf.c: formats a printf record's arguments into b. */
void out_format(struct buf *b, const struct sema_printf *pf, const uint8_t *args);
/* maps.c: s (at most max bytes, up to a NUL) as a JSON string. */
void out_json_str(struct buf *b, const char *s, size_t max);

/* calls.c: an RT_EV_VALUE or RT_EV_CALL record's action (print(v), system, ...). */
void out_event_call(struct out *o, uint32_t type, uint32_t id, const uint8_t *payload,
		    uint32_t len);

/* values.c: one value as bpftrace prints it (json: as a JSON value). */
void out_value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, bool json);
/* values.c: buf() bytes for %r (kind 's'), %rx ('x'), %rh ('h'). */
void out_buf_text(struct buf *b, char kind, const uint8_t *v, size_t len);
/* values.c: buf(), strftime(), ntop(), strerror(), macaddr() values and
 * arrays (pton()) as bpftrace prints them; false for other types. */
bool out_fmt_value_text(struct buf *b, const struct ast_type *t, const uint8_t *p, bool json);
/* username: the name of uid in /etc/passwd, "" if none (values.c) */
const char *out_user_name(uint32_t uid);
/* cgpath.c: cgroup_path()'s text for cgroup inode id in the hierarchies
 * whose names match filter (bpftrace's wildcards) */
void out_cgroup_path(struct buf *b, const char *filter, uint64_t id);
/* values.c: the program's formats, for strftime() values (set by out_init) */
extern const struct sema_info *out_fmt_info;
/* values.c: a map key of a blob type (ast_type_is_blob) as bpftrace prints it */
void out_key_text(struct buf *b, const struct ast_type *t, const uint8_t *p);
/* values.c: strftime() of a format and CLOCK_BOOTTIME nanoseconds, bpftrace's
 * way (%f: microseconds); "(?)" if strftime fails */
/* warn.c: a diagnostic list that quotes the script (-k warnings, errorf) */
struct diags;
void out_diag_init(const struct out *o, struct diags *d);
void out_strftime(struct buf *b, const char *fmt, uint64_t ns);
/* A strftime format that starts with this byte times nanoseconds since the
 * epoch (nsecs(tai)), not since boot (sema_fmt.c puts it there). */
#define OUT_FMT_EPOCH '\x01'
/* values.c: an integer of type t stored at p, sign-extended when signed. */
int64_t out_int_at(const struct ast_type *t, const uint8_t *p);

#endif
