/*
 * rt_ex_first.c - opens the runtime's exception table (rt_read.c): the
 * label rt_extable at the start of section .rt_extable.  Linked first of
 * the runtime's objects (meson.build), so that every entry another file
 * adds lies between this label and rt_ex_last.c's rt_extable_end, the
 * way crtbegin.o and crtend.o bracket a program's constructors.
 */
__asm__(".pushsection .rt_extable,\"a\"\n"
	".p2align 2\n"
	".globl rt_extable\n"
	".hidden rt_extable\n"
	"rt_extable:\n"
	".popsection\n");
