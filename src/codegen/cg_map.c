/*
 * cg_map.c - LLVM IR for map access: key lookup, value addresses, the
 * per-CPU aggregation update, assignment and reads of every map kind
 * (layout in runtime/abi.h, chosen by cg_layout.c).
 *
 * Aggregations (count, sum) add into the value array of the current CPU
 * inside an rseq critical section, so concurrent threads never write the
 * same cache line and a preempted or migrated update restarts instead of
 * racing (see cg_percpu_add).
 */
#include "cg_internal.h"
#include "util/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct cg_map_layout *cg_map_of(struct cg *c, const struct ast_node *n)
{
	return &c->layout->maps[n->map->id];
}

/* `@m[(a, b)]`: one tuple key standing for the keys a, b (sema.c's check_map) */
bool cg_map_flat_tuple(const struct ast_node *n)
{
	return n->nkids == 1 && n->kids[0]->type.kind == TY_TUPLE;
}

/* ---- per-CPU aggregation ---------------------------------------------- */

/*
 * Adds val to *(base + cpu * stride) for the current CPU, where base is the
 * CPU-0 slot of a per-CPU value.  With rseq (glibc >= 2.35 registers it for
 * every thread) this is a restartable sequence whose commit is the single
 * add; the kernel restarts it from .Lr if the thread is preempted,
 * migrated or signalled in between.  Threads without a CPU number (rseq
 * unregistered) and processes without rseq use the shared slot at index
 * ncpu with a locked add.  The kernel clears the thread's rseq_cs pointer
 * lazily; att_detach() clears any that still point into probe code before
 * unmapping it (a store here on every hit would cost ~0.4 ns).
 */
enum percpu_op {
	PC_ADD,  /* *slot += val */
	PC_UMAX, /* *slot = max(*slot, val), unsigned (min/max aggregations) */
};

/*
 * The rseq critical section for one per-CPU update.  For PC_ADD the commit
 * is the add itself; for PC_UMAX the section loads the slot, leaves early
 * when the stored value is already at least val, and commits with one
 * store.  The fallback slot (index ncpu) is updated with `lock add` or a
 * `lock cmpxchg` loop.
 */
static void cg_percpu_op(struct cg *c, LLVMValueRef base, uint64_t stride, LLVMValueRef val,
			 enum percpu_op op)
{
	char tmpl[2048], scale[64], commit[160], fb[320];
	uint64_t fallback = stride * c->layout->ncpu;
	if (stride && !(stride & (stride - 1)))
		snprintf(scale, sizeof(scale), "shlq $$%d, %%rax", __builtin_ctzll(stride));
	else
		snprintf(scale, sizeof(scale), "imulq $$%llu, %%rax, %%rax",
			 (unsigned long long)stride);
	if (op == PC_ADD) {
		snprintf(commit, sizeof(commit), "\taddq $1, ($0,%%rax)\n");
		snprintf(fb, sizeof(fb), "\tlock addq $1, %llu($0)\n", (unsigned long long)fallback);
	} else {
		snprintf(commit, sizeof(commit),
			 "\tleaq ($0,%%rax), %%rax\n"
			 "\tcmpq $1, (%%rax)\n"
			 "\tjae .Ld${:uid}\n"
			 "\tmovq $1, (%%rax)\n");
		snprintf(fb, sizeof(fb),
			 "\tmovq %llu($0), %%rax\n"
			 ".Ll${:uid}:\n"
			 "\tcmpq $1, %%rax\n"
			 "\tjae .Ld${:uid}\n"
			 "\tlock cmpxchgq $1, %llu($0)\n"
			 "\tjne .Ll${:uid}\n",
			 (unsigned long long)fallback, (unsigned long long)fallback);
	}
	if (c->facts->has_rseq) {
		int64_t cs = c->facts->rseq_off + RT_RSEQ_CS, cpu = c->facts->rseq_off + RT_RSEQ_CPU_ID;
		snprintf(tmpl, sizeof(tmpl),
			 ".Lr${:uid}:\n"
			 "\tleaq .Lcs${:uid}(%%rip), %%rax\n"
			 "\tmovq %%rax, %%fs:%lld\n"
			 ".Ls${:uid}:\n"
			 "\tmovl %%fs:%lld, %%eax\n"
			 "\tcmpl $$%u, %%eax\n"
			 "\tjae .Lf${:uid}\n"
			 "\t%s\n"
			 "%s"
			 ".Lp${:uid}:\n"
			 "\tjmp .Ld${:uid}\n"
			 "\t.long 0x%x\n"
			 ".La${:uid}:\n"
			 "\tjmp .Lr${:uid}\n"
			 ".Lf${:uid}:\n"
			 "%s"
			 ".Ld${:uid}:\n"
			 "\t.pushsection .data.rel.ro.ubt_rseq,\"aw\",@progbits\n"
			 "\t.balign 32\n"
			 ".Lcs${:uid}:\n"
			 "\t.long 0, 0\n"
			 "\t.quad .Ls${:uid}, .Lp${:uid} - .Ls${:uid}, .La${:uid}\n"
			 "\t.popsection\n",
			 (long long)cs, (long long)cpu, c->layout->ncpu, scale, commit,
			 RT_RSEQ_SIG, fb);
	} else {
		snprintf(tmpl, sizeof(tmpl), "%s.Ld${:uid}:\n", fb);
	}
	/* an add takes a constant (count's 1) as an immediate: one register
	 * less for the probe to save (cmpxchg needs a register) */
	const char *cons = op == PC_ADD ? "r,re,~{rax},~{memory},~{cc},~{dirflag},~{fpsr},~{flags}"
					: "r,r,~{rax},~{memory},~{cc},~{dirflag},~{fpsr},~{flags}";
	LLVMTypeRef params[] = {c->ptr, c->i64};
	LLVMTypeRef fty = LLVMFunctionType(c->void_t, params, 2, 0);
	LLVMValueRef ia = LLVMGetInlineAsm(fty, tmpl, strlen(tmpl), (char *)cons, strlen(cons), 1,
					   0, LLVMInlineAsmDialectATT, 0);
	LLVMValueRef args[] = {base, val};
	LLVMBuildCall2(c->b, fty, ia, args, 2, "");
}

static void cg_percpu_add(struct cg *c, LLVMValueRef base, uint64_t stride, LLVMValueRef val)
{
	cg_percpu_op(c, base, stride, val, PC_ADD);
}

