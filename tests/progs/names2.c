/*
 * names2.c - the second static function called `helper` of prog_names
 * (names.c): two definitions of one local name.
 */
static volatile int sink2;

static int __attribute__((noinline)) helper(int x)
{
	sink2 += x;
	return x + 3;
}

int names2_helper(int x)
{
	return helper(x);
}
