/*
 * sema_loop.c - the work one probe hit may do (DESIGN.md decision 11).
 *
 * bpftrace's programs are loaded only if the kernel's verifier can walk
 * every path through them within 1,000,000 instructions; a loop it cannot
 * bound is refused.  ubt runs probe code in the traced program, where a loop
 * that does not end would keep one of its threads forever, so one hit is
 * bounded as a whole:
 *
 *   - every loop iteration costs an estimated number of instructions
 *     (sema_loop_charge(): about one per operator, more for calls, map
 *     operations and bytes copied), which probe code subtracts from one
 *     budget per hit at each turn of any loop, nested or not
 *     (codegen/cg_loop.c); a hit whose budget runs out, or whose loops have
 *     run for SEMA_HIT_NS, ends there, counted, and ubt reports it at exit;
 *   - where that is decidable here, a loop that can never fit is refused at
 *     compile time, as the verifier refuses it for bpftrace: a loop with no
 *     way out (`while (1) { ... }` without break, return or exit), and a
 *     loop whose iterations are known to charge more than the budget every
 *     time it runs:
 *
 *       $i = 0; while ($i < 2000000) { $i++; }      2,000,000 x 5 > 1,000,000
 *       for ($i : 0..100000) { for ($j : 0..100) { @n++; } }
 *
 * A loop runs a known number of times when nothing leaves it early (break,
 * return, exit()) and it is unroll(N), `for ($i : A..B)` with constant
 * bounds, or `while ($v < K)` (also <=, !=, >, >=, K on either side) where
 * the block sets `$v = K0` before the loop and the body's only change of $v
 * is one unconditional `$v++`, `$v--`, `$v += S` or `$v -= S`.  A while
 * whose condition is constant and true, or reads a variable the body never
 * changes and holds at entry, never ends.  Everything else is bounded at
 * run time only.
 */
#include "sema_internal.h"
#include "util/util.h"

#include <string.h>

#define INF UINT64_MAX

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > INF - b ? INF : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return a && b > INF / a ? INF : a * b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static bool is_loop(const struct ast_node *n)
{
	return n && (n->kind == AST_WHILE || n->kind == AST_FOR_RANGE || n->kind == AST_FOR_MAP ||
		     n->kind == AST_UNROLL);
}

/* bytes a value of type t moves, in 8-byte words */
static uint64_t words(const struct ast_type *t)
{
	return t->size > 8 ? (uint64_t)(t->size + 7) / 8 : 0;
}

/*
 * Instructions that running n costs, on its most expensive path, without
 * the iterations of loops inside it (they charge their own; a loop inside
 * costs only its setup here).
 */
static uint64_t cost(const struct ast_node *n)
{
	if (!n)
		return 0;
	switch (n->kind) {
	case AST_WHILE:
		return 2;
	case AST_FOR_RANGE:
		return sat_add(cost(n->kids[0]), cost(n->kids[1])) + 3;
	case AST_FOR_MAP:
	case AST_UNROLL:
		return 3;
	case AST_IF:
		return sat_add(cost(n->cond) + 1, max_u64(cost(n->body), cost(n->els)));
	case AST_TERNARY:
		return sat_add(cost(n->cond) + 1, max_u64(cost(n->lhs), cost(n->rhs)));
	default:
		break;
	}
	uint64_t c = 1 + words(&n->type);
	if (n->kind == AST_MAP)
		c += 12; /* hash, slot, key compare */
	else if (n->kind == AST_CALL)
		c += 20; /* a call of the runtime, a record in the ring */
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		c = sat_add(c, cost(sub[i]));
	for (int i = 0; i < n->nkids; i++)
		c = sat_add(c, cost(n->kids[i]) + words(&n->kids[i]->type));
	return c;
}

uint64_t sema_loop_charge(const struct ast_node *loop)
{
	uint64_t c = sat_add(cost(loop->body), 2); /* the test and the jump back */
	if (loop->kind == AST_WHILE)
		c = sat_add(c, cost(loop->cond));
	else if (loop->kind == AST_FOR_MAP)
		c = sat_add(c, 8); /* the entry's key and value into $kv */
	return c < SEMA_HIT_BUDGET ? c : SEMA_HIT_BUDGET;
}

/* ---- what a loop body does ---------------------------------------------- */