static LLVMValueRef byte_off(struct cg *c, LLVMValueRef p, LLVMValueRef off)
{
	return LLVMBuildGEP2(c->b, c->i8, p, &off, 1, "");
}

/*
 * hist(): 0 for v < 0, 1 for 0, else 65 - clz(v) (1 -> 2, 2..3 -> 3, ...);
 * clz(0) = 64 makes 0 bucket 1 without a compare.  With the machine's
 * lzcnt (codegen.c) that is lzcnt, a subtract and a select.
 */
static LLVMValueRef hist_bucket(struct cg *c, LLVMValueRef v, int k)
{
	LLVMTypeRef ty[] = {c->i64};
	unsigned id = LLVMLookupIntrinsicID("llvm.ctlz", 9);
	LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->mod, id, ty, 1);
	LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, ty, 1);
	LLVMValueRef args[] = {v, LLVMConstInt(c->i1, 0, 0)};
	LLVMValueRef clz = LLVMBuildCall2(c->b, fty, f, args, 2, "");
	LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, v, cg_const(c, 0), "");
	if (k == 0) {
		LLVMValueRef b = LLVMBuildSub(c->b, cg_const(c, 65), clz, "");
		return LLVMBuildSelect(c->b, neg, cg_const(c, 0), b, "bucket");
	}
	/*
	 * hist(v, k): v < 2^k has bucket v + 1; above, with p the place of v's
	 * top bit (63 - clz) and s = p - k, the k bits below the top bit,
	 * (v >> s) & (2^k - 1), pick one of the 2^k buckets of that power:
	 * bucket ((s + 1) << k) + those bits + 1.  v = 2^k (p = k, s = 0)
	 * gives (1 << k) + 1, right after the 2^k small ones.
	 */
	uint64_t mask = (1ull << k) - 1;
	LLVMValueRef p = LLVMBuildSub(c->b, cg_const(c, 63), clz, "");
	LLVMValueRef small = LLVMBuildICmp(c->b, LLVMIntULE, v, cg_const(c, mask), "");
	/* s is only used where v > mask, so p >= k; clamp it for the other side */
	LLVMValueRef sh = LLVMBuildSelect(c->b, small, cg_const(c, 0),
					  LLVMBuildSub(c->b, p, cg_const(c, (uint64_t)k), ""), "");
	LLVMValueRef low =
	    LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, v, sh, ""), cg_const(c, mask), "");
	LLVMValueRef big = LLVMBuildShl(c->b, LLVMBuildAdd(c->b, sh, cg_const(c, 1), ""),
					cg_const(c, (uint64_t)k), "");
	big = LLVMBuildAdd(c->b, big, LLVMBuildAdd(c->b, low, cg_const(c, 1), ""), "");
	LLVMValueRef b =
	    LLVMBuildSelect(c->b, small, LLVMBuildAdd(c->b, v, cg_const(c, 1), ""), big, "");
	return LLVMBuildSelect(c->b, neg, cg_const(c, 0), b, "bucket");
}

/* lhist(): 0 below min, 1 + (v - min) / step, at most nbuckets - 1. */
static LLVMValueRef lhist_bucket(struct cg *c, const struct sema_map *m, uint32_t nb,
				 LLVMValueRef v)
{
	LLVMValueRef mn = cg_const(c, (uint64_t)m->lhist_min);
	LLVMValueRef below = LLVMBuildICmp(c->b, LLVMIntSLT, v, mn, "");
	LLVMValueRef i = LLVMBuildUDiv(c->b, LLVMBuildSub(c->b, v, mn, ""),
				       cg_const(c, (uint64_t)m->lhist_step), "");
	i = LLVMBuildAdd(c->b, i, cg_const(c, 1), "");
	LLVMValueRef last = cg_const(c, nb - 1);
	i = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, i, last, ""), last, i, "");
	return LLVMBuildSelect(c->b, below, cg_const(c, 0), i, "bucket");
}

/* ---- maps ------------------------------------------------------------- */

/* The integer of type t (1..8 bytes) at p, extended to i64 by its sign. */
static LLVMValueRef load_int_at(struct cg *c, LLVMValueRef p, const struct ast_type *t)
{
	int bytes = t->size > 0 && t->size <= 8 ? t->size : 8;
	LLVMValueRef v = LLVMBuildLoad2(c->b, LLVMIntTypeInContext(c->ctx, (unsigned)bytes * 8), p, "");
	LLVMSetAlignment(v, 1);
	if (bytes == 8)
		return v;
	return t->is_signed ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

/* Stores key element v (of expression type et) as the map's key type kt at dst. */
static void store_key(struct cg *c, LLVMValueRef dst, const struct ast_type *kt,
		      const struct ast_type *et, LLVMValueRef v)
{
	if (kt->kind == TY_STR) {
		uint64_t len = (uint64_t)et->size < (uint64_t)kt->size ? (uint64_t)et->size
								      : (uint64_t)kt->size;
		cg_copy_str(c, dst, v, len);
		/* the last byte stays NUL even when the value filled its buffer */
		LLVMBuildStore(c->b, LLVMConstInt(c->i8, 0, 0),
			       byte_off(c, dst, cg_const(c, kt->size - 1)));
	} else if (ast_type_is_blob(kt->kind)) {
		/* sema made the types equal; the buffer's padding is zero (tuple_value) */
		cg_copy_str(c, dst, v, (uint64_t)kt->size);
	} else {
		LLVMBuildStore(c->b, v, dst);
	}
}

/*
 * Builds map node n's key in a stack buffer laid out as the map's key
 * (integers as 8 bytes, strings and tuples zero-padded to a multiple of 8).
 * A single tuple key is the same key as the list of its elements
 * (`@m[(1, "a")]` is `@m[1, "a"]`, as in newer bpftrace, where multi-keys
 * are tuples): its elements are taken out of the tuple's buffer.
 */
/*
 * llvm.lifetime.start/end of a key buffer: a probe that looks several keys
 * up (`/@s[arg0]/ { ... @s[arg0] ...; delete(@s[arg0]); }`) otherwise gets
 * one stack slot per lookup, and three of them took the latency idiom's
 * completion probe past RT_TARGET_FRAME onto the probe stack (a call more
 * per hit).  With the markers LLVM gives keys whose lives do not overlap
 * one slot; nested lookups (`@a[@a[1]]`) still get their own.
 */
static void key_life(struct cg *c, LLVMValueRef buf, bool start)
{
	static const char *const names[] = {"llvm.lifetime.end", "llvm.lifetime.start"};
	LLVMTypeRef pty = c->ptr;
	unsigned id = LLVMLookupIntrinsicID(names[start], strlen(names[start]));
	LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->mod, id, &pty, 1);
	/* an array of i8 (cg_map_key): its length is its size */
	LLVMValueRef args[] = {
	    LLVMConstInt(c->i64, LLVMGetArrayLength(LLVMGetAllocatedType(buf)), 0), buf};
	LLVMBuildCall2(c->b, LLVMGlobalGetValueType(f), f, args, 2, "");
}

