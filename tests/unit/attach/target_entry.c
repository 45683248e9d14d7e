/*
 * target_entry.c - a target for tracee_spawn() in tests/unit/attach.
 *
 * test_attach starts it stopped at its ELF entry point, checks that main()
 * has not run (te_marker is still 0), stores 7 in te_marker and releases
 * it.  The exit status tells what main() found: 42 = the value written at
 * the entry stop, 3 = untouched, 4 = anything else.
 */
volatile int te_marker;

int main(void)
{
	int before = te_marker;
	te_marker = 0x5eed;
	if (before == 7)
		return 42;
	return before == 0 ? 3 : 4;
}