/* Leaves loop L early: break of L (not of a loop inside), return, exit(). */
static bool leaves(const struct ast_node *n, bool own)
{
	if (!n)
		return false;
	if (n->kind == AST_BREAK)
		return own;
	if (n->kind == AST_RETURN || (n->kind == AST_CALL && !strcmp(n->str, "exit")))
		return true;
	/* a break inside a nested while or for is that loop's; unroll is no loop */
	bool inner = own && n->kind != AST_WHILE && n->kind != AST_FOR_RANGE &&
		     n->kind != AST_FOR_MAP;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (leaves(sub[i], inner))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (leaves(n->kids[i], inner))
			return true;
	return false;
}

/* Does n change variable v (an assignment, ++/--, a for loop's variable)? */
static bool writes(const struct ast_node *n, const struct sema_var *v)
{
	if (!n)
		return false;
	if ((n->kind == AST_ASSIGN || n->kind == AST_INCDEC || n->kind == AST_FOR_RANGE ||
	     n->kind == AST_FOR_MAP || n->kind == AST_LET) &&
	    n->lhs && n->lhs->kind == AST_VAR && n->lhs->var == v)
		return true;
	const struct ast_node *sub[] = {n->lhs, n->rhs, n->cond, n->body, n->els};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		if (writes(sub[i], v))
			return true;
	for (int i = 0; i < n->nkids; i++)
		if (writes(n->kids[i], v))
			return true;
	return false;
}

/* An integer known before the probe runs: a literal, $N, $#, sizeof, a #define. */
static bool constant(const struct ast_node *n, int64_t *v)
{
	if (ast_int_literal(n, v))
		return true;
	if ((n->kind == AST_POSPARAM && n->type.kind == TY_INT) || n->kind == AST_PARAMCOUNT ||
	    n->kind == AST_SIZEOF || (n->kind == AST_IDENT && !n->cstr && n->type.kind == TY_INT)) {
		*v = (int64_t)n->cval;
		return true;
	}
	return false;
}

/* The change one statement makes to v: `$v++` +1, `$v -= 3` -3; 0: not that. */
static int64_t step_of(const struct ast_node *n, const struct sema_var *v)
{
	if (n->kind == AST_EXPR_STMT)
		n = n->lhs;
	if (!n || !n->lhs || n->lhs->kind != AST_VAR || n->lhs->var != v)
		return 0;
	int64_t k;
	if (n->kind == AST_INCDEC)
		return n->op == OP_INC ? 1 : -1;
	if (n->kind != AST_ASSIGN)
		return 0;
	if ((n->op == '+' || n->op == '-') && constant(n->rhs, &k))
		return n->op == '+' ? k : -k;
	/* $v = $v + K, $v = $v - K */
	const struct ast_node *r = n->rhs;
	if (n->op == '=' && r->kind == AST_BINOP && (r->op == '+' || r->op == '-') &&
	    r->lhs->kind == AST_VAR && r->lhs->var == v && constant(r->rhs, &k))
		return r->op == '+' ? k : -k;
	return 0;
}

/* The value the statements of block b before index i leave in v, if constant. */
static bool value_before(const struct ast_node *b, int i, const struct sema_var *v, int64_t *k0)
{
	while (--i >= 0) {
		const struct ast_node *n = b->kids[i];
		if (!writes(n, v))
			continue;
		return (n->kind == AST_ASSIGN && n->op == '=' && n->lhs->var == v &&
			constant(n->rhs, k0)) ||
		       (n->kind == AST_LET && n->rhs && constant(n->rhs, k0));
	}
	return false;
}

/* Does `v op k` hold? (op of the condition with v on the left) */
static bool holds(int op, int64_t v, int64_t k)
{
	switch (op) {
	case '<': return v < k;
	case OP_LE: return v <= k;
	case '>': return v > k;
	case OP_GE: return v >= k;
	case OP_NE: return v != k;
	default: return false;
	}
}

static int mirror(int op)
{
	return op == '<' ? '>' : op == '>' ? '<' : op == OP_LE ? OP_GE : op == OP_GE ? OP_LE : op;
}

/*
 * Iterations of `while (v op k)` from v = k0 in steps of s: INF when it
 * never stops (or not before the counter wraps around).
 */
static uint64_t trips(int op, int64_t k0, int64_t k, int64_t s)
{
	if (!holds(op, k0, k))
		return 0;
	if (s == 0)
		return INF;
	__int128 d = (__int128)k - k0, step = s;
	if (op == OP_NE)
		return d % step == 0 && d / step > 0 ? (uint64_t)(d / step) : INF;
	if ((d > 0) != (step > 0)) /* moving away from k */
		return INF;
	if (d < 0)
		d = -d, step = -step;
	if (op == OP_LE || op == OP_GE)
		return (uint64_t)(d / step + 1);
	return (uint64_t)((d + step - 1) / step);
}

