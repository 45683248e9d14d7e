/*
 * cg_fmt.c - code generation of the value-formatting functions: buf,
 * strftime, join, strerror, ntop, pton, macaddr, cgroup_path.  Called from cg_call()
 * (cg_call.c).  Probe code only gathers the bytes (the layouts are in
 * ast.h, TY_BUF .. TY_CGPATH); ubt turns them into text when it prints
 * them (output/values.c, output/calls.c).
 */
#include "cg_internal.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

/* A zeroed buffer of size bytes in the probe's frame. */
static LLVMValueRef fmt_buffer(struct cg *c, int size, const char *name)
{
	LLVMValueRef b = cg_alloca(c, LLVMArrayType(c->i8, (unsigned)size), name);
	LLVMBuildMemSet(c->b, b, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)size), 1);
	return b;
}

/*
 * len bytes of argument a into dst: copied when a is a value in the
 * probe's frame (an array, a string), else read from the target at the
 * address a holds, fault-tolerant (a bad address leaves zeros).
 */
static void fmt_bytes_of(struct cg *c, const struct ast_node *site, const struct ast_node *a,
			 LLVMValueRef dst, LLVMValueRef len)
{
	LLVMValueRef v = cg_expr(c, a);
	if (cg_is_buffer(&a->type)) {
		LLVMBuildMemCpy(c->b, dst, 1, v, 1, len);
		return;
	}
	LLVMValueRef rd = cg_read_target(c, dst, v, len);
	cg_check_read(c, site, rd, a->type.as, false); /* -kk (cg_check.c) */
}

/* buf(p, n) | buf(array): [u8 length][bytes], length = min(n, the buffer's size) */
static LLVMValueRef fmt_buf(struct cg *c, const struct ast_node *n)
{
	int size = n->type.size;
	LLVMValueRef b = fmt_buffer(c, size, "buf");
	LLVMValueRef cap = cg_const(c, (uint64_t)(size - 1)), len = cap;
	if (n->nkids == 2) {
		LLVMValueRef want = cg_expr(c, n->kids[1]);
		len = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntULT, want, cap, ""), want, cap,
				      "buflen");
	}
	LLVMBuildStore(c->b, LLVMBuildTrunc(c->b, len, c->i8, ""), b);
	LLVMValueRef one = cg_const(c, 1);
	fmt_bytes_of(c, n, n->kids[0], LLVMBuildGEP2(c->b, c->i8, b, &one, 1, ""), len);
	return b;
}

static void fmt_store64(struct cg *c, LLVMValueRef buf, uint64_t off, LLVMValueRef v)
{
	LLVMValueRef o = cg_const(c, off);
	LLVMValueRef st = LLVMBuildStore(c->b, v, LLVMBuildGEP2(c->b, c->i8, buf, &o, 1, ""));
	LLVMSetAlignment(st, 1);
}

/* ntop([af,] addr): [u64 af][16 address bytes] */
static LLVMValueRef fmt_ntop(struct cg *c, const struct ast_node *n)
{
	LLVMValueRef b = fmt_buffer(c, 24, "inet");
	const struct ast_node *a = n->kids[n->nkids - 1];
	LLVMValueRef af;
	if (n->nkids == 2)
		af = cg_expr(c, n->kids[0]);
	else
		af = cg_const(c, a->type.kind == TY_INT || a->type.size == 4 ? AF_INET : AF_INET6);
	LLVMValueRef o8 = cg_const(c, 8);
	LLVMValueRef dst = LLVMBuildGEP2(c->b, c->i8, b, &o8, 1, "");
	if (a->type.kind == TY_INT) {
		/* the integer's own bytes, as bpftrace 0.17 stores it */
		int bytes = a->type.size > 0 && a->type.size <= 8 ? a->type.size : 8;
		LLVMValueRef v = LLVMBuildTrunc(c->b, cg_expr(c, a),
						LLVMIntTypeInContext(c->ctx, (unsigned)bytes * 8), "");
		LLVMSetAlignment(LLVMBuildStore(c->b, v, dst), 1);
	} else {
		LLVMBuildMemCpy(c->b, dst, 1, cg_expr(c, a), 1,
				cg_const(c, (uint64_t)(a->type.size > 16 ? 16 : a->type.size)));
	}
	fmt_store64(c, b, 0, af);
	return b;
}