LLVMValueRef cg_map_key(struct cg *c, const struct ast_node *n, LLVMValueRef *buf)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
	const struct sema_map *m = n->map;
	uint32_t size = ml->hdr.key_size ? ml->hdr.key_size : 8;
	/* behind a header for the slow path's call (slow_lookup) */
	*buf = cg_alloca(c, LLVMArrayType(c->i8, CG_KEY_HDR + size), "keybuf");
	key_life(c, *buf, true);
	LLVMValueRef key = cg_gep_const(c, *buf, CG_KEY_HDR);
	uint64_t off = 0;
	bool pad = false;
	for (int i = 0; i < m->nkeys; i++)
		pad |= m->keys[i].kind == TY_STR || ast_type_is_blob(m->keys[i].kind);
	if (pad)
		LLVMBuildMemSet(c->b, key, LLVMConstInt(c->i8, 0, 0), cg_const(c, size), 8);
	if (cg_map_flat_tuple(n)) {
		const struct ast_tuple *tu = n->kids[0]->type.tup;
		LLVMValueRef tb = cg_expr(c, n->kids[0]);
		for (int i = 0; i < tu->count && i < m->nkeys; i++) {
			const struct ast_type *et = &tu->types[i];
			LLVMValueRef ep = byte_off(c, tb, cg_const(c, (uint64_t)tu->offsets[i]));
			LLVMValueRef v = cg_is_buffer(et) ? ep : load_int_at(c, ep, et);
			store_key(c, byte_off(c, key, cg_const(c, off)), &m->keys[i], et, v);
			off += cg_key_bytes(&m->keys[i]);
		}
		return key;
	}
	for (int i = 0; i < n->nkids && i < m->nkeys; i++) {
		const struct ast_node *k = n->kids[i];
		LLVMValueRef v = cg_expr(c, k);
		store_key(c, byte_off(c, key, cg_const(c, off)), &m->keys[i], &k->type, v);
		off += cg_key_bytes(&m->keys[i]);
	}
	return key;
}

/* Keys of at most this many words are hashed and compared inline. */
#define CG_INLINE_KEY_WORDS 8

/*
 * The slow path of an inline lookup: rt_map_lookup through the runtime's
 * rt_map_lookup_r11 (rt_map.c), which takes the map, the insert mode and
 * the key in the CG_KEY_HDR bytes before the key (cg_map_key) and
 * returns the index in %r11, keeping every other register.  A call in
 * the C convention would need %rdi, %rsi and %rdx, which the probe's
 * prologue would then save and restore on every hit.  (In ubt, for
 * BEGIN/END/interval, a plain call: rt_map_lookup_r11 runs the lookup on
 * the thread's probe stack, which ubt's threads do not have.)
 */
static LLVMValueRef slow_lookup(struct cg *c, const struct cg_map_layout *ml, LLVMValueRef key,
				enum rt_map_insert insert)
{
	if (c->side == CG_SIDE_HOST) {
		LLVMValueRef args[] = {cg_shm_ptr(c, ml->off), key,
				       LLVMConstInt(c->i32, (uint64_t)insert, 0)};
		return LLVMBuildCall2(c->b, c->ty_map_lookup, c->fn_map_lookup, args, 3, "idx");
	}
	LLVMValueRef hdr = LLVMBuildGEP2(c->b, c->i8, key,
					 (LLVMValueRef[]){cg_const(c, -(uint64_t)CG_KEY_HDR)}, 1, "");
	LLVMBuildStore(c->b, cg_shm_ptr(c, ml->off), hdr);
	LLVMBuildStore(c->b, cg_const(c, insert), cg_gep_const(c, hdr, 8));
	LLVMTypeRef params[] = {c->ptr};
	LLVMTypeRef fty = LLVMFunctionType(c->i64, params, 1, 0);
	static const char tmpl[] = "call rt_map_lookup_r11";
	c->uses_pstack = true; /* where rt_map_lookup runs (runtime/data/rt_map.c) */
	static const char cons[] = "={r11},{r11},~{memory},~{cc},~{dirflag},~{fpsr},~{flags}";
	LLVMValueRef ia = LLVMGetInlineAsm(fty, (char *)tmpl, sizeof(tmpl) - 1, (char *)cons,
					   sizeof(cons) - 1, 1, 0, LLVMInlineAsmDialectATT, 0);
	return LLVMBuildCall2(c->b, fty, ia, &hdr, 1, "idx");
}

static LLVMValueRef load_acquire(struct cg *c, LLVMTypeRef t, LLVMValueRef p, unsigned align)
{
	LLVMValueRef v = LLVMBuildLoad2(c->b, t, p, "");
	LLVMSetOrdering(v, LLVMAtomicOrderingAcquire);
	LLVMSetAlignment(v, align);
	return v;
}

/*
 * The entry index of the key in the buffer `key` (i64, -1 when absent or
 * dropped).  The common case, the key sitting in the first slot its hash
 * names and live, is inline: abi.h's rt_map_hash and rt_map_slot0 (for an
 * integer key a multiply and a shift), one slot load, the key compare,
 * the live flag.  The slot's tag is not checked: the key compare decides
 * and costs one load more than the tag's test for an integer key.
 * Everything else (a collision, an insert, a dead entry) calls
 * rt_map_lookup, which starts over.  For `@m[tid] = count()` this saves
 * the call, the spill of the key and the loop set-up: 5.7 -> 3.x ns.
 * The index in the slot is shared memory's: it is used only below the
 * map's room (one unsigned compare, which also tells an empty slot, whose
 * index - 1 wraps), so END and interval probes, which run in ubt, never
 * address ubt's memory with a value the target wrote (rt.h, rt_lay).
 */
