/*
 * jtab.c - recovering a switch's jump table, so that its targets join the
 * whole-function branch check of a mid-function site (mid.c) instead of
 * forbidding the jump in every function that has a switch.
 *
 * Where it sits: mid.c decodes the function from its first byte (struct
 * x86_func: every instruction boundary and every direct branch target)
 * and hands each indirect `jmp` to x86_jump_table().  The answer is the
 * table's targets, or a reason why they cannot be proven; the caller then
 * keeps the breakpoint.  A wrong answer would let the patch cover a case's
 * first bytes and a thread would jump into the middle of the jmp, so each
 * step below is a proof, not a guess, and anything unexpected refuses.
 *
 * What compilers emit (gcc and clang, -O2, both the same shape):
 *
 *   PIC:      cmp  $5,%eax            guard: the index is at most 5
 *             ja   default
 *             [mov %eax,%eax / mov 0x1c(%r12),%eax]   the index copied
 *             lea  T(%rip),%rdx
 *             movslq (%rdx,%rax,4),%rax  T holds 32-bit offsets from T
 *             add  %rdx,%rax
 *             jmp  *%rax              (notrack jmp with -fcf-protection)
 *
 *   non-PIC:  cmp  $5,%eax; ja default
 *             jmp  *T(,%rax,8)        T holds absolute addresses
 *
 *   computed goto (CPython's dispatch): movzbl %sil,%eax;
 *             mov T(,%rax,8),%rax; jmp *%rax   the byte bounds the index
 *
 * The proof walks backwards from the jmp through straight-line code only:
 * each step back passes an instruction that is no direct branch target
 * and that falls through, so every path to the jmp went through the
 * instructions seen.  It finds the definitions of the jmp's registers
 * (the table's address from a `lea T(%rip)`, the entry load), then follows
 * the index through plain copies to an unsigned compare-and-branch on it
 * (`cmp $N; ja` gives N + 1 entries, `jae` N) or to a zero-extension from
 * a byte or a word.  Stores end the walk while the index is in memory, and
 * a call ends it always.  The caller checks once more, with the targets of
 * every table known, that nothing jumps between the guard and the jmp.
 *
 * The entries are read from the target (arch_mem): in a running process a
 * table of absolute addresses holds relocated values, but not yet in a
 * static PIE stopped at its entry point (`ubt -c`), so a table of absolute
 * entries none of which points into the function refuses.  Entries pointing
 * outside the function (a `.cold` part, another function) cannot land in
 * its patched bytes and are ignored; one pointing inside it but not at an
 * instruction boundary means the table was misread, and refuses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "x86.h"

#define WALK_MAX 48	 /* instructions walked back from the jmp */
#define ENTRIES_MAX 4096 /* a larger table is no switch ubt will prove */

struct dec {
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t addr;
};

/* Where the index value is held: a 64-bit register or a memory operand. */
struct loc {
	bool mem;
	ZydisRegister reg; /* !mem: the largest enclosing register */
	ZydisRegister base, index, seg;
	uint8_t scale;
	int64_t disp;
	uint16_t size; /* bits of the value */
};

static bool dec_at(const struct x86_func *fn, int i, struct dec *d)
{
	ZydisDecoder dec;
	uint32_t off = fn->off[i];

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return false;
	d->addr = fn->addr + off;
	return ZYAN_SUCCESS(
	    ZydisDecoderDecodeFull(&dec, fn->code + off, fn->len - off, &d->in, d->ops));
}

static ZydisRegister big(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return r;
	return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/* Does d write r (any part of it), explicitly or not? */
static bool writes_reg(const struct dec *d, ZydisRegister r)
{
	for (int i = 0; i < d->in.operand_count; i++) {
		const ZydisDecodedOperand *op = &d->ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) && big(op->reg.value) == r)
			return true;
	}
	return false;
}

