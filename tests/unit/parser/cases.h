/*
 * cases.h - expected outputs of the parser/sema tests (test_parser.c).
 *
 * "bt" cases were checked against what bpftrace 0.17 prints for the same
 * script (`bpftrace -d -e ...`: AST after parser, after Semantic, and the
 * error text); "ubt" cases cover what is ubt's own (unsupported features,
 * deliberate differences) and were reviewed by hand.
 */

static const struct tcase cases[] = {
	{
		.name = "uprobe_count", /* bt */
		.src = "uprobe:./a:f { @c = count(); }",
		.ast = "Program\n"
		" uprobe:./a:f\n"
		"  =\n"
		"   map: @c\n"
		"   call: count\n",
		.typed = "Program\n"
		" uprobe:./a:f\n"
		"  =\n"
		"   map: @c :: type[count, ctx: 0]\n"
		"   call: count :: type[count, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "short_u_multi_attach_pred", /* bt */
		.src = "u:./a:f, uprobe:./a:g /arg0 > 5 && tid != 0/ { @s = sum(arg1); @n[pid, tid]++; }",
		.ast = "Program\n"
		" uprobe:./a:f\n"
		" uprobe:./a:g\n"
		"  pred\n"
		"   &&\n"
		"    >\n"
		"     builtin: arg0\n"
		"     int: 5\n"
		"    !=\n"
		"     builtin: tid\n"
		"     int: 0\n"
		"  =\n"
		"   map: @s\n"
		"   call: sum\n"
		"    builtin: arg1\n"
		"  map: @n\n"
		"   builtin: pid\n"
		"   builtin: tid\n"
		"   ++\n",
		.typed = "Program\n"
		" uprobe:./a:f\n"
		" uprobe:./a:g\n"
		"  pred\n"
		"   && :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"    > :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"     builtin: arg0 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"     int: 5 :: type[int64, ctx: 0]\n"
		"    != :: type[unsigned int64, ctx: 0]\n"
		"     builtin: tid :: type[unsigned int64, ctx: 0]\n"
		"     int: 0 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @s :: type[sum, ctx: 0]\n"
		"   call: sum :: type[sum, ctx: 0]\n"
		"    builtin: arg1 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"  map: @n :: type[int64, ctx: 0]\n"
		"   builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"   builtin: tid :: type[unsigned int64, ctx: 0]\n"
		"   ++\n",
		.diag = "",
	},
	{
		.name = "abs_path_dots_dashes", /* ubt */
		.src = "uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc { @[tid] = count(); }",
		.ast = "Program\n"
		" uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc\n"
		"  =\n"
		"   map: @\n"
		"    builtin: tid\n"
		"   call: count\n",
		.typed = "Program\n"
		" uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc\n"
		"  =\n"
		"   map: @ :: type[count, ctx: 0]\n"
		"    builtin: tid :: type[unsigned int64, ctx: 0]\n"
		"   call: count :: type[count, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "compound_assign_incdec", /* ubt */
		.src = "BEGIN { $x = 0x10 | 010 ^ 1_000 & 7; $x += 2; $x -= 1; $x *= 3; $x /= 2; $x %= 5; $x &= 255; $x |= 1; $x ^= 3; $x <<= 1; $x >>= 1; $x++; --$x; printf(\"%d\\n\", $x); exit(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   |\n"
		"    int: 16\n"
		"    ^\n"
		"     int: 8\n"
		"     &\n"
		"      int: 1000\n"
		"      int: 7\n"
		"  =\n"
		"   variable: $x\n"
		"   +\n"
		"    variable: $x\n"
		"    int: 2\n"
		"  =\n"
		"   variable: $x\n"
		"   -\n"
		"    variable: $x\n"
		"    int: 1\n"
		"  =\n"
		"   variable: $x\n"
		"   *\n"
		"    variable: $x\n"
		"    int: 3\n"
		"  =\n"
		"   variable: $x\n"
		"   /\n"
		"    variable: $x\n"
		"    int: 2\n"
		"  =\n"
		"   variable: $x\n"
		"   %\n"
		"    variable: $x\n"
		"    int: 5\n"
		"  =\n"
		"   variable: $x\n"
		"   &\n"
		"    variable: $x\n"
		"    int: 255\n"
		"  =\n"
		"   variable: $x\n"
		"   |\n"
		"    variable: $x\n"
		"    int: 1\n"
		"  =\n"
		"   variable: $x\n"
		"   ^\n"
		"    variable: $x\n"
		"    int: 3\n"
		"  =\n"
		"   variable: $x\n"
		"   <<\n"
		"    variable: $x\n"
		"    int: 1\n"
		"  =\n"
		"   variable: $x\n"
		"   >>\n"
		"    variable: $x\n"
		"    int: 1\n"
		"  variable: $x\n"
		"   ++\n"
		"  --\n"
		"   variable: $x\n"
		"  call: printf\n"
		"   string: %d\\n\n"
		"   variable: $x\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   | :: type[int64, ctx: 0]\n"
		"    int: 16 :: type[int64, ctx: 0]\n"
		"    ^ :: type[int64, ctx: 0]\n"
		"     int: 8 :: type[int64, ctx: 0]\n"
		"     & :: type[int64, ctx: 0]\n"
		"      int: 1000 :: type[int64, ctx: 0]\n"
		"      int: 7 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   + :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   - :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   * :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 3 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   / :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   % :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 5 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   & :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 255 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   | :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   ^ :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 3 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   << :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   >> :: type[int64, ctx: 0]\n"
		"    variable: $x :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  variable: $x :: type[int64, ctx: 0]\n"
		"   ++\n"
		"  --\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"  call: printf :: type[none, ctx: 0]\n"
		"   string: %d\\n :: type[string[4], ctx: 0]\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "precedence_strings", /* ubt */
		.src = "BEGIN { @a = 1 << 2 >> 1; @b = (1 + 2) * -3 / 4 % 5; @c = !1 || ~2 && 3 <= 4; @d = 1 >= 2 ? \"yes\\t\\\"q\\\"\\\\\" : \"no\\x41\\101\"; exit() } END { @e = 1 == 1 != 0; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a\n"
		"   >>\n"
		"    <<\n"
		"     int: 1\n"
		"     int: 2\n"
		"    int: 1\n"
		"  =\n"
		"   map: @b\n"
		"   %\n"
		"    /\n"
		"     *\n"
		"      +\n"
		"       int: 1\n"
		"       int: 2\n"
		"      int: -3\n"
		"     int: 4\n"
		"    int: 5\n"
		"  =\n"
		"   map: @c\n"
		"   ||\n"
		"    !\n"
		"     int: 1\n"
		"    &&\n"
		"     ~\n"
		"      int: 2\n"
		"     <=\n"
		"      int: 3\n"
		"      int: 4\n"
		"  =\n"
		"   map: @d\n"
		"   ?:\n"
		"    >=\n"
		"     int: 1\n"
		"     int: 2\n"
		"    string: yes\\t\\\"q\\\"\\\\\n"
		"    string: noAA\n"
		"  call: exit\n"
		" END\n"
		"  =\n"
		"   map: @e\n"
		"   !=\n"
		"    ==\n"
		"     int: 1\n"
		"     int: 1\n"
		"    int: 0\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a :: type[int64, ctx: 0]\n"
		"   >> :: type[int64, ctx: 0]\n"
		"    << :: type[int64, ctx: 0]\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"     int: 2 :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @b :: type[int64, ctx: 0]\n"
		"   % :: type[int64, ctx: 0]\n"
		"    / :: type[int64, ctx: 0]\n"
		"     * :: type[int64, ctx: 0]\n"
		"      + :: type[int64, ctx: 0]\n"
		"       int: 1 :: type[int64, ctx: 0]\n"
		"       int: 2 :: type[int64, ctx: 0]\n"
		"      int: -3 :: type[int64, ctx: 0]\n"
		"     int: 4 :: type[int64, ctx: 0]\n"
		"    int: 5 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @c :: type[unsigned int64, ctx: 0]\n"
		"   || :: type[unsigned int64, ctx: 0]\n"
		"    !\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"    && :: type[int64, ctx: 0]\n"
		"     ~\n"
		"      int: 2 :: type[int64, ctx: 0]\n"
		"     <= :: type[int64, ctx: 0]\n"
		"      int: 3 :: type[int64, ctx: 0]\n"
		"      int: 4 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @d :: type[string[64], ctx: 0]\n"
		"   ?:\n"
		"    >= :: type[int64, ctx: 0]\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"     int: 2 :: type[int64, ctx: 0]\n"
		"    string: yes\\t\\\"q\\\"\\\\ :: type[string[9], ctx: 0, AS(kernel)]\n"
		"    string: noAA :: type[string[5], ctx: 0, AS(kernel)]\n"
		"  call: exit :: type[none, ctx: 0]\n"
		" END\n"
		"  =\n"
		"   map: @e :: type[int64, ctx: 0]\n"
		"   != :: type[int64, ctx: 0]\n"
		"    == :: type[int64, ctx: 0]\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"    int: 0 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "if_else_if", /* bt */
		.src = "BEGIN { if (pid > 1) { @x = 1; } else if (pid < 0) { @x = 2 } else { @x = 3 } exit(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  if\n"
		"   >\n"
		"    builtin: pid\n"
		"    int: 1\n"
		"   then\n"
		"    =\n"
		"     map: @x\n"
		"     int: 1\n"
		"   else\n"
		"    if\n"
		"     <\n"
		"      builtin: pid\n"
		"      int: 0\n"
		"     then\n"
		"      =\n"
		"       map: @x\n"
		"       int: 2\n"
		"     else\n"
		"      =\n"
		"       map: @x\n"
		"       int: 3\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  if\n"
		"   > :: type[unsigned int64, ctx: 0]\n"
		"    builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"   then\n"
		"    =\n"
		"     map: @x :: type[int64, ctx: 0]\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"   else\n"
		"    if\n"
		"     < :: type[unsigned int64, ctx: 0]\n"
		"      builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"      int: 0 :: type[int64, ctx: 0]\n"
		"     then\n"
		"      =\n"
		"       map: @x :: type[int64, ctx: 0]\n"
		"       int: 2 :: type[int64, ctx: 0]\n"
		"     else\n"
		"      =\n"
		"       map: @x :: type[int64, ctx: 0]\n"
		"       int: 3 :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "printf_specs", /* bt */
		.src = "uprobe:./a:f { @m[arg0] = count(); @t = arg5 - arg4; ++@p; @p--; $v = \"s\"; $v = \"longer\"; printf(\"%s %-5d %lu %x\\n\", $v, arg0, arg1, pid) }",
		.ast = "Program\n"
		" uprobe:./a:f\n"
		"  =\n"
		"   map: @m\n"
		"    builtin: arg0\n"
		"   call: count\n"
		"  =\n"
		"   map: @t\n"
		"   -\n"
		"    builtin: arg5\n"
		"    builtin: arg4\n"
		"  ++\n"
		"   map: @p\n"
		"  map: @p\n"
		"   --\n"
		"  =\n"
		"   variable: $v\n"
		"   string: s\n"
		"  =\n"
		"   variable: $v\n"
		"   string: longer\n"
		"  call: printf\n"
		"   string: %s %-5d %lu %x\\n\n"
		"   variable: $v\n"
		"   builtin: arg0\n"
		"   builtin: arg1\n"
		"   builtin: pid\n",
		.typed = "Program\n"
		" uprobe:./a:f\n"
		"  =\n"
		"   map: @m :: type[count, ctx: 0]\n"
		"    builtin: arg0 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"   call: count :: type[count, ctx: 0]\n"
		"  =\n"
		"   map: @t :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"   - :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"    builtin: arg5 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"    builtin: arg4 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"  ++\n"
		"   map: @p :: type[int64, ctx: 0]\n"
		"  map: @p :: type[int64, ctx: 0]\n"
		"   --\n"
		"  =\n"
		"   variable: $v :: type[string[7], ctx: 0, AS(kernel)]\n"
		"   string: s :: type[string[2], ctx: 0, AS(kernel)]\n"
		"  =\n"
		"   variable: $v :: type[string[7], ctx: 0, AS(kernel)]\n"
		"   string: longer :: type[string[7], ctx: 0, AS(kernel)]\n"
		"  call: printf :: type[none, ctx: 0]\n"
		"   string: %s %-5d %lu %x\\n :: type[string[16], ctx: 0]\n"
		"   variable: $v :: type[string[7], ctx: 0, AS(kernel)]\n"
		"   builtin: arg0 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"   builtin: arg1 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"   builtin: pid :: type[unsigned int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "map_compound_first_use", /* bt */
		.src = "BEGIN { @x += 2; @y[1, 2] -= 1; @z <<= 3; exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   +\n"
		"    map: @x\n"
		"    int: 2\n"
		"  =\n"
		"   map: @y\n"
		"    int: 1\n"
		"    int: 2\n"
		"   -\n"
		"    map: @y\n"
		"     int: 1\n"
		"     int: 2\n"
		"    int: 1\n"
		"  =\n"
		"   map: @z\n"
		"   <<\n"
		"    map: @z\n"
		"    int: 3\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x :: type[unsigned int64, ctx: 0]\n"
		"   + :: type[unsigned int64, ctx: 0]\n"
		"    map: @x :: type[unsigned int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @y :: type[unsigned int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"   - :: type[unsigned int64, ctx: 0]\n"
		"    map: @y :: type[unsigned int64, ctx: 0]\n"
		"     int: 1 :: type[int64, ctx: 0]\n"
		"     int: 2 :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @z :: type[unsigned int64, ctx: 0]\n"
		"   << :: type[unsigned int64, ctx: 0]\n"
		"    map: @z :: type[unsigned int64, ctx: 0]\n"
		"    int: 3 :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "comments_semicolons", /* ubt */
		.src = "BEGIN /* c */ { // line\n"
		" @a = 1; /* multi\n"
		"line */ @b = 2; }\n"
		"END { exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a\n"
		"   int: 1\n"
		"  =\n"
		"   map: @b\n"
		"   int: 2\n"
		" END\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a :: type[int64, ctx: 0]\n"
		"   int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @b :: type[int64, ctx: 0]\n"
		"   int: 2 :: type[int64, ctx: 0]\n"
		" END\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "empty_block", /* bt */
		.src = "BEGIN { } END { }",
		.ast = "Program\n"
		" BEGIN\n"
		" END\n",
		.typed = "Program\n"
		" BEGIN\n"
		" END\n",
		.diag = "",
	},
	{
		.name = "ternary_types", /* bt */
		.src = "BEGIN { $x = 1 ? \"a\" : \"bc\"; $y = 1 ? pid : 2; $z = pid ? 1 : 2; exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   ?:\n"
		"    int: 1\n"
		"    string: a\n"
		"    string: bc\n"
		"  =\n"
		"   variable: $y\n"
		"   ?:\n"
		"    int: 1\n"
		"    builtin: pid\n"
		"    int: 2\n"
		"  =\n"
		"   variable: $z\n"
		"   ?:\n"
		"    builtin: pid\n"
		"    int: 1\n"
		"    int: 2\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x :: type[string[64], ctx: 0]\n"
		"   ?:\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    string: a :: type[string[2], ctx: 0, AS(kernel)]\n"
		"    string: bc :: type[string[3], ctx: 0, AS(kernel)]\n"
		"  =\n"
		"   variable: $y :: type[unsigned int64, ctx: 0]\n"
		"   ?:\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $z :: type[int64, ctx: 0]\n"
		"   ?:\n"
		"    builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "anon_map_and_neg", /* bt */
		.src = "BEGIN { @ = -5; @n = -pid; @o = 0xffffffffffffffff; @p = 1u + 2ll; exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @\n"
		"   int: -5\n"
		"  =\n"
		"   map: @n\n"
		"   -\n"
		"    builtin: pid\n"
		"  =\n"
		"   map: @o\n"
		"   int: -1\n"
		"  =\n"
		"   map: @p\n"
		"   +\n"
		"    int: 1\n"
		"    int: 2\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @ :: type[int64, ctx: 0]\n"
		"   int: -5 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @n :: type[unsigned int64, ctx: 0]\n"
		"   -\n"
		"    builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"  =\n"
		"   map: @o :: type[int64, ctx: 0]\n"
		"   int: -1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @p :: type[int64, ctx: 0]\n"
		"   + :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "warning_signs", /* bt */
		.src = "BEGIN { @x = -1 + pid; $y = pid == -1; exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   +\n"
		"    int: -1\n"
		"    builtin: pid\n"
		"  =\n"
		"   variable: $y\n"
		"   ==\n"
		"    builtin: pid\n"
		"    int: -1\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x :: type[unsigned int64, ctx: 0]\n"
		"   + :: type[unsigned int64, ctx: 0]\n"
		"    int: -1 :: type[int64, ctx: 0]\n"
		"    builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"  =\n"
		"   variable: $y :: type[unsigned int64, ctx: 0]\n"
		"   == :: type[unsigned int64, ctx: 0]\n"
		"    builtin: pid :: type[unsigned int64, ctx: 0]\n"
		"    int: -1 :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "stdin:1:17-18: WARNING: arithmetic on integers of different signs: 'int64' and 'unsigned int64' can lead to undefined behavior\n"
		"BEGIN { @x = -1 + pid; $y = pid == -1; exit() }\n"
		"                ~\n"
		"stdin:1:33-35: WARNING: comparison of integers of different signs: 'unsigned int64' and 'int64' can lead to undefined behavior\n"
		"BEGIN { @x = -1 + pid; $y = pid == -1; exit() }\n"
		"                                ~~\n",
	},
	{
		.name = "octal_hex_escapes", /* bt */
		.src = "BEGIN { $s = \"\\x7f\\1\\12\\r\"; exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $s\n"
		"   string: \\x7f\\x01\\n\\r\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $s :: type[string[5], ctx: 0, AS(kernel)]\n"
		"   string: \\x7f\\x01\\n\\r :: type[string[5], ctx: 0, AS(kernel)]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "var_in_pred_later", /* bt */
		.src = "uprobe:./a:f /arg0/ { $a = arg0; if ($a) { $b = $a * 2 } }",
		.ast = "Program\n"
		" uprobe:./a:f\n"
		"  pred\n"
		"   builtin: arg0\n"
		"  =\n"
		"   variable: $a\n"
		"   builtin: arg0\n"
		"  if\n"
		"   variable: $a\n"
		"   then\n"
		"    =\n"
		"     variable: $b\n"
		"     *\n"
		"      variable: $a\n"
		"      int: 2\n",
		.typed = "Program\n"
		" uprobe:./a:f\n"
		"  pred\n"
		"   builtin: arg0 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"  =\n"
		"   variable: $a :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"   builtin: arg0 :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"  if\n"
		"   variable: $a :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"   then\n"
		"    =\n"
		"     variable: $b :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"     * :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"      variable: $a :: type[unsigned int64, ctx: 0, AS(user)]\n"
		"      int: 2 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "err_undefined_var", /* bt */
		.src = "BEGIN { $y = $x + 1; $z = $q; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $y\n"
		"   +\n"
		"    variable: $x\n"
		"    int: 1\n"
		"  =\n"
		"   variable: $z\n"
		"   variable: $q\n",
		.typed = NULL,
		.diag = "stdin:1:14-16: ERROR: Undefined or undeclared variable: $x\n"
		"BEGIN { $y = $x + 1; $z = $q; }\n"
		"             ~~\n"
		"stdin:1:27-29: ERROR: Undefined or undeclared variable: $q\n"
		"BEGIN { $y = $x + 1; $z = $q; }\n"
		"                          ~~\n",
	},
	{
		.name = "err_undefined_var_in_call", /* bt */
		.src = "BEGIN { printf(\"%d\", $x); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   string: %d\n"
		"   variable: $x\n",
		.typed = NULL,
		.diag = "stdin:1:22-24: ERROR: Undefined or undeclared variable: $x\n"
		"BEGIN { printf(\"%d\", $x); }\n"
		"                     ~~\n",
	},
	{
		.name = "err_unknown_function", /* bt */
		.src = "BEGIN { @c = cuont(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @c\n"
		"   call: cuont\n",
		.typed = NULL,
		.diag = "stdin:1:14-19: ERROR: Unknown function: cuont\n"
		"BEGIN { @c = cuont(); }\n"
		"             ~~~~~\n"
		"HINT: did you mean 'count'?\n",
	},
	{
		.name = "err_unknown_function_ident", /* bt */
		.src = "BEGIN { x(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: x\n",
		.typed = NULL,
		.diag = "stdin:1:9-10: ERROR: Unknown function: x\n"
		"BEGIN { x(); }\n"
		"        ~\n"
		"HINT: did you mean 'max'?\n",
	},
	{
		.name = "err_unknown_ident", /* bt */
		.src = "BEGIN { $x = x; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   identifier: x\n",
		.typed = NULL,
		.diag = "stdin:1:14-15: ERROR: Unknown identifier: 'x'\n"
		"BEGIN { $x = x; }\n"
		"             ~\n",
	},
	{
		.name = "err_map_type_mismatch", /* bt */
		.src = "BEGIN { @x = count(); @x = 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   call: count\n"
		"  =\n"
		"   map: @x\n"
		"   int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:23-25: ERROR: Type mismatch for @x: trying to assign value of type 'int64' when map already contains a value of type 'count\n"
		"BEGIN { @x = count(); @x = 1; }\n"
		"                      ~~\n",
	},
	{
		.name = "err_map_type_mismatch2", /* bt */
		.src = "BEGIN { @x = 1; @x = count(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   int: 1\n"
		"  =\n"
		"   map: @x\n"
		"   call: count\n",
		.typed = NULL,
		.diag = "stdin:1:17-19: ERROR: Type mismatch for @x: trying to assign value of type 'count' when map already contains a value of type 'int64\n"
		"BEGIN { @x = 1; @x = count(); }\n"
		"                ~~\n",
	},
	{
		.name = "err_incdec_then_count", /* bt */
		.src = "BEGIN { @x++; @x = count() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  map: @x\n"
		"   ++\n"
		"  =\n"
		"   map: @x\n"
		"   call: count\n",
		.typed = NULL,
		.diag = "stdin:1:15-17: ERROR: Type mismatch for @x: trying to assign value of type 'count' when map already contains a value of type 'int64\n"
		"BEGIN { @x++; @x = count() }\n"
		"              ~~\n",
	},
	{
		.name = "err_printf_not_enough", /* bt */
		.src = "BEGIN { printf(\"%d %d\\n\", 1); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   string: %d %d\\n\n"
		"   int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:9-29: ERROR: printf: Not enough arguments for format string (1 supplied, 2 expected)\n"
		"BEGIN { printf(\"%d %d\\n\", 1); }\n"
		"        ~~~~~~~~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_printf_too_many", /* bt */
		.src = "BEGIN { printf(\"%d\\n\", 1, 2); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   string: %d\\n\n"
		"   int: 1\n"
		"   int: 2\n",
		.typed = NULL,
		.diag = "stdin:1:9-29: ERROR: printf: Too many arguments for format string (2 supplied, 1 expected)\n"
		"BEGIN { printf(\"%d\\n\", 1, 2); }\n"
		"        ~~~~~~~~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_printf_d_string", /* bt */
		.src = "BEGIN { printf(\"%d\\n\", \"a\"); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   string: %d\\n\n"
		"   string: a\n",
		.typed = NULL,
		.diag = "stdin:1:9-28: ERROR: printf: %d specifier expects a value of type integer (string supplied)\n"
		"BEGIN { printf(\"%d\\n\", \"a\"); }\n"
		"        ~~~~~~~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_printf_s_int", /* bt */
		.src = "BEGIN { printf(\"%s\\n\", 1); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   string: %s\\n\n"
		"   int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:9-26: ERROR: printf: %s specifier expects a value of type string (integer supplied)\n"
		"BEGIN { printf(\"%s\\n\", 1); }\n"
		"        ~~~~~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_printf_fmt_var", /* bt */
		.src = "BEGIN { $f = \"x\"; printf($f); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $f\n"
		"   string: x\n"
		"  call: printf\n"
		"   variable: $f\n",
		.typed = NULL,
		.diag = "stdin:1:19-29: ERROR: printf() expects a string literal (string provided)\n"
		"BEGIN { $f = \"x\"; printf($f); }\n"
		"                  ~~~~~~~~~~\n",
	},
	{
		.name = "err_printf_fmt_int", /* bt */
		.src = "BEGIN { printf(1); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:9-18: ERROR: printf() expects a string literal (integer provided)\n"
		"BEGIN { printf(1); }\n"
		"        ~~~~~~~~~\n",
	},
	{
		.name = "err_printf_noargs", /* bt */
		.src = "BEGIN { printf(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n",
		.typed = NULL,
		.diag = "stdin:1:9-17: ERROR: printf() requires at least one argument (0 provided)\n"
		"BEGIN { printf(); }\n"
		"        ~~~~~~~~\n",
	},
	{
		.name = "count_read_printf", /* bt 0.17 refused; newer bpftrace reads the count */
		.src = "BEGIN { @x = count(); printf(\"%d\\n\", @x); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   call: count\n"
		"  call: printf\n"
		"   string: %d\\n\n"
		"   map: @x\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x :: type[count, ctx: 0]\n"
		"   call: count :: type[count, ctx: 0]\n"
		"  call: printf :: type[none, ctx: 0]\n"
		"   string: %d\\n :: type[string[4], ctx: 0]\n"
		"   map: @x :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "err_count_args", /* bt */
		.src = "BEGIN { @c = count(1); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @c\n"
		"   call: count\n"
		"    int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:14-22: ERROR: count() requires no arguments (1 provided)\n"
		"BEGIN { @c = count(1); }\n"
		"             ~~~~~~~~\n",
	},
	{
		.name = "err_sum_noargs", /* bt */
		.src = "BEGIN { @s = sum(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @s\n"
		"   call: sum\n",
		.typed = NULL,
		.diag = "stdin:1:14-19: ERROR: sum() requires one argument (0 provided)\n"
		"BEGIN { @s = sum(); }\n"
		"             ~~~~~\n",
	},
	{
		.name = "err_sum_twoargs", /* bt */
		.src = "BEGIN { @s = sum(1, 2); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @s\n"
		"   call: sum\n"
		"    int: 1\n"
		"    int: 2\n",
		.typed = NULL,
		.diag = "stdin:1:14-23: ERROR: sum() requires one argument (2 provided)\n"
		"BEGIN { @s = sum(1, 2); }\n"
		"             ~~~~~~~~~\n",
	},
	{
		.name = "err_sum_string", /* bt */
		.src = "BEGIN { @s = sum(\"a\"); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @s\n"
		"   call: sum\n"
		"    string: a\n",
		.typed = NULL,
		.diag = "stdin:1:14-22: ERROR: sum() only supports integer arguments (string provided)\n"
		"BEGIN { @s = sum(\"a\"); }\n"
		"             ~~~~~~~~\n",
	},
	{
		.name = "err_count_stmt", /* bt */
		.src = "BEGIN { count(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: count\n",
		.typed = NULL,
		.diag = "stdin:1:9-16: ERROR: count() should be directly assigned to a map\n"
		"BEGIN { count(); }\n"
		"        ~~~~~~~\n",
	},
	{
		.name = "err_count_var", /* bt */
		.src = "BEGIN { $x = count(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   call: count\n",
		.typed = NULL,
		.diag = "stdin:1:14-21: ERROR: count() should be directly assigned to a map\n"
		"BEGIN { $x = count(); }\n"
		"             ~~~~~~~\n",
	},
	{
		.name = "err_count_key", /* bt */
		.src = "BEGIN { @x[count()] = 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"    call: count\n"
		"   int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:9-19: ERROR: count() should be directly assigned to a map\n"
		"BEGIN { @x[count()] = 1; }\n"
		"        ~~~~~~~~~~\n",
	},
	{
		.name = "err_count_cond", /* bt */
		.src = "BEGIN { if (count()) {} }",
		.ast = "Program\n"
		" BEGIN\n"
		"  if\n"
		"   call: count\n"
		"   then\n",
		.typed = NULL,
		.diag = "stdin:1:12-20: ERROR: count() should be directly assigned to a map\n"
		"BEGIN { if (count()) {} }\n"
		"           ~~~~~~~~\n",
	},
	{
		/* exit(code) is newer bpftrace's (0.17 refuses it, docs/compat.md) */
		.name = "err_exit_args",
		.src = "BEGIN { exit(1, 2); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: exit\n"
		"   int: 1\n"
		"   int: 2\n",
		.typed = NULL,
		.diag = "stdin:1:9-19: ERROR: exit() takes up to one argument (2 provided)\n"
		"BEGIN { exit(1, 2); }\n"
		"        ~~~~~~~~~~\n",
	},
	{
		.name = "err_exit_assigned", /* bt */
		.src = "BEGIN { @x = exit(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   call: exit\n",
		.typed = NULL,
		.diag = "stdin:1:14-20: ERROR: exit() should not be used in an assignment or as a map key\n"
		"BEGIN { @x = exit(); }\n"
		"             ~~~~~~\n",
	},
	{
		.name = "err_map_keys_count", /* bt */
		.src = "BEGIN { @m[1] = 1; @m[1,2] = 2; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @m\n"
		"    int: 1\n"
		"   int: 1\n"
		"  =\n"
		"   map: @m\n"
		"    int: 1\n"
		"    int: 2\n"
		"   int: 2\n",
		.typed = NULL,
		.diag = "stdin:1:20-27: ERROR: Argument mismatch for @m: trying to access with arguments: [unsigned int64, unsigned int64] when map expects arguments: [unsigned int64]\n"
		"BEGIN { @m[1] = 1; @m[1,2] = 2; }\n"
		"                   ~~~~~~~\n",
	},
	{
		.name = "err_map_key_scalar", /* bt */
		.src = "BEGIN { @x[1] = count(); @x = count(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"    int: 1\n"
		"   call: count\n"
		"  =\n"
		"   map: @x\n"
		"   call: count\n",
		.typed = NULL,
		.diag = "stdin:1:26-28: ERROR: Argument mismatch for @x: trying to access with arguments: [] when map expects arguments: [unsigned int64]\n"
		"BEGIN { @x[1] = count(); @x = count(); }\n"
		"                         ~~\n",
	},
	{
		.name = "err_undefined_map", /* bt */
		.src = "BEGIN { @x = @y; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   map: @y\n",
		.typed = NULL,
		.diag = "stdin:1:14-16: ERROR: Undefined map: @y\n"
		"BEGIN { @x = @y; }\n"
		"             ~~\n"
		"stdin:1:9-11: ERROR: Undefined map: @x\n"
		"BEGIN { @x = @y; }\n"
		"        ~~\n"
		"stdin:1:14-16: ERROR: Invalid expression for assignment: none\n"
		"BEGIN { @x = @y; }\n"
		"             ~~\n",
	},
	{
		.name = "err_pred_string", /* bt */
		.src = "BEGIN /\"a\"/ { }",
		.ast = "Program\n"
		" BEGIN\n"
		"  pred\n"
		"   string: a\n",
		.typed = NULL,
		.diag = "stdin:1:7-12: ERROR: Invalid type for predicate: string\n"
		"BEGIN /\"a\"/ { }\n"
		"      ~~~~~\n",
	},
	{
		.name = "err_ternary_types", /* bt */
		.src = "BEGIN { $x = 1 ? 2 : \"a\"; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   ?:\n"
		"    int: 1\n"
		"    int: 2\n"
		"    string: a\n",
		.typed = NULL,
		.diag = "stdin:1:14-25: ERROR: Ternary operator must return the same type: have 'integer' and 'string'\n"
		"BEGIN { $x = 1 ? 2 : \"a\"; }\n"
		"             ~~~~~~~~~~~\n",
	},
	{
		.name = "err_ternary_cond", /* bt */
		.src = "BEGIN { $x = \"a\" ? 2 : 3; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   ?:\n"
		"    string: a\n"
		"    int: 2\n"
		"    int: 3\n",
		.typed = NULL,
		.diag = "stdin:1:14-25: ERROR: Invalid condition in ternary: string\n"
		"BEGIN { $x = \"a\" ? 2 : 3; }\n"
		"             ~~~~~~~~~~~\n",
	},
	{
		.name = "err_unop_string", /* bt */
		.src = "BEGIN { $x = -\"a\"; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   -\n"
		"    string: a\n",
		.typed = NULL,
		.diag = "stdin:1:14-15: ERROR: The - operator can not be used on expressions of type 'string[2]'\n"
		"BEGIN { $x = -\"a\"; }\n"
		"             ~\n",
	},
	{
		.name = "err_binop_mismatch", /* bt */
		.src = "BEGIN { $x = \"a\" + 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   +\n"
		"    string: a\n"
		"    int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:14-21: ERROR: Type mismatch for '+': comparing 'string[2]' with 'int64'\n"
		"BEGIN { $x = \"a\" + 1; }\n"
		"             ~~~~~~~\n",
	},
	{
		.name = "err_binop_strings", /* bt */
		.src = "BEGIN { $x = \"a\" + \"b\"; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   +\n"
		"    string: a\n"
		"    string: b\n",
		.typed = NULL,
		.diag = "stdin:1:18-19: ERROR: The + operator can not be used on expressions of types string[2], string[2]\n"
		"BEGIN { $x = \"a\" + \"b\"; }\n"
		"                 ~\n",
	},
	{
		.name = "count_read_plus", /* bt 0.17 refused; newer bpftrace reads the count */
		.src = "BEGIN { @x = count(); @y = @x + 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   call: count\n"
		"  =\n"
		"   map: @y\n"
		"   +\n"
		"    map: @x\n"
		"    int: 1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x :: type[count, ctx: 0]\n"
		"   call: count :: type[count, ctx: 0]\n"
		"  =\n"
		"   map: @y :: type[int64, ctx: 0]\n"
		"   + :: type[int64, ctx: 0]\n"
		"    map: @x :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "err_var_type", /* bt */
		.src = "BEGIN { $x = 1; $x = \"s\"; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   int: 1\n"
		"  =\n"
		"   variable: $x\n"
		"   string: s\n",
		.typed = NULL,
		.diag = "stdin:1:20-21: ERROR: Type mismatch for $x: trying to assign value of type 'string[2]' when variable already contains a value of type 'int64'\n"
		"BEGIN { $x = 1; $x = \"s\"; }\n"
		"                   ~\n",
	},
	{
		.name = "err_arg_in_begin", /* bt */
		.src = "BEGIN { $x = arg0; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   builtin: arg0\n",
		.typed = NULL,
		.diag = "stdin:1:14-18: ERROR: The arg0 builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes\n"
		"BEGIN { $x = arg0; }\n"
		"             ~~~~\n",
	},
	{
		/* arg6 is read from the stack at a function entry (docs/compat.md);
		 * a return probe has no arguments there */
		.name = "err_arg6", /* bt */
		.src = "uretprobe:./a:f { $x = arg6; }",
		.ast = "Program\n"
		" uretprobe:./a:f\n"
		"  =\n"
		"   variable: $x\n"
		"   builtin: arg6\n",
		.typed = NULL,
		.diag = "stdin:1:24-28: ERROR: The arg6 builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes\n"
		"uretprobe:./a:f { $x = arg6; }\n"
		"                       ~~~~\n"
		"stdin:1:24-28: ERROR: x86_64 doesn't support arg6\n"
		"uretprobe:./a:f { $x = arg6; }\n"
		"                       ~~~~\n",
	},
	{
		.name = "err_many_collected", /* ubt */
		.src = "BEGIN { @a = $u; @b = $v; cuont(); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a\n"
		"   variable: $u\n"
		"  =\n"
		"   map: @b\n"
		"   variable: $v\n"
		"  call: cuont\n",
		.typed = NULL,
		.diag = "stdin:1:14-16: ERROR: Undefined or undeclared variable: $u\n"
		"BEGIN { @a = $u; @b = $v; cuont(); }\n"
		"             ~~\n"
		"stdin:1:23-25: ERROR: Undefined or undeclared variable: $v\n"
		"BEGIN { @a = $u; @b = $v; cuont(); }\n"
		"                      ~~\n"
		"stdin:1:27-32: ERROR: Unknown function: cuont\n"
		"BEGIN { @a = $u; @b = $v; cuont(); }\n"
		"                          ~~~~~\n"
		"HINT: did you mean 'count'?\n",
	},
	{
		.name = "err_incdec_literal", /* bt */
		.src = "BEGIN { pid++; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:9-12: ERROR: The ++ operator must be applied to a map or variable\n"
		"BEGIN { pid++; }\n"
		"        ~~~\n",
	},
	{
		.name = "err_uprobe_bare", /* bt */
		.src = "uprobe { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-7: ERROR: uprobe probe type requires 2 arguments\n"
		"uprobe { }\n"
		"~~~~~~\n",
	},
	{
		.name = "err_uprobe_nofunc", /* bt */
		.src = "uprobe:./a { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-11: ERROR: uprobe probe type requires 2 arguments\n"
		"uprobe:./a { }\n"
		"~~~~~~~~~~\n",
	},
	{
		.name = "err_uprobe_extra", /* bt */
		.src = "uprobe:./a:f:g { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-15: ERROR: uprobe probe type requires 2 arguments\n"
		"uprobe:./a:f:g { }\n"
		"~~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_uprobe_emptyfunc", /* ubt */
		.src = "uprobe:./a: { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-12: ERROR: uprobe should be attached to a function and/or address\n"
		"uprobe:./a: { }\n"
		"~~~~~~~~~~~\n",
	},
	{
		.name = "err_begin_arg", /* bt */
		.src = "BEGIN:x { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-8: ERROR: BEGIN probe type requires 0 arguments\n"
		"BEGIN:x { }\n"
		"~~~~~~~\n",
	},
	{
		.name = "err_no_attach", /* ubt */
		.src = "{ }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-1: ERROR: No attach points for probe\n"
		"{ }\n"
		"\n",
	},
	{
		.name = "err_bad_provider", /* ubt */
		.src = "foo:x { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-6: ERROR: Invalid probe type: foo\n"
		"foo:x { }\n"
		"~~~~~\n",
	},
	{
		.name = "syn_extra_brace", /* bt */
		.src = "BEGIN { @x = 1 } }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:18-19: ERROR: syntax error, unexpected }, expecting {\n"
		"BEGIN { @x = 1 } }\n"
		"                 ~\n",
	},
	{
		.name = "syn_missing_brace", /* bt */
		.src = "BEGIN @x = 1 }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:7-9: ERROR: syntax error, unexpected map, expecting {\n"
		"BEGIN @x = 1 }\n"
		"      ~~\n",
	},
	{
		.name = "syn_missing_expr", /* bt */
		.src = "BEGIN { @x = ; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:14-15: ERROR: syntax error, unexpected ;\n"
		"BEGIN { @x = ; }\n"
		"             ~\n",
	},
	{
		.name = "syn_missing_semi", /* bt */
		.src = "BEGIN { @x = 1 @y = 2 }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:16-18: ERROR: syntax error, unexpected map, expecting }\n"
		"BEGIN { @x = 1 @y = 2 }\n"
		"               ~~\n",
	},
	{
		.name = "syn_eof", /* bt */
		.src = "BEGIN {",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:7-8: ERROR: syntax error, unexpected end of file, expecting }\n"
		"BEGIN {\n"
		"      ~\n",
	},
	{
		.name = "syn_eof_probe", /* bt */
		.src = "BEGIN",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-6: ERROR: unexpected end of file, expected {\n"
		"BEGIN\n"
		"~~~~~\n",
	},
	{
		.name = "syn_paren", /* bt */
		.src = "BEGIN { $x = (1; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:14-17: ERROR: syntax error, unexpected ;, expecting ) or \",\"\n"
		"BEGIN { $x = (1; }\n"
		"             ~~~\n",
	},
	{
		.name = "syn_ternary", /* bt */
		.src = "BEGIN { $x = 1 ? 2; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:18-20: ERROR: syntax error, unexpected ;, expecting :\n"
		"BEGIN { $x = 1 ? 2; }\n"
		"                 ~~\n",
	},
	{
		.name = "syn_binop", /* bt */
		.src = "BEGIN { $x = 1 +; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:16-18: ERROR: syntax error, unexpected ;\n"
		"BEGIN { $x = 1 +; }\n"
		"               ~~\n",
	},
	{
		.name = "syn_bare_ident", /* bt */
		.src = "BEGIN { x = 1; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:11-12: ERROR: syntax error, unexpected =, expecting }\n"
		"BEGIN { x = 1; }\n"
		"          ~\n",
	},
	{
		.name = "syn_incdec_int", /* bt */
		.src = "BEGIN { ++1; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:9-12: ERROR: syntax error, unexpected integer\n"
		"BEGIN { ++1; }\n"
		"        ~~~\n",
	},
	{
		.name = "lex_bad_char", /* bt */
		.src = "BEGIN { $x = `; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:14-15: ERROR: invalid character '`'\n"
		"BEGIN { $x = `; }\n"
		"             ~\n"
		"stdin:1:14-16: ERROR: syntax error, unexpected ;\n"
		"BEGIN { $x = `; }\n"
		"             ~~\n",
	},
	{
		.name = "lex_unterminated_string", /* bt */
		.src = "BEGIN { $x = \"abc }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:14-20: ERROR: unterminated string\n"
		"BEGIN { $x = \"abc }\n"
		"             ~~~~~~\n"
		"stdin:1:14-20: ERROR: syntax error, unexpected end of file\n"
		"BEGIN { $x = \"abc }\n"
		"             ~~~~~~\n",
	},
	{
		.name = "lex_bad_escape", /* bt */
		.src = "BEGIN { $x = \"a\\q\"; }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:14-18: ERROR: invalid escape character '\\q'\n"
		"BEGIN { $x = \"a\\q\"; }\n"
		"             ~~~~\n",
	},
	{
		.name = "lex_unterminated_comment", /* bt */
		.src = "BEGIN { /* x ",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:9-14: ERROR: end of file during comment\n"
		"BEGIN { /* x \n"
		"        ~~~~~\n"
		"stdin:1:9-14: ERROR: syntax error, unexpected end of file, expecting }\n"
		"BEGIN { /* x \n"
		"        ~~~~~\n",
	},
	{
		.name = "nsecs_comm_typed", /* bpftrace 0.17 -d */
		.src = "BEGIN { @x = nsecs; @y = comm; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   builtin: nsecs\n"
		"  =\n"
		"   map: @y\n"
		"   builtin: comm\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x :: type[unsigned int64, ctx: 0]\n"
		"   builtin: nsecs :: type[unsigned int64, ctx: 0]\n"
		"  =\n"
		"   map: @y :: type[string[16], ctx: 0, AS(kernel)]\n"
		"   builtin: comm :: type[string[16], ctx: 0, AS(kernel)]\n",
		.diag = "",
	},
	{
		.name = "hist_typed", /* bpftrace 0.17 -d */
		.src = "BEGIN { @h = hist(1); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @h\n"
		"   call: hist\n"
		"    int: 1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @h :: type[hist, ctx: 0]\n"
		"   call: hist :: type[hist, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "string_key_typed", /* bpftrace 0.17 -d */
		.src = "BEGIN { @m[\"a\"] = 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @m\n"
		"    string: a\n"
		"   int: 1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @m :: type[int64, ctx: 0]\n"
		"    string: a :: type[string[2], ctx: 0, AS(kernel)]\n"
		"   int: 1 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "ubt_percent", /* ubt */
		.src = "BEGIN { printf(\"100%% %d\\n\", 1); exit() }",
		.ast = "Program\n"
		" BEGIN\n"
		"  call: printf\n"
		"   string: 100%% %d\\n\n"
		"   int: 1\n"
		"  call: exit\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  call: printf :: type[none, ctx: 0]\n"
		"   string: 100%% %d\\n :: type[string[10], ctx: 0]\n"
		"   int: 1 :: type[int64, ctx: 0]\n"
		"  call: exit :: type[none, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "ubt_multiline_error", /* ubt */
		.src = "BEGIN {\n"
		"  @x = 1;\n"
		"  @y = $nope;\n"
		"}",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   int: 1\n"
		"  =\n"
		"   map: @y\n"
		"   variable: $nope\n",
		.typed = NULL,
		.diag = "stdin:3:8-13: ERROR: Undefined or undeclared variable: $nope\n"
		"  @y = $nope;\n"
		"       ~~~~~\n",
	},
	/* ---- issue 3: the whole language (checked by hand; "bt" where bpftrace 0.17 agrees) ---- */
	{
		.name = "ubt_tuple", /* ubt */
		.src = "BEGIN { $t = (1, 2); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $t\n"
		"   tuple:\n"
		"    int: 1\n"
		"    int: 2\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $t :: type[(int64,int64), ctx: 0]\n"
		"   tuple:\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "err_unsupported_provider", /* ubt */
		.src = "kprobe:f { }",
		.ast = "Program\n"
		" kprobe:f\n",
		.typed = NULL,
		.diag = "stdin:1:1-9: ERROR: kprobe probes need the kernel tracer: ubt traces user space only\n"
		"kprobe:f { }\n"
		"~~~~~~~~\n"
		"HINT: run this probe with bpftrace; ubt supports uprobe, uretprobe, usdt, BEGIN, END, interval and profile\n",
	},
	{
		.name = "lang_while_break_continue", /* ubt */
		.src = "BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 2) { continue; } if ($i == 4) { break; } } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $i\n"
		"   int: 0\n"
		"  while(\n"
		"   <\n"
		"    variable: $i\n"
		"    int: 5\n"
		"   )\n"
		"    variable: $i\n"
		"     ++\n"
		"    if\n"
		"     ==\n"
		"      variable: $i\n"
		"      int: 2\n"
		"     then\n"
		"      continue\n"
		"    if\n"
		"     ==\n"
		"      variable: $i\n"
		"      int: 4\n"
		"     then\n"
		"      break\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $i :: type[int64, ctx: 0]\n"
		"   int: 0 :: type[int64, ctx: 0]\n"
		"  while(\n"
		"   < :: type[int64, ctx: 0]\n"
		"    variable: $i :: type[int64, ctx: 0]\n"
		"    int: 5 :: type[int64, ctx: 0]\n"
		"   )\n"
		"    variable: $i :: type[int64, ctx: 0]\n"
		"     ++\n"
		"    if\n"
		"     == :: type[int64, ctx: 0]\n"
		"      variable: $i :: type[int64, ctx: 0]\n"
		"      int: 2 :: type[int64, ctx: 0]\n"
		"     then\n"
		"      continue\n"
		"    if\n"
		"     == :: type[int64, ctx: 0]\n"
		"      variable: $i :: type[int64, ctx: 0]\n"
		"      int: 4 :: type[int64, ctx: 0]\n"
		"     then\n"
		"      break\n",
		.diag = "",
	},
	{
		.name = "lang_unroll", /* ubt */
		.src = "BEGIN { unroll(3) { @x++; } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  unroll\n"
		"   int: 3\n"
		"   block\n"
		"    map: @x\n"
		"     ++\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  unroll\n"
		"   int: 3 :: type[int64, ctx: 0]\n"
		"   block\n"
		"    map: @x :: type[int64, ctx: 0]\n"
		"     ++\n",
		.diag = "",
	},
	{
		.name = "lang_for_range", /* ubt */
		.src = "BEGIN { for ($i : 1..4) { @s += $i; } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  for\n"
		"   decl\n"
		"    variable: $i\n"
		"   range\n"
		"    int: 1\n"
		"    int: 4\n"
		"   stmts\n"
		"    =\n"
		"     map: @s\n"
		"     +\n"
		"      map: @s\n"
		"      variable: $i\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  for\n"
		"   decl\n"
		"    variable: $i :: type[int64, ctx: 0]\n"
		"   range\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 4 :: type[int64, ctx: 0]\n"
		"   stmts\n"
		"    =\n"
		"     map: @s :: type[unsigned int64, ctx: 0]\n"
		"     + :: type[unsigned int64, ctx: 0]\n"
		"      map: @s :: type[unsigned int64, ctx: 0]\n"
		"      variable: $i :: type[int64, ctx: 0]\n",
		.diag = "stdin:1:30-32: WARNING: arithmetic on integers of different signs: 'unsigned int64' and 'int64' can lead to undefined behavior\n"
		"BEGIN { for ($i : 1..4) { @s += $i; } }\n"
		"                             ~~\n",
	},
	{
		.name = "lang_for_map", /* ubt */
		.src = "BEGIN { @m[1, 2] = 5; for ($kv : @m) { printf(\"%d %d\\n\", $kv.0.1, $kv.1); } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @m\n"
		"    int: 1\n"
		"    int: 2\n"
		"   int: 5\n"
		"  for\n"
		"   decl\n"
		"    variable: $kv\n"
		"   expr\n"
		"    map: @m\n"
		"   stmts\n"
		"    call: printf\n"
		"     string: %d %d\\n\n"
		"     .\n"
		"      .\n"
		"       variable: $kv\n"
		"       0\n"
		"      1\n"
		"     .\n"
		"      variable: $kv\n"
		"      1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @m :: type[int64, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"   int: 5 :: type[int64, ctx: 0]\n"
		"  for\n"
		"   decl\n"
		"    variable: $kv :: type[((unsigned int64,unsigned int64),int64), ctx: 0]\n"
		"   expr\n"
		"    map: @m :: type[int64, ctx: 0]\n"
		"   stmts\n"
		"    call: printf :: type[none, ctx: 0]\n"
		"     string: %d %d\\n :: type[string[7], ctx: 0]\n"
		"     .\n"
		"      .\n"
		"       variable: $kv :: type[((unsigned int64,unsigned int64),int64), ctx: 0]\n"
		"       0\n"
		"      1\n"
		"     .\n"
		"      variable: $kv :: type[((unsigned int64,unsigned int64),int64), ctx: 0]\n"
		"      1\n",
		.diag = "",
	},
	{
		.name = "lang_let", /* ubt */
		.src = "BEGIN { let $a: uint16 = 7; let $b; $b = \"x\"; let $c = (int8)1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  let\n"
		"   variable: $a\n"
		"   type: uint16\n"
		"   int: 7\n"
		"  let\n"
		"   variable: $b\n"
		"  =\n"
		"   variable: $b\n"
		"   string: x\n"
		"  let\n"
		"   variable: $c\n"
		"   (int8)\n"
		"    int: 1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  let\n"
		"   variable: $a :: type[unsigned int16, ctx: 0]\n"
		"   type: uint16\n"
		"   int: 7 :: type[int64, ctx: 0]\n"
		"  let\n"
		"   variable: $b :: type[string[2], ctx: 0, AS(kernel)]\n"
		"  =\n"
		"   variable: $b :: type[string[2], ctx: 0, AS(kernel)]\n"
		"   string: x :: type[string[2], ctx: 0, AS(kernel)]\n"
		"  let\n"
		"   variable: $c :: type[int64, ctx: 0]\n"
		"   (int8)\n"
		"    int: 1 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_return", /* ubt */
		.src = "BEGIN { if (1) { return; } @x = 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  if\n"
		"   int: 1\n"
		"   then\n"
		"    return\n"
		"  =\n"
		"   map: @x\n"
		"   int: 1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  if\n"
		"   int: 1 :: type[int64, ctx: 0]\n"
		"   then\n"
		"    return\n"
		"  =\n"
		"   map: @x :: type[int64, ctx: 0]\n"
		"   int: 1 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_nested_block", /* ubt */
		.src = "BEGIN { { $x = 1; } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   int: 1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   int: 1 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_casts", /* ubt */
		.src = "BEGIN { $a = (uint8)1; $b = (int64 *)0; $c = (uint32 **)$b; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $a\n"
		"   (uint8)\n"
		"    int: 1\n"
		"  =\n"
		"   variable: $b\n"
		"   (int64*)\n"
		"    int: 0\n"
		"  =\n"
		"   variable: $c\n"
		"   (uint32**)\n"
		"    variable: $b\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $a :: type[unsigned int8, ctx: 0]\n"
		"   (uint8)\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $b :: type[int64 *, ctx: 0]\n"
		"   (int64*)\n"
		"    int: 0 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $c :: type[unsigned int32 * *, ctx: 0]\n"
		"   (uint32**)\n"
		"    variable: $b :: type[int64 *, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_struct_fields", /* ubt */
		.src = "struct S { int a; char name[8]; struct S *next; long arr[2]; }; BEGIN { $p = (struct S *)0; @a = $p->a; @n = $p->next->arr[1]; $s = *$p; @b = $s.a; printf(\"%s\\n\", $p->name); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $p\n"
		"   (struct S*)\n"
		"    int: 0\n"
		"  =\n"
		"   map: @a\n"
		"   .\n"
		"    dereference\n"
		"     variable: $p\n"
		"    a\n"
		"  =\n"
		"   map: @n\n"
		"   []\n"
		"    .\n"
		"     dereference\n"
		"      .\n"
		"       dereference\n"
		"        variable: $p\n"
		"       next\n"
		"     arr\n"
		"    int: 1\n"
		"  =\n"
		"   variable: $s\n"
		"   dereference\n"
		"    variable: $p\n"
		"  =\n"
		"   map: @b\n"
		"   .\n"
		"    variable: $s\n"
		"    a\n"
		"  call: printf\n"
		"   string: %s\\n\n"
		"   .\n"
		"    dereference\n"
		"     variable: $p\n"
		"    name\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $p :: type[struct S *, ctx: 0]\n"
		"   (struct S*)\n"
		"    int: 0 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @a :: type[int64, ctx: 0]\n"
		"   .\n"
		"    dereference\n"
		"     variable: $p :: type[struct S *, ctx: 0]\n"
		"    a\n"
		"  =\n"
		"   map: @n :: type[int64, ctx: 0]\n"
		"   []\n"
		"    .\n"
		"     dereference\n"
		"      .\n"
		"       dereference\n"
		"        variable: $p :: type[struct S *, ctx: 0]\n"
		"       next\n"
		"     arr\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $s :: type[struct S, ctx: 0]\n"
		"   dereference\n"
		"    variable: $p :: type[struct S *, ctx: 0]\n"
		"  =\n"
		"   map: @b :: type[int64, ctx: 0]\n"
		"   .\n"
		"    variable: $s :: type[struct S, ctx: 0]\n"
		"    a\n"
		"  call: printf :: type[none, ctx: 0]\n"
		"   string: %s\\n :: type[string[4], ctx: 0]\n"
		"   .\n"
		"    dereference\n"
		"     variable: $p :: type[struct S *, ctx: 0]\n"
		"    name\n",
		.diag = "",
	},
	{
		.name = "lang_union_bitfield", /* ubt */
		.src = "union U { int i; struct { unsigned x : 4; unsigned y : 4; } bits; }; BEGIN { $u = (union U *)0; @y = $u->bits.y; @i = $u->i; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $u\n"
		"   (union U*)\n"
		"    int: 0\n"
		"  =\n"
		"   map: @y\n"
		"   .\n"
		"    .\n"
		"     dereference\n"
		"      variable: $u\n"
		"     bits\n"
		"    y\n"
		"  =\n"
		"   map: @i\n"
		"   .\n"
		"    dereference\n"
		"     variable: $u\n"
		"    i\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $u :: type[union U *, ctx: 0]\n"
		"   (union U*)\n"
		"    int: 0 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @y :: type[unsigned int64, ctx: 0]\n"
		"   .\n"
		"    .\n"
		"     dereference\n"
		"      variable: $u :: type[union U *, ctx: 0]\n"
		"     bits\n"
		"    y\n"
		"  =\n"
		"   map: @i :: type[int64, ctx: 0]\n"
		"   .\n"
		"    dereference\n"
		"     variable: $u :: type[union U *, ctx: 0]\n"
		"    i\n",
		.diag = "",
	},
	{
		.name = "lang_enum_define", /* ubt; enumerators are uint64 as in bpftrace */
		.src = "#define N 4\n"
		"enum e { A, B = 10, C }; BEGIN { @x = N + B + C; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   +\n"
		"    +\n"
		"     identifier: N\n"
		"     identifier: B\n"
		"    identifier: C\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x :: type[unsigned int64, ctx: 0]\n"
		"   + :: type[unsigned int64, ctx: 0]\n"
		"    + :: type[unsigned int64, ctx: 0]\n"
		"     identifier: N :: type[int64, ctx: 0]\n"
		"     identifier: B :: type[unsigned int64, ctx: 0]\n"
		"    identifier: C :: type[unsigned int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_params", /* ubt */
		.src = "BEGIN { @a = $1; @n = $#; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a\n"
		"   param: $1\n"
		"  =\n"
		"   map: @n\n"
		"   param: $#\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a :: type[int64, ctx: 0]\n"
		"   param: $1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @n :: type[int64, ctx: 0]\n"
		"   param: $# :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_literals", /* ubt */
		.src = "BEGIN { $a = 0x10 + 010 + 1_000 + 1e3 + 'a' + '\\n'; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $a\n"
		"   +\n"
		"    +\n"
		"     +\n"
		"      +\n"
		"       +\n"
		"        int: 16\n"
		"        int: 8\n"
		"       int: 1000\n"
		"      int: 1000\n"
		"     int: 97\n"
		"    int: 10\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $a :: type[int64, ctx: 0]\n"
		"   + :: type[int64, ctx: 0]\n"
		"    + :: type[int64, ctx: 0]\n"
		"     + :: type[int64, ctx: 0]\n"
		"      + :: type[int64, ctx: 0]\n"
		"       + :: type[int64, ctx: 0]\n"
		"        int: 16 :: type[int64, ctx: 0]\n"
		"        int: 8 :: type[int64, ctx: 0]\n"
		"       int: 1000 :: type[int64, ctx: 0]\n"
		"      int: 1000 :: type[int64, ctx: 0]\n"
		"     int: 97 :: type[int64, ctx: 0]\n"
		"    int: 10 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_sizeof", /* ubt */
		.src = "struct P { int a; long b; }; BEGIN { @a = sizeof(struct P); @b = sizeof(uint16); @c = sizeof(@a); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a\n"
		"   call: sizeof\n"
		"    identifier: struct P\n"
		"  =\n"
		"   map: @b\n"
		"   call: sizeof\n"
		"    identifier: uint16\n"
		"  =\n"
		"   map: @c\n"
		"   call: sizeof\n"
		"    map: @a\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @a :: type[unsigned int64, ctx: 0]\n"
		"   call: sizeof :: type[unsigned int64, ctx: 0]\n"
		"    identifier: struct P :: type[struct P, ctx: 0]\n"
		"  =\n"
		"   map: @b :: type[unsigned int64, ctx: 0]\n"
		"   call: sizeof :: type[unsigned int64, ctx: 0]\n"
		"    identifier: uint16 :: type[unsigned int16, ctx: 0]\n"
		"  =\n"
		"   map: @c :: type[unsigned int64, ctx: 0]\n"
		"   call: sizeof :: type[unsigned int64, ctx: 0]\n"
		"    map: @a :: type[unsigned int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_config", /* ubt */
		.src = "config = { max_map_keys = 16; stack_mode = perf; } BEGIN { }",
		.ast = "Program\n"
		" config\n"
		"  =\n"
		"   identifier: max_map_keys\n"
		"   int: 16\n"
		"  =\n"
		"   identifier: stack_mode\n"
		"   identifier: perf\n"
		" BEGIN\n",
		.typed = "Program\n"
		" config\n"
		"  =\n"
		"   identifier: max_map_keys :: type[none, ctx: 0]\n"
		"   int: 16 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   identifier: stack_mode :: type[none, ctx: 0]\n"
		"   identifier: perf :: type[none, ctx: 0]\n"
		" BEGIN\n",
		.diag = "",
	},
	{
		.name = "lang_ternary_colon_in_block", /* ubt */
		.src = "BEGIN { $x = 1 ? 2:3; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   ?:\n"
		"    int: 1\n"
		"    int: 2\n"
		"    int: 3\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x :: type[int64, ctx: 0]\n"
		"   ?:\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"    int: 3 :: type[int64, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_providers", /* ubt */
		.src = "usdt:./a:spdk:poll, U:./a:poll, uretprobe:./a:f, interval:ms:100, profile:hz:99 { @n = count(); }",
		.ast = "Program\n"
		" usdt:./a:spdk:poll\n"
		" usdt:./a:poll\n"
		" uretprobe:./a:f\n"
		" interval:ms:100\n"
		" profile:hz:99\n"
		"  =\n"
		"   map: @n\n"
		"   call: count\n",
		.typed = "Program\n"
		" usdt:./a:spdk:poll\n"
		" usdt:./a:poll\n"
		" uretprobe:./a:f\n"
		" interval:ms:100\n"
		" profile:hz:99\n"
		"  =\n"
		"   map: @n :: type[count, ctx: 0]\n"
		"   call: count :: type[count, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_wildcards", /* ubt */
		.src = "uprobe:./a:read*, uprobe:/usr/lib/*/libc.so.6:mall*c { @n = count(); }",
		.ast = "Program\n"
		" uprobe:./a:read*\n"
		" uprobe:/usr/lib/*/libc.so.6:mall*c\n"
		"  =\n"
		"   map: @n\n"
		"   call: count\n",
		.typed = "Program\n"
		" uprobe:./a:read*\n"
		" uprobe:/usr/lib/*/libc.so.6:mall*c\n"
		"  =\n"
		"   map: @n :: type[count, ctx: 0]\n"
		"   call: count :: type[count, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_ptr_arith", /* ubt */
		.src = "BEGIN { $p = (int32 *)8; $q = $p + 1; @d = $q - $p; @e = $q > $p; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $p\n"
		"   (int32*)\n"
		"    int: 8\n"
		"  =\n"
		"   variable: $q\n"
		"   +\n"
		"    variable: $p\n"
		"    int: 1\n"
		"  =\n"
		"   map: @d\n"
		"   -\n"
		"    variable: $q\n"
		"    variable: $p\n"
		"  =\n"
		"   map: @e\n"
		"   >\n"
		"    variable: $q\n"
		"    variable: $p\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $p :: type[int32 *, ctx: 0]\n"
		"   (int32*)\n"
		"    int: 8 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   variable: $q :: type[int32 *, ctx: 0]\n"
		"   + :: type[int32 *, ctx: 0]\n"
		"    variable: $p :: type[int32 *, ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"  =\n"
		"   map: @d :: type[int64, ctx: 0]\n"
		"   - :: type[int64, ctx: 0]\n"
		"    variable: $q :: type[int32 *, ctx: 0]\n"
		"    variable: $p :: type[int32 *, ctx: 0]\n"
		"  =\n"
		"   map: @e :: type[unsigned int64, ctx: 0]\n"
		"   > :: type[unsigned int64, ctx: 0]\n"
		"    variable: $q :: type[int32 *, ctx: 0]\n"
		"    variable: $p :: type[int32 *, ctx: 0]\n",
		.diag = "",
	},
	{
		.name = "lang_tuple_value", /* ubt */
		.src = "BEGIN { @t[1] = (2, \"three\"); $t = (1, (2, \"x\")); @s = $t.1.1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @t\n"
		"    int: 1\n"
		"   tuple:\n"
		"    int: 2\n"
		"    string: three\n"
		"  =\n"
		"   variable: $t\n"
		"   tuple:\n"
		"    int: 1\n"
		"    tuple:\n"
		"     int: 2\n"
		"     string: x\n"
		"  =\n"
		"   map: @s\n"
		"   .\n"
		"    .\n"
		"     variable: $t\n"
		"     1\n"
		"    1\n",
		.typed = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @t :: type[(int64,string[6]), ctx: 0]\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"   tuple:\n"
		"    int: 2 :: type[int64, ctx: 0]\n"
		"    string: three :: type[string[6], ctx: 0, AS(kernel)]\n"
		"  =\n"
		"   variable: $t :: type[(int64,(int64,string[2])), ctx: 0]\n"
		"   tuple:\n"
		"    int: 1 :: type[int64, ctx: 0]\n"
		"    tuple:\n"
		"     int: 2 :: type[int64, ctx: 0]\n"
		"     string: x :: type[string[2], ctx: 0, AS(kernel)]\n"
		"  =\n"
		"   map: @s :: type[string[2], ctx: 0]\n"
		"   .\n"
		"    .\n"
		"     variable: $t :: type[(int64,(int64,string[2])), ctx: 0]\n"
		"     1\n"
		"    1\n",
		.diag = "",
	},
	{
		.name = "err_let_shadow", /* ubt */
		.src = "BEGIN { let $x = 1; { let $x = 2; } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  let\n"
		"   variable: $x\n"
		"   int: 1\n"
		"  let\n"
		"   variable: $x\n"
		"   int: 2\n",
		.typed = NULL,
		.diag = "stdin:1:23-33: ERROR: Variable $x was already declared\n"
		"BEGIN { let $x = 1; { let $x = 2; } }\n"
		"                      ~~~~~~~~~~\n",
	},
	{
		.name = "err_loop_var_after", /* ubt */
		.src = "BEGIN { for ($kv : @m) { } @x = $kv; } END { @m[1] = 1; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  for\n"
		"   decl\n"
		"    variable: $kv\n"
		"   expr\n"
		"    map: @m\n"
		"   stmts\n"
		"  =\n"
		"   map: @x\n"
		"   variable: $kv\n"
		" END\n"
		"  =\n"
		"   map: @m\n"
		"    int: 1\n"
		"   int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:33-36: ERROR: Undefined or undeclared variable: $kv\n"
		"BEGIN { for ($kv : @m) { } @x = $kv; } END { @m[1] = 1; }\n"
		"                                ~~~\n",
	},
	{
		.name = "err_cast_struct_value", /* ubt */
		.src = "struct S { int a; }; BEGIN { $x = (struct S)\"a\"; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $x\n"
		"   (struct S)\n"
		"    string: a\n",
		.typed = NULL,
		.diag = "stdin:1:35-48: ERROR: Casts are not supported for type: \"string[2]\"\n"
		"struct S { int a; }; BEGIN { $x = (struct S)\"a\"; }\n"
		"                                  ~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_field_unknown", /* ubt */
		.src = "struct S { int a; }; BEGIN { $p = (struct S *)0; @x = $p->zz; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $p\n"
		"   (struct S*)\n"
		"    int: 0\n"
		"  =\n"
		"   map: @x\n"
		"   .\n"
		"    dereference\n"
		"     variable: $p\n"
		"    zz\n",
		.typed = NULL,
		.diag = "stdin:1:55-61: ERROR: Struct/union of type 'struct S' does not contain a field named 'zz'\n"
		"struct S { int a; }; BEGIN { $p = (struct S *)0; @x = $p->zz; }\n"
		"                                                      ~~~~~~\n",
	},
	{
		.name = "err_index_void", /* ubt */
		.src = "BEGIN { $p = (void *)0; @x = $p[1]; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $p\n"
		"   (void*)\n"
		"    int: 0\n"
		"  =\n"
		"   map: @x\n"
		"   []\n"
		"    variable: $p\n"
		"    int: 1\n",
		.typed = NULL,
		.diag = "stdin:1:30-35: ERROR: The array index operator [] can only be used on arrays and pointers, found void pointer.\n"
		"BEGIN { $p = (void *)0; @x = $p[1]; }\n"
		"                             ~~~~~\n",
	},
	{
		.name = "err_cdef_redefinition", /* ubt */
		.src = "struct S { int a; }; struct S { int b; }; BEGIN { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:31-32: ERROR: redefinition of struct S\n"
		"struct S { int a; }; struct S { int b; }; BEGIN { }\n"
		"                              ~\n",
	},
	{
		.name = "err_unroll_big", /* ubt */
		.src = "BEGIN { unroll(1000) { } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  unroll\n"
		"   int: 1000\n"
		"   block\n",
		.typed = NULL,
		.diag = "stdin:1:9-21: ERROR: unroll maximum value is 100\n"
		"BEGIN { unroll(1000) { } }\n"
		"        ~~~~~~~~~~~~\n",
	},
	{
		.name = "err_for_range_type", /* ubt */
		.src = "BEGIN { for ($i : \"a\"..3) { } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  for\n"
		"   decl\n"
		"    variable: $i\n"
		"   range\n"
		"    string: a\n"
		"    int: 3\n"
		"   stmts\n",
		.typed = NULL,
		.diag = "stdin:1:19-22: ERROR: Loop range requires an integer, found string\n"
		"BEGIN { for ($i : \"a\"..3) { } }\n"
		"                  ~~~\n",
	},
	{
		.name = "err_while_cond_string", /* ubt */
		.src = "BEGIN { while (\"s\") { } }",
		.ast = "Program\n"
		" BEGIN\n"
		"  while(\n"
		"   string: s\n"
		"   )\n",
		.typed = NULL,
		.diag = "stdin:1:9-20: ERROR: Invalid condition in while(): string\n"
		"BEGIN { while (\"s\") { } }\n"
		"        ~~~~~~~~~~~\n",
	},
	{
		.name = "err_interval_rate", /* ubt */
		.src = "interval:s:0 { }",
		.ast = NULL,
		.typed = NULL,
		.diag = "stdin:1:1-13: ERROR: Invalid rate of interval probe: '0'\n"
		"interval:s:0 { }\n"
		"~~~~~~~~~~~~\n",
	},
	{
		.name = "uprobe_offset", /* ubt: attach/resolve/resolve.c checks the offset */
		.src = "uprobe:./a:f+0x10 { }",
		.ast = "Program\n"
		" uprobe:./a:f+16\n",
		.typed = "Program\n"
		" uprobe:./a:f+16\n",
		.diag = "",
	},
	{
		.name = "err_uretprobe_offset", /* ubt */
		.src = "uretprobe:./a:f+0x10 { }",
		.ast = "Program\n"
		" uretprobe:./a:f+16\n",
		.typed = NULL,
		.diag = "stdin:1:1-21: ERROR: uretprobe probes at an offset or address are not supported\n"
		"uretprobe:./a:f+0x10 { }\n"
		"~~~~~~~~~~~~~~~~~~~~\n",
	},
	{
		.name = "err_tuple_elem_void", /* ubt */
		.src = "BEGIN { $t = (1, exit()); }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   variable: $t\n"
		"   tuple:\n"
		"    int: 1\n"
		"    call: exit\n",
		.typed = NULL,
		.diag = "stdin:1:18-24: ERROR: Invalid expression in a tuple: no value\n"
		"BEGIN { $t = (1, exit()); }\n"
		"                 ~~~~~~\n"
		"stdin:1:12-13: ERROR: Undefined variable: $t\n"
		"BEGIN { $t = (1, exit()); }\n"
		"           ~\n"
		"stdin:1:14-25: ERROR: Invalid expression for assignment: none\n"
		"BEGIN { $t = (1, exit()); }\n"
		"             ~~~~~~~~~~~\n",
	},
	{
		.name = "err_param_zero", /* ubt */
		.src = "BEGIN { @x = $0; }",
		.ast = "Program\n"
		" BEGIN\n"
		"  =\n"
		"   map: @x\n"
		"   param: $0\n",
		.typed = NULL,
		.diag = "stdin:1:14-16: ERROR: $0 is not a positional parameter (they start at $1)\n"
		"BEGIN { @x = $0; }\n"
		"             ~~\n",
	},
	{
		.name = "err_config_value", /* ubt */
		.src = "config = { max_map_keys = @x } BEGIN { }",
		.ast = "Program\n"
		" config\n"
		"  =\n"
		"   identifier: max_map_keys\n"
		"   map: @x\n"
		" BEGIN\n",
		.typed = NULL,
		.diag = "stdin:1:27-29: ERROR: Invalid value for config variable max_map_keys: a number, string or name\n"
		"config = { max_map_keys = @x } BEGIN { }\n"
		"                          ~~\n",
	},
};