static LLVMValueRef cg_map_lookup_inline(struct cg *c, const struct cg_map_layout *ml,
					 LLVMValueRef key, enum rt_map_insert insert,
					 bool dead_ok)
{
	const struct rt_map *h = &ml->hdr;
	uint32_t words = h->key_size / 8;
	LLVMValueRef mapp = cg_shm_ptr(c, ml->off);
	LLVMValueRef slow_args[] = {mapp, key, LLVMConstInt(c->i32, insert, 0)};
	if (words == 0 || words > CG_INLINE_KEY_WORDS) {
		return LLVMBuildCall2(c->b, c->ty_map_lookup, c->fn_map_lookup, slow_args, 3,
				      "idx");
	}
	LLVMValueRef kw[CG_INLINE_KEY_WORDS];
	LLVMValueRef hv = cg_const(c, 0);
	for (uint32_t w = 0; w < words; w++) {
		kw[w] = LLVMBuildLoad2(c->b, c->i64, byte_off(c, key, cg_const(c, 8 * w)), "");
		if (w)
			hv = LLVMBuildXor(c->b, hv, LLVMBuildLShr(c->b, hv, cg_const(c, 29), ""), "");
		hv = LLVMBuildMul(c->b, LLVMBuildXor(c->b, hv, kw[w], ""),
				  cg_const(c, RT_MAP_HASH_MUL), "");
	}
	LLVMValueRef i = LLVMBuildLShr(c->b, hv, cg_const(c, 64 - (uint64_t)__builtin_ctz(h->nslots)),
				       "");
	LLVMValueRef slotp = LLVMBuildGEP2(c->b, c->i64, cg_shm_ptr(c, ml->off + h->slots_off),
					   &i, 1, "");
	LLVMValueRef s = load_acquire(c, c->i64, slotp, 8);
	LLVMValueRef lo = LLVMBuildAnd(c->b, s, cg_const(c, 0xffffffffu), "");
	LLVMValueRef idx = LLVMBuildSub(c->b, lo, cg_const(c, 1), "");
	uint64_t places = h->rows ? (uint64_t)h->rows * RT_MAP_SPREAD : h->cap;
	LLVMValueRef ok = LLVMBuildICmp(c->b, LLVMIntULT, idx, cg_const(c, places), "");
	LLVMBasicBlockRef cmp = cg_new_bb(c, "mk_cmp"), live = cg_new_bb(c, "mk_live");
	LLVMBasicBlockRef slow = cg_new_bb(c, "mk_slow"), done = cg_new_bb(c, "mk_done");
	LLVMBuildCondBr(c->b, ok, cmp, slow);

	LLVMPositionBuilderAtEnd(c->b, cmp);
	LLVMValueRef kp = LLVMBuildGEP2(
		c->b, c->i8, cg_shm_ptr(c, ml->off + h->keys_off),
		(LLVMValueRef[]){LLVMBuildMul(c->b, idx, cg_const(c, h->key_size), "")}, 1, "");
	LLVMValueRef eq = LLVMConstInt(c->i1, 1, 0);
	for (uint32_t w = 0; w < words; w++) {
		LLVMValueRef v = LLVMBuildLoad2(c->b, c->i64, byte_off(c, kp, cg_const(c, 8 * w)), "");
		eq = LLVMBuildAnd(c->b, eq, LLVMBuildICmp(c->b, LLVMIntEQ, v, kw[w], ""), "");
	}
	LLVMBuildCondBr(c->b, eq, live, slow);

	LLVMPositionBuilderAtEnd(c->b, live);
	if (dead_ok) {
		/* dead or live: the caller overwrites the value and sets live,
		 * or deletes */
		LLVMBuildBr(c->b, done);
	} else {
		LLVMValueRef lp = LLVMBuildGEP2(c->b, c->i32,
						cg_shm_ptr(c, ml->off + h->live_off), &idx, 1, "");
		LLVMValueRef lv = load_acquire(c, c->i32, lp, 4);
		LLVMBuildCondBr(c->b,
				LLVMBuildICmp(c->b, LLVMIntNE, lv, LLVMConstInt(c->i32, 0, 0), ""),
				done, slow);
	}
	LLVMBasicBlockRef live_end = LLVMGetInsertBlock(c->b);

	LLVMPositionBuilderAtEnd(c->b, slow);
	LLVMValueRef sidx = slow_lookup(c, ml, key, insert);
	LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(c->b);
	LLVMBuildBr(c->b, done);

	LLVMPositionBuilderAtEnd(c->b, done);
	return cg_phi2(c, c->i64, idx, live_end, sidx, slow_end, "idx");
}

/*
 * Remembering entry indexes.  A key's entry never moves (keys stay in the
 * hash; delete and clear only clear live flags), so an index found for
 * `@s[tid]` is still the entry of `@s[tid]` later in the same probe, and
 * delete(@s[tid]) after a read of it (the latency idiom's return) is one
 * store instead of a second hash lookup.  Only keys that are one builtin
 * whose value is fixed for the probe's run count, and only where the
 * earlier lookup's block dominates the delete.
 */
static const char *memo_key(const struct ast_node *n)
{
	if (n->nkids != 1 || n->kids[0]->kind != AST_BUILTIN)
		return NULL;
	const char *b = n->kids[0]->str;
	return !strcmp(b, "tid") || !strcmp(b, "pid") ? b : NULL;
}

static void memo_put(struct cg *c, const struct ast_node *n, LLVMValueRef idx)
{
	const char *k = memo_key(n);
	if (!k || c->nidx_memo == (int)(sizeof(c->idx_memo) / sizeof(c->idx_memo[0])))
		return;
	c->idx_memo[c->nidx_memo++] = (struct cg_idx_memo){
		.ml = cg_map_of(c, n), .key = k, .idx = idx, .bb = LLVMGetInsertBlock(c->b)};
}

/*
 * Whether every path from the function's entry to `to` passes through
 * `d`, in the blocks built so far.  Edges added later only lead to blocks
 * created before them as joins, loop heads and exits, so a dominance seen
 * here at a use still holds when the function is complete.
 */
static bool dominates(LLVMBasicBlockRef d, LLVMBasicBlockRef to)
{
	LLVMValueRef fn = LLVMGetBasicBlockParent(to);
	unsigned nb = LLVMCountBasicBlocks(fn);
	LLVMBasicBlockRef *bbs = xcalloc(nb, sizeof(*bbs));
	LLVMGetBasicBlocks(fn, bbs);
	bool *seen = xcalloc(nb, sizeof(*seen));
	unsigned *stack = xcalloc(nb, sizeof(*stack)), top = 0;
	bool dom = true;
	for (unsigned i = 0; i < nb; i++)
		if (bbs[i] == to) {
			seen[i] = true;
			stack[top++] = i;
		}
	while (dom && top) {
		unsigned b = stack[--top];
		if (bbs[b] == d)
			continue;
		if (b == 0) {
			dom = false; /* reached the entry around d */
			break;
		}
		for (unsigned p = 0; p < nb; p++) {
			LLVMValueRef t = LLVMGetBasicBlockTerminator(bbs[p]);
			unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
			for (unsigned k = 0; k < ns && !seen[p]; k++)
				if (LLVMGetSuccessor(t, k) == bbs[b]) {
					seen[p] = true;
					stack[top++] = p;
				}
		}
	}
	free(bbs);
	free(seen);
	free(stack);
	return dom;
}

