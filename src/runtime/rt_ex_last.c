/*
 * rt_ex_last.c - closes the runtime's exception table (rt_read.c): the
 * label rt_extable_end after every entry of section .rt_extable.  Linked
 * last of the runtime's objects (meson.build); rt_ex_first.c opens it.
 */
__asm__(".pushsection .rt_extable,\"a\"\n"
	".p2align 2\n"
	".globl rt_extable_end\n"
	".hidden rt_extable_end\n"
	"rt_extable_end:\n"
	".popsection\n");
