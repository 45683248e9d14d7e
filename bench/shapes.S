/*
 * shapes.S - the probed function f and its unprobed twin g of the count
 * benchmark (bench/count.c) in the shapes a count probe meets at function
 * entries (issue 18), one shape per build, chosen by SHAPE_*:
 *
 *   SHAPE_LEAF5   a 5-byte leaf: `lea 0x1(%rdi,%rdi,2),%eax; ret`.  The jump
 *                 covers the whole function, its `ret` included, so the
 *                 trampoline returns straight to the caller.
 *   SHAPE_ENDBR   the same leaf behind `endbr64`, as -fcf-protection (the
 *                 default of Debian's and Ubuntu's gcc) starts every
 *                 function whose address is taken.
 *   SHAPE_PUSH    an entry that saves a callee-saved register first
 *                 (`push %rbx`), as most non-leaf functions begin.
 *   SHAPE_TAIL    the leaf entered by a tail call: count.c calls
 *                 bench_call(fn, x) (built with -DBENCH_CALL), which jumps
 *                 to fn, so f's `ret` goes back to count.c's loop.
 *
 * Written in assembly so the bytes are exactly these whatever the compiler;
 * f and g are byte for byte the same, so the benchmark times a probed f and
 * an unprobed g side by side in one process.
 */

#if defined(SHAPE_LEAF5) || defined(SHAPE_TAIL)
#define BODY \
	lea 0x1(%rdi,%rdi,2),%eax; \
	ret
#elif defined(SHAPE_ENDBR)
#define BODY \
	endbr64; \
	lea 0x1(%rdi,%rdi,2),%eax; \
	ret
#elif defined(SHAPE_PUSH)
#define BODY \
	push %rbx; \
	lea 0x1(%rdi,%rdi,2),%ebx; \
	mov %ebx,%eax; \
	pop %rbx; \
	ret
#else
#error "define one SHAPE_*"
#endif

#define FUNC(name) \
	.globl name; \
	.type name,@function; \
	.p2align 4; \
name: \
	BODY; \
	.size name,.-name

	.text
FUNC(f)
FUNC(g)

#ifdef SHAPE_TAIL
/* int bench_call(int (*fn)(int), int x): a tail call into fn */
	.globl bench_call
	.type bench_call,@function
	.p2align 4
bench_call:
	mov %rdi,%rax
	mov %esi,%edi
	jmp *%rax
	.size bench_call,.-bench_call
#endif

	.section .note.GNU-stack,"",@progbits