/* An index remembered for map node n's key where the builder is, or NULL. */
static LLVMValueRef memo_get(struct cg *c, const struct ast_node *n)
{
	const char *k = memo_key(n);
	const struct cg_map_layout *ml = k ? cg_map_of(c, n) : NULL;
	for (int i = c->nidx_memo - 1; k && i >= 0; i--) {
		const struct cg_idx_memo *m = &c->idx_memo[i];
		if (m->ml == ml && !strcmp(m->key, k) && dominates(m->bb, LLVMGetInsertBlock(c->b)))
			return m->idx;
	}
	return NULL;
}

/*
 * Emits the lookup of map node n's entry.  Returns the entry index (i64),
 * with the builder positioned in a block that runs only when the entry
 * exists (or was inserted); *miss receives the block where control goes
 * otherwise, for the caller to complete.  Scalar maps always hit.
 */
static LLVMValueRef map_index(struct cg *c, const struct ast_node *n, enum rt_map_insert insert,
			      LLVMBasicBlockRef *miss, const struct ast_node *site)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
	*miss = NULL;
	if (n->nkids == 0) {
		if (site)
			cg_check_map_lookup(c, n, NULL, site);
		return cg_const(c, 0);
	}
	LLVMValueRef buf, key = cg_map_key(c, n, &buf);
	if (site) /* -kk (cg_check.c), on the key built once */
		cg_check_map_lookup(c, n, key, site);
	LLVMValueRef idx = cg_map_lookup_inline(c, ml, key, insert, insert == RT_INS_OVERWRITE);
	key_life(c, buf, false);
	memo_put(c, n, idx);
	LLVMBasicBlockRef hit = cg_new_bb(c, "map_hit");
	*miss = cg_new_bb(c, "map_miss");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, idx, cg_const(c, 0), ""), hit,
			*miss);
	LLVMPositionBuilderAtEnd(c->b, hit);
	return idx;
}

LLVMValueRef cg_map_index(struct cg *c, const struct ast_node *n, bool insert,
			  LLVMBasicBlockRef *miss)
{
	return map_index(c, n, insert ? RT_INS_REVIVE : RT_INS_NONE, miss, NULL);
}

/* The same, where bpftrace looks the entry up first: -kk warns at site
 * when it is absent (cg_check_map_lookup). */
LLVMValueRef cg_map_index_checked(struct cg *c, const struct ast_node *n, bool insert,
				  LLVMBasicBlockRef *miss, const struct ast_node *site)
{
	return map_index(c, n, insert ? RT_INS_REVIVE : RT_INS_NONE, miss,
			 c->layout->helper_checks >= 2 ? site : NULL);
}

/* The entry index of the key in `key` without inserting it (-1: absent). */
LLVMValueRef cg_map_find(struct cg *c, const struct ast_node *n, LLVMValueRef key)
{
	return cg_map_lookup_inline(c, cg_map_of(c, n), key, RT_INS_NONE, false);
}

/* The address of entry idx's live flag. */
static LLVMValueRef live_ptr(struct cg *c, const struct cg_map_layout *ml, LLVMValueRef idx)
{
	return LLVMBuildGEP2(c->b, c->i32, cg_shm_ptr(c, ml->off + ml->hdr.live_off), &idx, 1, "");
}

/* After an overwriting insert wrote the value: live, if it was not (release). */
static void set_live(struct cg *c, const struct cg_map_layout *ml, LLVMValueRef idx)
{
	LLVMValueRef lp = live_ptr(c, ml, idx);
	LLVMValueRef lv = LLVMBuildLoad2(c->b, c->i32, lp, "");
	LLVMSetAlignment(lv, 4);
	LLVMSetOrdering(lv, LLVMAtomicOrderingMonotonic);
	LLVMBasicBlockRef set = cg_new_bb(c, "revive"), cont = cg_new_bb(c, "alive");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, lv, LLVMConstInt(c->i32, 0, 0), ""),
			set, cont);
	LLVMPositionBuilderAtEnd(c->b, set);
	LLVMValueRef st = LLVMBuildStore(c->b, LLVMConstInt(c->i32, 1, 0), lp);
	LLVMSetAlignment(st, 4);
	LLVMSetOrdering(st, LLVMAtomicOrderingRelease);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

/* Address of the value of entry idx (CPU 0's copy for per-CPU maps). */
LLVMValueRef cg_map_value_ptr(struct cg *c, const struct ast_node *n, LLVMValueRef idx)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
	LLVMValueRef base = cg_shm_ptr(c, ml->off + ml->hdr.vals_off);
	LLVMValueRef off = LLVMBuildMul(c->b, idx, cg_const(c, ml->hdr.val_size), "");
	return LLVMBuildGEP2(c->b, c->i8, base, &off, 1, "val");
}

/* Finishes a map access: the miss block joins the hit path at `cont`. */
void cg_map_done(struct cg *c, LLVMBasicBlockRef miss)
{
	if (!miss)
		return;
	LLVMBasicBlockRef cont = cg_new_bb(c, "map_cont");
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, miss);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

void cg_mark_written(struct cg *c, const struct ast_node *n)
{
	/* keyed maps have entries; an unwritten count() prints 0 anyway */
	if (n->nkids || cg_map_of(c, n)->hdr.kind == RT_MAP_COUNT)
		return;
	const struct cg_map_layout *ml = cg_map_of(c, n);
	LLVMValueRef p = cg_shm_ptr(c, ml->off + offsetof(struct rt_map, written));
	/* read first: after the first write the line stays shared, never bounced */
	LLVMValueRef cur = LLVMBuildLoad2(c->b, c->i64, p, "");
	LLVMBasicBlockRef set = cg_new_bb(c, "mark"), cont = cg_new_bb(c, "marked");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, cur, cg_const(c, 0), ""), set, cont);
	LLVMPositionBuilderAtEnd(c->b, set);
	LLVMBuildStore(c->b, cg_const(c, 1), p);
	LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
}

