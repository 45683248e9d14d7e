/*
 * calls.c - events that ask ubt to do something other than print a
 * printf line: print(value), and the functions bpftrace runs in user space
 * (time, system, cat).  Probe code records the call's id (a sema_printf:
 * its format and argument types) and its argument values (runtime/abi.h,
 * RT_EV_VALUE / RT_EV_CALL); output.c hands each record here, in the
 * thread's event order.
 */
#include "output.h"
#include "output_internal.h"
#include "util/diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* BPFTRACE_CAT_BYTES_MAX: cat() prints at most this many bytes of a file (bpftrace: 10240) */
static size_t cat_bytes_max(void)
{
	const char *e = getenv("BPFTRACE_CAT_BYTES_MAX");
	long v = e && *e ? atol(e) : 10240;
	return v > 0 ? (size_t)v : 10240;
}

static void put_json_typed(struct out *o, const char *type, const char *text, size_t len)
{
	struct buf j = {0};
	buf_printf(&j, "{\"type\": \"%s\", \"data\": ", type);
	out_json_str(&j, text, len);
	buf_append(&j, "}\n", 2);
	fwrite(j.data, 1, j.len, o->f);
	buf_free(&j);
}

/* print(value): the value and a newline; JSON {"type": "value", "data": v} */
static void print_value(struct out *o, const struct sema_printf *pf, const uint8_t *p)
{
	struct buf b = {0};
	if (o->json) {
		buf_printf(&b, "{\"type\": \"value\", \"data\": ");
		out_value_text(&b, &pf->args[0], p, true);
		buf_append(&b, "}\n", 2);
	} else {
		out_value_text(&b, &pf->args[0], p, false);
		buf_append(&b, "\n", 1);
	}
	fwrite(b.data, 1, b.len, o->f);
	buf_free(&b);
}

/* time(fmt): the local time now, through strftime (bpftrace formats when it gets the event) */
static void call_time(struct out *o, const struct sema_printf *pf)
{
	char text[512];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	size_t n = strftime(text, sizeof(text), pf->fmt, &tm);
	if (o->json)
		put_json_typed(o, "time", text, n);
	else
		fwrite(text, 1, n, o->f);
}

/* system(fmt, ...): runs the command with /bin/sh; its output goes where ours goes */
static void call_system(struct out *o, const char *cmd)
{
	fflush(o->f);
	FILE *p = popen(cmd, "r");
	if (!p) {
		fprintf(stderr, "ERROR: system(\"%s\"): %s\n", cmd, strerror(errno));
		return;
	}
	char tmp[4096];
	size_t n;
	struct buf all = {0};
	while ((n = fread(tmp, 1, sizeof(tmp), p)) > 0)
		buf_append(&all, tmp, n);
	pclose(p);
	if (o->json)
		/* bpftrace 0.17 names system()'s record "syscall" */
		put_json_typed(o, "syscall", all.data ? all.data : "", all.len);
	else if (all.len)
		fwrite(all.data, 1, all.len, o->f);
	buf_free(&all);
}

/* cat(fmt, ...): the file's first BPFTRACE_CAT_BYTES_MAX bytes */
static void call_cat(struct out *o, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ERROR: failed to open file '%s': %s\n", path, strerror(errno));
		return;
	}
	size_t max = cat_bytes_max();
	char *data = xmalloc(max + 1);
	size_t n = fread(data, 1, max, f);
	fclose(f);
	if (o->json)
		put_json_typed(o, "cat", data, n);
	else
		fwrite(data, 1, n, o->f);
	free(data);
}

/*
 * join(argv[, delim]): RT_JOIN_MAX strings of RT_JOIN_ARG_SIZE bytes each
 * (runtime/data/rt_fmt.c), up to the first empty one, joined by the delimiter
 * (the call's format) on a line of their own, as bpftrace 0.17.
 */
static void call_join(struct out *o, const struct sema_printf *pf, const uint8_t *p, uint32_t len)
{
	struct buf b = {0};
	for (uint32_t i = 0; i < RT_JOIN_MAX && (i + 1) * RT_JOIN_ARG_SIZE <= len; i++) {
		const char *s = (const char *)p + i * RT_JOIN_ARG_SIZE;
		if (!s[0])
			break;
		if (i)
			buf_append(&b, pf->fmt, strlen(pf->fmt));
		buf_append(&b, s, strnlen(s, RT_JOIN_ARG_SIZE));
	}
	if (o->json) {
		put_json_typed(o, "join", b.data ? b.data : "", b.len);
	} else {
		buf_append(&b, "\n", 1);
		fwrite(b.data, 1, b.len, o->f);
	}
	buf_free(&b);
}

/*
 * errorf(fmt, ...) / warnf(fmt, ...) (bpftrace 0.24): the text as a
 * diagnostic at the call's place in the script, on stderr, as bpftrace
 * prints it: "stdin:1:9-62: ERROR: text", the line and its underline.
 * warnf is silent under --no-warnings.  One trailing newline of the text
 * is dropped (the diagnostic ends its own line).
 */
static void call_errorf(struct out *o, const struct sema_printf *pf, bool error, const char *text)
{
	if (!error && o->no_warnings)
		return;
	struct diags one;
	out_diag_init(o, &one);
	size_t n = strlen(text);
	if (n && text[n - 1] == '\n')
		n--;
	if (error)
		diag_error(&one, pf->call->loc, "%.*s", (int)n, text);
	else
		diag_warning(&one, pf->call->loc, "%.*s", (int)n, text);
	/* one write: stderr is unbuffered, and diag_print writes piece by
	 * piece (an errorf in a hot probe made ubt slow to stop) */
	char *text_out = NULL;
	size_t n_out = 0;
	FILE *mem = open_memstream(&text_out, &n_out);
	if (mem) {
		diag_print(&one, mem);
		fclose(mem);
	}
	fflush(o->f);
	if (text_out)
		fwrite(text_out, 1, n_out, stderr);
	free(text_out);
	diag_free(&one);
}

void out_event_call(struct out *o, uint32_t type, uint32_t id, const uint8_t *payload,
		    uint32_t len)
{
	if (id >= (uint32_t)o->info->nprintfs)
		return;
	const struct sema_printf *pf = o->info->printfs[id];
	const char *fn = pf->call ? pf->call->str : "";
	if (type == RT_EV_VALUE) {
		print_value(o, pf, payload);
		return;
	}
	if (!strcmp(fn, "time")) {
		call_time(o, pf);
		return;
	}
	if (!strcmp(fn, "join")) {
		call_join(o, pf, payload, len);
		return;
	}
	struct buf text = {0};
	out_format(&text, pf, payload);
	if (!strcmp(fn, "system"))
		call_system(o, text.data ? text.data : "");
	else if (!strcmp(fn, "cat"))
		call_cat(o, text.data ? text.data : "");
	else if (!strcmp(fn, "errorf") || !strcmp(fn, "warnf"))
		call_errorf(o, pf, !strcmp(fn, "errorf"), text.data ? text.data : "");
	buf_free(&text);
}