static bool writes_mem(const struct dec *d)
{
	for (int i = 0; i < d->in.operand_count; i++)
		if (d->ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (d->ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return true;
	return false;
}

/*
 * The instruction before i on every path to i, or -1: i must be no branch
 * target, and the one before it must fall through into it.
 */
static int prev(const struct x86_func *fn, int i)
{
	struct x86_insn in;

	if (i <= 0 || fn->is_target[fn->off[i]])
		return -1;
	if (x86_insn_decode(fn->code + fn->off[i - 1], fn->len - fn->off[i - 1],
			    fn->addr + fn->off[i - 1], &in) < 0 ||
	    in.ends_flow)
		return -1;
	return i - 1;
}

/* The nearest instruction before `from` on the straight path that writes r, or -1. */
static int def_of(const struct x86_func *fn, int from, ZydisRegister r, struct dec *d)
{
	for (int i = prev(fn, from), n = 0; i >= 0 && n < WALK_MAX; i = prev(fn, i), n++) {
		if (!dec_at(fn, i, d) || d->in.mnemonic == ZYDIS_MNEMONIC_CALL)
			return -1;
		if (writes_reg(d, r))
			return i;
	}
	return -1;
}

/* `lea T(%rip),r` defining r before `from`: T, or 0. */
static uint64_t lea_rip(const struct x86_func *fn, int from, ZydisRegister r)
{
	struct dec d;
	ZyanU64 t;

	if (def_of(fn, from, r, &d) < 0 || d.in.mnemonic != ZYDIS_MNEMONIC_LEA ||
	    d.ops[1].mem.base != ZYDIS_REGISTER_RIP || d.ops[0].size != 64 ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&d.in, &d.ops[1], d.addr, &t)))
		return 0;
	return t;
}

/* A memory operand as a table access [base + index*scale + disp], base from a lea. */
static bool table_operand(const struct x86_func *fn, int at, const ZydisDecodedOperand *m,
			  uint8_t scale, struct x86_jtab *t, ZydisRegister *index)
{
	if (m->type != ZYDIS_OPERAND_TYPE_MEMORY || m->mem.scale != scale ||
	    m->mem.index == ZYDIS_REGISTER_NONE || m->mem.segment == ZYDIS_REGISTER_FS ||
	    m->mem.segment == ZYDIS_REGISTER_GS || big(m->mem.index) != m->mem.index)
		return false; /* an index narrower than 64 bits: an address-size prefix */
	*index = m->mem.index;
	if (m->mem.base == ZYDIS_REGISTER_NONE) {
		t->table = (uint64_t)m->mem.disp.value;
		return true;
	}
	if (m->mem.base == ZYDIS_REGISTER_RIP || big(m->mem.base) != m->mem.base)
		return false;
	t->table = lea_rip(fn, at, m->mem.base);
	if (!t->table)
		return false;
	t->table += (uint64_t)m->mem.disp.value;
	return true;
}

/*
 * Which table the jmp at k reads, and through which index register, with
 * the instruction that reads the index in *use.
 */
static bool dispatch(const struct x86_func *fn, int k, struct x86_jtab *t, ZydisRegister *index,
		     int *use)
{
	struct dec jmp, d, ld;
	ZydisRegister r;
	int j, l;

	if (!dec_at(fn, k, &jmp) || jmp.in.operand_count_visible != 1)
		return false;
	*use = k;
	if (jmp.ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY) { /* jmp *T(,%idx,8) */
		t->entry = 8;
		return jmp.ops[0].size == 64 && table_operand(fn, k, &jmp.ops[0], 8, t, index);
	}
	r = jmp.ops[0].reg.value;
	if (jmp.ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER || big(r) != r)
		return false;
	j = def_of(fn, k, r, &d);
	if (j < 0 || d.ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER || d.ops[0].reg.value != r)
		return false;
	if (d.in.mnemonic == ZYDIS_MNEMONIC_MOV && d.ops[1].size == 64) { /* mov T(,%idx,8),%r */
		t->entry = 8;
		*use = j;
		return table_operand(fn, j, &d.ops[1], 8, t, index);
	}
	/* add %base,%r after movslq (%base,%idx,4),%r, base from lea T(%rip) */
	if (d.in.mnemonic != ZYDIS_MNEMONIC_ADD || d.ops[1].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    big(d.ops[1].reg.value) != d.ops[1].reg.value || d.ops[1].reg.value == r)
		return false;
	l = def_of(fn, j, r, &ld);
	if (l < 0 || ld.in.mnemonic != ZYDIS_MNEMONIC_MOVSXD || ld.ops[1].size != 32 ||
	    ld.ops[0].reg.value != r || ld.ops[1].mem.base != d.ops[1].reg.value ||
	    ld.ops[1].mem.disp.value != 0)
		return false;
	t->entry = 4;
	*use = l;
	/* the base the add adds is the one the movslq read: no write between them */
	if (!table_operand(fn, l, &ld.ops[1], 4, t, index) ||
	    lea_rip(fn, j, d.ops[1].reg.value) != t->table)
		return false;
	return true;
}