void cg_copy_str(struct cg *c, LLVMValueRef dst, LLVMValueRef src, uint64_t n)
{
	LLVMBuildMemCpy(c->b, dst, 1, src, 1, cg_const(c, n));
}

/* @m[k] = rhs, for every map kind (aggregations included); site: the
 * assignment, where -k reports an update a full map dropped. */
void cg_map_assign(struct cg *c, const struct ast_node *map, const struct ast_node *rhs,
		   const struct ast_node *site)
{
	const struct cg_map_layout *ml = cg_map_of(c, map);
	LLVMValueRef val = NULL;
	if (rhs->kind == AST_CALL && ml->hdr.kind != RT_MAP_INT && ml->hdr.kind != RT_MAP_STR) {
		if (rhs->nkids)
			val = cg_expr(c, rhs->kids[0]);
	} else {
		val = cg_expr(c, rhs);
	}
	/* -kk: bpftrace looks an aggregation's entry up first (a hist's per
	 * bucket: below) */
	bool agg = rhs->kind == AST_CALL && ml->hdr.kind != RT_MAP_INT && ml->hdr.kind != RT_MAP_STR;
	bool hist = ml->hdr.kind == RT_MAP_HIST || ml->hdr.kind == RT_MAP_LHIST;
	/* an integer or string map's value is written whole: a deleted key
	 * comes back without the insert lock (rt_map.c) */
	bool whole = !cg_map_percpu(&ml->hdr) && map->nkids;
	LLVMBasicBlockRef miss;
	LLVMValueRef idx = map_index(c, map, whole ? RT_INS_OVERWRITE : RT_INS_REVIVE, &miss,
				     agg && !hist && c->layout->helper_checks >= 2 ? rhs : NULL);
	LLVMValueRef p = cg_map_value_ptr(c, map, idx);
	uint64_t stride = ml->hdr.cpu_stride;
	switch (ml->hdr.kind) {
	case RT_MAP_COUNT:
		cg_percpu_add(c, p, stride, cg_const(c, 1));
		break;
	case RT_MAP_SUM:
		cg_percpu_add(c, p, stride, val);
		break;
	case RT_MAP_AVG:
	case RT_MAP_STATS:
		/* two sections: a reader may see the count before the sum, never a lost one */
		cg_percpu_add(c, p, stride, cg_const(c, 1));
		cg_percpu_add(c, byte_off(c, p, cg_const(c, 8)), stride, val);
		break;
	case RT_MAP_MIN:
		cg_percpu_op(c, p, stride, LLVMBuildXor(c->b, val, cg_const(c, INT64_MAX), ""),
			     PC_UMAX);
		break;
	case RT_MAP_MAX:
		cg_percpu_op(c, p, stride,
			     LLVMBuildXor(c->b, val, cg_const(c, 1ull << 63), ""), PC_UMAX);
		break;
	case RT_MAP_HIST:
	case RT_MAP_LHIST: {
		LLVMValueRef b = ml->hdr.kind == RT_MAP_HIST
				     ? hist_bucket(c, val, map->map->hist_bits)
				     : lhist_bucket(c, map->map, ml->hdr.nbuckets, val);
		LLVMValueRef off = LLVMBuildShl(c->b, b, cg_const(c, 3), "");
		if (c->layout->helper_checks >= 2) {
			/* bpftrace keys each bucket: a bucket hit for the first time is
			 * a lookup that failed (-kk) */
			LLVMValueRef tot = cg_const(c, 0);
			for (uint32_t cpu = 0; cpu <= c->layout->ncpu; cpu++)
				tot = LLVMBuildAdd(c->b, tot,
						   LLVMBuildLoad2(c->b, c->i64,
								  byte_off(c, byte_off(c, p, off),
									   cg_const(c, cpu * stride)),
								  ""),
						   "");
			cg_check_empty(c, tot, rhs);
		}
		cg_percpu_add(c, byte_off(c, p, off), stride, cg_const(c, 1));
		break;
	}
	case RT_MAP_STR:
		LLVMBuildMemSet(c->b, p, LLVMConstInt(c->i8, 0, 0), cg_const(c, ml->hdr.val_size),
				1);
		cg_store_as(c, p, &map->map->value, val, &rhs->type);
		break;
	default:
		LLVMBuildStore(c->b, val, p);
		break;
	}
	if (whole)
		set_live(c, ml, idx);
	cg_mark_written(c, map);
	/* -k: bpftrace names the aggregation call, or the `=` (cg_check.c) */
	cg_check_map_update(c, miss, agg ? rhs : site);
	cg_map_done(c, miss);
}

/*
 * delete(@m[k]): the key's live flag cleared (rt_map.c: keys stay in the
 * hash).  The entry is found inline as a lookup finds it, so the common
 * delete is a hash, a compare and one store; a key not in its first slot
 * takes rt_map_lookup.  delete(@m) of a scalar map calls rt_map_delete.
 */