/* pton("addr"): the address's bytes, a constant */
static LLVMValueRef fmt_pton(struct cg *c, const struct ast_node *n)
{
	unsigned char bytes[16] = {0};
	int count = n->type.count == 4 ? 4 : 16;
	inet_pton(count == 4 ? AF_INET : AF_INET6, n->kids[0]->str, bytes); /* sema checked it */
	LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMArrayType(c->i8, (unsigned)count), "pton");
	LLVMSetInitializer(g, LLVMConstStringInContext(c->ctx, (const char *)bytes,
							(unsigned)count, 1));
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	return g;
}

/*
 * join(argv[, delim]): an RT_EV_CALL record of RT_JOIN_MAX string slots,
 * filled by rt_fmt_join (runtime/data/rt_fmt.c) straight into the ring.
 */
static void fmt_join(struct cg *c, const struct ast_node *n)
{
	const struct sema_printf *pf = cg_find_printf(c, n);
	if (!pf || !c->thread) {
		cg_fail(c, n, "internal: join without format information");
		return;
	}
	LLVMValueRef argv = cg_expr(c, n->kids[0]);
	LLVMValueRef nh;
	LLVMBasicBlockRef skip;
	uint32_t len = sizeof(struct rt_event_hdr) + RT_JOIN_MAX * RT_JOIN_ARG_SIZE;
	LLVMValueRef rec = cg_ring_reserve(c, len, RT_EV_CALL, (uint32_t)pf->id, &nh, &skip);
	LLVMTypeRef fty, p[] = {c->ptr, c->ptr, c->i64};
	LLVMValueRef f = cg_rt_fn(c, "rt_fmt_join", c->void_t, p, 3, &fty);
	LLVMValueRef args[] = {c->thread, cg_gep_const(c, rec, sizeof(struct rt_event_hdr)), argv};
	LLVMBuildCall2(c->b, fty, f, args, 3, "");
	cg_ring_commit(c, nh, skip);
}

/* The value of a formatting call (a buffer), or NULL if n is not one. */
LLVMValueRef cg_fmt_call(struct cg *c, const struct ast_node *n)
{
	const char *f = n->str;
	if (!strcmp(f, "buf"))
		return fmt_buf(c, n);
	if (!strcmp(f, "ntop"))
		return fmt_ntop(c, n);
	if (!strcmp(f, "pton"))
		return fmt_pton(c, n);
	if (!strcmp(f, "strftime") || !strcmp(f, "strerror") || !strcmp(f, "cgroup_path")) {
		/* strftime(fmt, ns), cgroup_path(id[, filter]): {format or filter
		 * id, value}; strerror(e): {value} */
		bool ts = f[3] != 'e';
		LLVMValueRef b = fmt_buffer(c, ts ? 16 : 8, f);
		LLVMValueRef v = cg_expr(c, n->kids[f[1] == 't' && ts ? 1 : 0]);
		if (ts) {
			const struct sema_printf *pf = cg_find_printf(c, n);
			fmt_store64(c, b, 0, cg_const(c, pf ? (uint64_t)pf->id : 0));
		}
		fmt_store64(c, b, ts ? 8 : 0, v);
		return b;
	}
	if (!strcmp(f, "macaddr")) {
		LLVMValueRef b = fmt_buffer(c, 6, "mac");
		fmt_bytes_of(c, n, n->kids[0], b, cg_const(c, 6));
		return b;
	}
	if (!strcmp(f, "join")) {
		fmt_join(c, n);
		return cg_const(c, 0);
	}
	return NULL;
}