/*
 * How many times loop L (statement i of block b) runs, when that is known:
 * true with *n set (INF: forever).
 */
static bool known_trips(const struct ast_node *b, int i, const struct ast_node *l, uint64_t *n)
{
	int64_t k0, k1;
	if (leaves(l->body, true))
		return false;
	if (l->kind == AST_UNROLL) {
		*n = l->uval;
		return true;
	}
	if (l->kind == AST_FOR_RANGE) {
		if (!constant(l->kids[0], &k0) || !constant(l->kids[1], &k1))
			return false;
		*n = k1 > k0 ? (uint64_t)((__int128)k1 - k0) : 0;
		return true;
	}
	if (l->kind != AST_WHILE)
		return false;
	const struct ast_node *c = l->cond;
	if (constant(c, &k0)) {
		*n = k0 ? INF : 0;
		return true;
	}
	if (c->kind != AST_BINOP)
		return false;
	int op = c->op;
	const struct ast_node *var = c->lhs, *lim = c->rhs;
	if (var->kind != AST_VAR) {
		var = c->rhs, lim = c->lhs, op = mirror(op);
		if (var->kind != AST_VAR)
			return false;
	}
	if (!constant(lim, &k1) || !b || !value_before(b, i, var->var, &k0))
		return false;
	if (!var->type.is_signed && (k0 < 0 || k1 < 0))
		return false;
	/* the body's one change of v: a statement of its own block */
	int64_t s = 0;
	const struct ast_node *body = l->body;
	for (int j = 0; j < body->nkids; j++) {
		int64_t sj = step_of(body->kids[j], var->var);
		if (sj && s)
			return false;
		if (sj)
			s = sj;
		else if (writes(body->kids[j], var->var))
			return false;
	}
	*n = trips(op, k0, k1, s);
	return true;
}

/* ---- the check ------------------------------------------------------------ */

static void check_block(struct diags *d, const struct ast_node *b);

static void report(struct diags *d, const struct ast_node *l, uint64_t work)
{
	struct diag *dg;
	if (work == INF)
		dg = diag_error(d, l->loc, "infinite loop detected: this loop never ends");
	else
		dg = diag_error(d, l->loc,
				"this loop runs at least %llu instructions each time, more than "
				"the %d one probe hit may run",
				(unsigned long long)work, SEMA_HIT_BUDGET);
	diag_hint(dg, "ubt bounds the loops of one probe hit at %d instructions, as the "
		      "kernel's verifier does for bpftrace",
		  SEMA_HIT_BUDGET);
}

/*
 * What loop L (statement i of block b) charges for sure each time it runs,
 * its iterations and those of loops that run in every one of them; 0 if
 * its trip count is not known.  Reports the outermost loop that cannot fit
 * (*reported), else checks the loops inside.
 */
static uint64_t loop_work(struct diags *d, const struct ast_node *b, int i,
			  const struct ast_node *l, bool *reported)
{
	uint64_t n, per = sema_loop_charge(l), inner = 0;
	if (!known_trips(b, i, l, &n)) {
		check_block(d, l->body);
		return 0;
	}
	/* loops that run in every iteration: statements of the body's own block */
	for (int j = 0; j < l->body->nkids; j++) {
		const struct ast_node *s = l->body->kids[j];
		if (is_loop(s))
			inner = sat_add(inner, loop_work(d, l->body, j, s, reported));
		else
			check_block(d, s);
		if (*reported)
			return 0;
	}
	uint64_t work = n == INF ? INF : sat_mul(n, sat_add(per, inner));
	if (work > SEMA_HIT_BUDGET && n) {
		report(d, l, work);
		*reported = true;
		return 0;
	}
	return work;
}

/* Every loop in n, each checked once. */
static void check_block(struct diags *d, const struct ast_node *n)
{
	if (!n)
		return;
	if (n->kind == AST_BLOCK) {
		for (int i = 0; i < n->nkids; i++) {
			bool reported = false;
			if (is_loop(n->kids[i]))
				loop_work(d, n, i, n->kids[i], &reported);
			else
				check_block(d, n->kids[i]);
		}
		return;
	}
	if (is_loop(n)) { /* a loop that is not a statement of a block */
		bool reported = false;
		loop_work(d, NULL, 0, n, &reported);
		return;
	}
	const struct ast_node *sub[] = {n->body, n->els};
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
		check_block(d, sub[i]);
}

void sema_loops(struct diags *d, const struct ast_node *prog)
{
	for (int i = 0; i < prog->nkids; i++)
		check_block(d, prog->kids[i]->body);
}