LLVMValueRef cg_map_delete(struct cg *c, const struct ast_node *map, const struct ast_node *site,
			   bool value)
{
	const struct cg_map_layout *ml = cg_map_of(c, map);
	if (!map->nkids) {
		LLVMValueRef args[] = {cg_shm_ptr(c, ml->off), LLVMConstNull(c->ptr)};
		LLVMValueRef r =
		    LLVMBuildCall2(c->b, c->ty_map_delete, c->fn_map_delete, args, 2, "deleted");
		if (c->layout->helper_checks >= 1) { /* -k: nothing to delete warns */
			LLVMBasicBlockRef warn = cg_new_bb(c, "del_absent"),
					  done = cg_new_bb(c, "del_done");
			LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, r, cg_const(c, 0), ""),
					warn, done);
			LLVMPositionBuilderAtEnd(c->b, warn);
			cg_check_map_delete(c, site);
			LLVMBuildBr(c->b, done);
			LLVMPositionBuilderAtEnd(c->b, done);
		}
		return value ? r : NULL;
	}
	/* the value: 1 if this delete took a live entry (the exchange below) */
	LLVMValueRef res = NULL;
	if (value) {
		res = cg_alloca(c, c->i64, "deleted");
		LLVMBuildStore(c->b, cg_const(c, 0), res);
	}
	LLVMBasicBlockRef del = cg_new_bb(c, "del"), cont = cg_new_bb(c, "del_done");
	/* -k: a key not in the map (absent, or dead: deleted before) warns */
	LLVMBasicBlockRef absent = cont;
	if (c->layout->helper_checks >= 1) {
		absent = cg_new_bb(c, "del_absent");
		LLVMBasicBlockRef cur = LLVMGetInsertBlock(c->b);
		LLVMPositionBuilderAtEnd(c->b, absent);
		cg_check_map_delete(c, site);
		LLVMBuildBr(c->b, cont);
		LLVMPositionBuilderAtEnd(c->b, cur);
	}
	LLVMValueRef vals[2];
	LLVMBasicBlockRef from[2];
	unsigned n = 0;
	LLVMValueRef known = memo_get(c, map);
	if (known) {
		/* found before in this probe: that entry; not found then (rare:
		 * a delete without a value), rt_map_lookup (a dead entry is
		 * absent to it, and deleting it changes nothing) */
		LLVMBasicBlockRef look = cg_new_bb(c, "del_look");
		vals[n] = known;
		from[n++] = LLVMGetInsertBlock(c->b);
		LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, known, cg_const(c, 0), ""),
				del, look);
		LLVMPositionBuilderAtEnd(c->b, look);
	}
	LLVMValueRef buf, key = cg_map_key(c, map, &buf);
	LLVMValueRef idx = known ? slow_lookup(c, ml, key, RT_INS_NONE)
				 : cg_map_lookup_inline(c, ml, key, RT_INS_NONE, true);
	key_life(c, buf, false);
	vals[n] = idx;
	from[n++] = LLVMGetInsertBlock(c->b);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, idx, cg_const(c, 0), ""), del, absent);
	LLVMPositionBuilderAtEnd(c->b, del);
	LLVMValueRef at = LLVMBuildPhi(c->b, c->i64, "del_idx");
	LLVMAddIncoming(at, vals, from, n);
	LLVMValueRef zero = LLVMConstInt(c->i32, 0, 0), gone = NULL;
	if (value) {
		/* an exchange, so that of two deletes of one key one is true */
		LLVMValueRef was =
		    LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpXchg, live_ptr(c, ml, at), zero,
				       LLVMAtomicOrderingRelease, 0);
		gone = LLVMBuildICmp(c->b, LLVMIntNE, was, zero, "");
		LLVMBuildStore(c->b, LLVMBuildZExt(c->b, gone, c->i64, ""), res);
	} else {
		/* a statement (the latency idiom's): a check and a plain store */
		if (absent != cont)
			gone = LLVMBuildICmp(c->b, LLVMIntNE,
					     load_acquire(c, c->i32, live_ptr(c, ml, at), 4), zero,
					     "");
		LLVMValueRef st = LLVMBuildStore(c->b, zero, live_ptr(c, ml, at));
		LLVMSetAlignment(st, 4);
		LLVMSetOrdering(st, LLVMAtomicOrderingRelease);
	}
	if (absent != cont)
		LLVMBuildCondBr(c->b, gone, cont, absent); /* a dead entry warns too */
	else
		LLVMBuildBr(c->b, cont);
	LLVMPositionBuilderAtEnd(c->b, cont);
	return value ? LLVMBuildLoad2(c->b, c->i64, res, "deleted") : NULL;
}

/* Per-CPU value at byte offset `off` of entry p, combined over CPUs. */
static LLVMValueRef percpu_sum(struct cg *c, LLVMValueRef p, uint64_t stride, uint64_t off)
{
	LLVMValueRef v = cg_const(c, 0);
	for (uint32_t cpu = 0; cpu <= c->layout->ncpu; cpu++) {
		LLVMValueRef q = byte_off(c, p, cg_const(c, cpu * stride + off));
		v = LLVMBuildAdd(c->b, v, LLVMBuildLoad2(c->b, c->i64, q, ""), "");
	}
	return v;
}

static LLVMValueRef percpu_umax(struct cg *c, LLVMValueRef p, uint64_t stride)
{
	LLVMValueRef v = cg_const(c, 0);
	for (uint32_t cpu = 0; cpu <= c->layout->ncpu; cpu++) {
		LLVMValueRef q = byte_off(c, p, cg_const(c, cpu * stride));
		LLVMValueRef x = LLVMBuildLoad2(c->b, c->i64, q, "");
		v = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, x, v, ""), x, v, "");
	}
	return v;
}

static LLVMValueRef map_value(struct cg *c, const struct cg_map_layout *ml, LLVMValueRef p);

/* Value of a map read in an expression; 0 (or "") for a missing key. */
LLVMValueRef cg_map_read(struct cg *c, const struct ast_node *n)
{
	const struct cg_map_layout *ml = cg_map_of(c, n);
	bool str = ml->hdr.kind == RT_MAP_STR;
	LLVMTypeRef rt = str ? c->ptr : c->i64;
	LLVMValueRef res = cg_alloca(c, rt, "mapval");
	LLVMValueRef zero = str ? cg_alloca(c, LLVMArrayType(c->i8, ml->hdr.val_size), "")
				: cg_const(c, 0);
	if (str)
		LLVMBuildMemSet(c->b, zero, LLVMConstInt(c->i8, 0, 0),
				cg_const(c, ml->hdr.val_size), 1);
	LLVMBuildStore(c->b, zero, res);
	LLVMBasicBlockRef miss;
	LLVMValueRef idx = cg_map_index_checked(c, n, false, &miss, n);
	LLVMValueRef p = cg_map_value_ptr(c, n, idx);
	LLVMBuildStore(c->b, map_value(c, ml, p), res);
	cg_map_done(c, miss);
	return LLVMBuildLoad2(c->b, rt, res, "");
}

/* The value at p (entry's CPU-0 copy) as an expression sees it: the buffer
 * for strings and tuples, else an i64 combined over the CPUs. */
static LLVMValueRef map_value(struct cg *c, const struct cg_map_layout *ml, LLVMValueRef p)
{
	bool str = ml->hdr.kind == RT_MAP_STR;
	LLVMValueRef v;
	if (str) {
		v = p;
	} else if (ml->hdr.kind == RT_MAP_COUNT || ml->hdr.kind == RT_MAP_SUM) {
		v = percpu_sum(c, p, ml->hdr.cpu_stride, 0);
	} else if (ml->hdr.kind == RT_MAP_AVG || ml->hdr.kind == RT_MAP_STATS) {
		LLVMValueRef n = percpu_sum(c, p, ml->hdr.cpu_stride, 0);
		LLVMValueRef t = percpu_sum(c, p, ml->hdr.cpu_stride, 8);
		LLVMValueRef z = LLVMBuildICmp(c->b, LLVMIntEQ, n, cg_const(c, 0), "");
		v = LLVMBuildSDiv(c->b, t, LLVMBuildSelect(c->b, z, cg_const(c, 1), n, ""), "");
	} else if (ml->hdr.kind == RT_MAP_MIN || ml->hdr.kind == RT_MAP_MAX) {
		/* encoded as in cg_map_assign; 0 (no value, after zero()) reads 0 */
		uint64_t x = ml->hdr.kind == RT_MAP_MIN ? INT64_MAX : 1ull << 63;
		LLVMValueRef raw = percpu_umax(c, p, ml->hdr.cpu_stride);
		v = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, raw, cg_const(c, 0), ""),
				    cg_const(c, 0), LLVMBuildXor(c->b, raw, cg_const(c, x), ""), "");
	} else if (cg_map_percpu(&ml->hdr)) {
		v = cg_const(c, 0); /* hist/lhist have no single value */
	} else {
		v = LLVMBuildLoad2(c->b, c->i64, p, "");
	}
	return v;
}