static bool same_loc(const struct loc *a, const ZydisDecodedOperand *op)
{
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return !a->mem && big(op->reg.value) == a->reg &&
		       op->size >= (a->size < 32 ? a->size : 32);
	return op->type == ZYDIS_OPERAND_TYPE_MEMORY && a->mem && op->mem.base == a->base &&
	       op->mem.index == a->index && op->mem.scale == a->scale &&
	       op->mem.disp.value == a->disp && op->mem.segment == a->seg && op->size == a->size;
}

static void loc_from(struct loc *l, const ZydisDecodedOperand *op)
{
	memset(l, 0, sizeof(*l));
	l->size = op->size;
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		l->reg = big(op->reg.value);
		return;
	}
	l->mem = true;
	l->base = op->mem.base;
	l->index = op->mem.index;
	l->scale = op->mem.scale;
	l->disp = op->mem.disp.value;
	l->seg = op->mem.segment;
}

/* `cmp $imm, op` then jcc cc (ja 7, jae 3): the largest value op may have after it. */
static bool cmp_bound(const struct dec *c, uint8_t cc, uint64_t *max)
{
	uint64_t v = c->ops[1].imm.value.u;

	if ((cc != 7 && cc != 3) || c->in.mnemonic != ZYDIS_MNEMONIC_CMP ||
	    c->ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return false;
	if (c->ops[0].size < 64)
		v &= (1ull << c->ops[0].size) - 1;
	if (cc == 3 && v == 0)
		return false;
	*max = cc == 7 ? v : v - 1; /* ja: op <= v; jae: op < v */
	return true;
}

/*
 * The largest index value every path from a guard to `use` allows, and
 * the guard's instruction (a jcc or a zero-extension) in *guard.  The
 * index is followed back through copies (`mov %edi,%esi` puts in %esi the
 * value `cmp $7,%edi` bounded, so a guard on a register that a copy later
 * reads counts while that register is not written in between).
 */
static bool index_bound(const struct x86_func *fn, int use, ZydisRegister index, uint64_t *max,
			int *guard)
{
	struct loc l = {.reg = index, .size = 64};
	struct dec d, c;
	bool have = false;
	struct {
		ZydisRegister reg;
		uint16_t size;
		uint64_t max;
		int guard;
	} cand[4];
	int ncand = 0;

	for (int i = prev(fn, use), n = 0; i >= 0 && n < WALK_MAX; i = prev(fn, i), n++) {
		if (!dec_at(fn, i, &d) || d.in.mnemonic == ZYDIS_MNEMONIC_CALL)
			break;
		for (int k = 0; k < ncand; k++)
			if (writes_reg(&d, cand[k].reg))
				cand[k--] = cand[--ncand]; /* written before its guard: no use */
		if (d.in.meta.category == ZYDIS_CATEGORY_COND_BR) {
			int p = prev(fn, i);
			uint64_t v;
			if (p < 0 || !dec_at(fn, p, &c) || !cmp_bound(&c, d.in.opcode & 0x0f, &v))
				continue; /* another condition: the fall-through path goes on */
			if (same_loc(&l, &c.ops[0])) {
				*max = have && *max < v ? *max : v;
				*guard = i;
				return true;
			}
			if (c.ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER && c.ops[0].size >= 32 &&
			    ncand < 4)
				cand[ncand++] =
				    (typeof(cand[0])){big(c.ops[0].reg.value), c.ops[0].size, v, i};
			continue;
		}
		if (l.mem) {
			if (writes_mem(&d) || (l.base && writes_reg(&d, big(l.base))) ||
			    (l.index && writes_reg(&d, big(l.index))))
				break;
			continue;
		}
		if (!writes_reg(&d, l.reg))
			continue;
		if (d.in.mnemonic == ZYDIS_MNEMONIC_MOVZX && d.ops[1].size <= 16) {
			uint64_t v = (1ull << d.ops[1].size) - 1;
			*max = have && *max < v ? *max : v;
			*guard = i;
			have = true;
			loc_from(&l, &d.ops[1]);
			continue;
		}
		if (d.in.mnemonic != ZYDIS_MNEMONIC_MOV || d.ops[0].size < 32 ||
		    d.ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			break;
		loc_from(&l, &d.ops[1]);
		for (int k = 0; !l.mem && k < ncand; k++) {
			if (cand[k].reg != l.reg || cand[k].size < l.size)
				continue;
			*max = have && *max < cand[k].max ? *max : cand[k].max;
			*guard = cand[k].guard;
			return true;
		}
	}
	return have;
}

int x86_jump_table(const struct x86_func *fn, int k, const struct arch_mem *mem, struct x86_jtab *t,
		   char *why, size_t whylen)
{
	ZydisRegister index;
	uint64_t max = 0;
	uint8_t *buf;
	int use, guard = -1;

	memset(t, 0, sizeof(*t));
	t->jmp = k;
	if (!mem || !mem->read) {
		snprintf(why, whylen, "no memory to read its jump table from");
		return -ENOENT;
	}
	if (!dispatch(fn, k, t, &index, &use)) {
		snprintf(why, whylen, "not a jump table of a known form");
		return -ENOENT;
	}
	if (!index_bound(fn, use, index, &max, &guard)) {
		snprintf(why, whylen, "the size of its jump table at 0x%llx is not proven",
			 (unsigned long long)t->table);
		return -ENOENT;
	}
	if (max >= ENTRIES_MAX) {
		snprintf(why, whylen, "its jump table at 0x%llx has %llu entries",
			 (unsigned long long)t->table, (unsigned long long)max + 1);
		return -ENOENT;
	}
	t->guard = guard;
	t->n = (int)max + 1;
	buf = calloc((size_t)t->n, (size_t)t->entry);
	t->targets = calloc((size_t)t->n, sizeof(*t->targets));
	if (!buf || !t->targets || mem->read(mem->ctx, t->table, buf, (size_t)t->n * t->entry)) {
		free(buf);
		free(t->targets);
		t->targets = NULL;
		snprintf(why, whylen, "its jump table at 0x%llx cannot be read",
			 (unsigned long long)t->table);
		return -EIO;
	}
	for (int i = 0; i < t->n; i++) {
		int32_t rel;
		uint64_t abs;
		if (t->entry == 4) {
			memcpy(&rel, buf + 4 * i, 4);
			t->targets[i] = t->table + (uint64_t)(int64_t)rel;
		} else {
			memcpy(&abs, buf + 8 * i, 8);
			t->targets[i] = abs;
		}
		uint64_t a = t->targets[i];
		if (a >= fn->addr && a < fn->addr + fn->len && !fn->is_insn[a - fn->addr]) {
			snprintf(
			    why, whylen,
			    "entry %d of its jump table at 0x%llx points inside an instruction", i,
			    (unsigned long long)t->table);
			free(buf);
			free(t->targets);
			t->targets = NULL;
			return -EINVAL;
		}
	}
	free(buf);
	/*
	 * Absolute entries are relocated by the loader (R_X86_64_RELATIVE in
	 * a PIE, a library or a static PIE): read before that (a static PIE
	 * stopped at its entry point, a library at the loader's RT_CONSISTENT
	 * before it relocates it) they are 0 or link-time addresses, which
	 * all lie outside the loaded function and would pass as a `.cold`
	 * part's.  A table of this function's switch has at least one entry
	 * in it; one with none is not proven to be read relocated.
	 */
	if (t->entry == 8) {
		int in = 0;
		for (int i = 0; i < t->n; i++)
			in += t->targets[i] >= fn->addr && t->targets[i] < fn->addr + fn->len;
		if (!in) {
			snprintf(why, whylen, "table 0x%llx unrelocated: no entry in the function",
				 (unsigned long long)t->table);
			free(t->targets);
			t->targets = NULL;
			return -ENOENT;
		}
	}
	return 0;
}