/* ---- for ($kv : @m) ----------------------------------------------------- */

/* Copies a t-typed value from src (integers: 8 bytes, as keys hold them) to dst. */
static void copy_elem(struct cg *c, LLVMValueRef dst, const struct ast_type *t, LLVMValueRef src)
{
	if (cg_is_buffer(t)) {
		cg_copy_str(c, dst, src, (uint64_t)t->size);
		return;
	}
	int bytes = t->size > 0 && t->size <= 8 ? t->size : 8;
	LLVMValueRef v = LLVMBuildLoad2(c->b, c->i64, src, "");
	LLVMValueRef tr = LLVMBuildTrunc(c->b, v, LLVMIntTypeInContext(c->ctx, (unsigned)bytes * 8), "");
	LLVMSetAlignment(LLVMBuildStore(c->b, tr, dst), 1);
}

/*
 * for ($kv : @m) body: every live entry of the map, in entry order, with
 * $kv = (key, value) (key a tuple of the keys when there are several).
 * Bounded by the map's capacity: entries are only ever appended (rt_map.c),
 * so `used` read once bounds the walk, and an entry inserted meanwhile is
 * seen or not, never half.  Works on both sides (BEGIN/END in ubt read the
 * same shared memory).
 */
void cg_map_for(struct cg *c, const struct ast_node *n, LLVMValueRef kv)
{
	const struct ast_node *map = n->rhs;
	const struct cg_map_layout *ml = cg_map_of(c, map);
	const struct rt_map *h = &ml->hdr;
	const struct sema_map *m = map->map;
	const struct ast_tuple *kvt = n->lhs->type.tup;
	if (!kvt || kvt->count != 2 || !m->nkeys) {
		cg_fail(c, n, "internal: for over a map without keys");
		return;
	}
	LLVMValueRef usedp = cg_shm_ptr(c, ml->off + offsetof(struct rt_map, used));
	LLVMValueRef used = LLVMBuildZExt(c->b, load_acquire(c, c->i32, usedp, 4), c->i64, "");
	used = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, used, cg_const(c, h->cap), ""),
			       cg_const(c, h->cap), used, "");
	LLVMValueRef iv = cg_alloca(c, c->i64, "for_idx");
	LLVMBuildStore(c->b, cg_const(c, 0), iv);
	LLVMBasicBlockRef cond = cg_new_bb(c, "formap_cond"), chk = cg_new_bb(c, "formap_live"),
			  fill = cg_new_bb(c, "formap_body"), step = cg_new_bb(c, "formap_step"),
			  done = cg_new_bb(c, "formap_done");
	LLVMBuildBr(c->b, cond);

	LLVMPositionBuilderAtEnd(c->b, cond);
	LLVMValueRef i = LLVMBuildLoad2(c->b, c->i64, iv, "");
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntULT, i, used, ""), chk, done);

	LLVMPositionBuilderAtEnd(c->b, chk);
	if (h->rows) { /* the i-th entry allocated (abi.h, rt_map_nth) */
		LLVMValueRef rows = cg_const(c, h->rows);
		i = LLVMBuildAdd(c->b,
				 LLVMBuildMul(c->b, LLVMBuildURem(c->b, i, rows, ""),
					      cg_const(c, RT_MAP_SPREAD), ""),
				 LLVMBuildUDiv(c->b, i, rows, ""), "entry");
	}
	LLVMValueRef lp = LLVMBuildGEP2(c->b, c->i32, cg_shm_ptr(c, ml->off + h->live_off), &i, 1, "");
	LLVMValueRef lv = load_acquire(c, c->i32, lp, 4);
	LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, lv, LLVMConstInt(c->i32, 0, 0), ""),
			fill, step);

	LLVMPositionBuilderAtEnd(c->b, fill);
	LLVMBuildMemSet(c->b, kv, LLVMConstInt(c->i8, 0, 0), cg_const(c, (uint64_t)n->lhs->type.size), 1);
	LLVMValueRef kp = byte_off(c, cg_shm_ptr(c, ml->off + h->keys_off),
				   LLVMBuildMul(c->b, i, cg_const(c, h->key_size), ""));
	LLVMValueRef kdst = byte_off(c, kv, cg_const(c, (uint64_t)kvt->offsets[0]));
	if (m->nkeys == 1) {
		copy_elem(c, kdst, &kvt->types[0], kp);
	} else {
		const struct ast_tuple *kt = kvt->types[0].tup;
		uint64_t koff = 0;
		for (int k = 0; kt && k < kt->count && k < m->nkeys; k++) {
			copy_elem(c, byte_off(c, kdst, cg_const(c, (uint64_t)kt->offsets[k])),
				  &kt->types[k], byte_off(c, kp, cg_const(c, koff)));
			koff += cg_key_bytes(&m->keys[k]);
		}
	}
	LLVMValueRef v = map_value(c, ml, cg_map_value_ptr(c, map, i));
	LLVMValueRef vdst = byte_off(c, kv, cg_const(c, (uint64_t)kvt->offsets[1]));
	const struct ast_type *vt = &kvt->types[1];
	if (cg_is_buffer(vt)) {
		cg_copy_str(c, vdst, v, (uint64_t)vt->size);
	} else {
		int bytes = vt->size > 0 && vt->size <= 8 ? vt->size : 8;
		LLVMValueRef tr = LLVMBuildTrunc(c->b, v, LLVMIntTypeInContext(c->ctx, (unsigned)bytes * 8), "");
		LLVMSetAlignment(LLVMBuildStore(c->b, tr, vdst), 1);
	}
	cg_loop_rest(c, n, iv, cond, step, done);
}
