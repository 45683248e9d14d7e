"""tests/lib/maptext.py - map output made comparable between tracers.

bpftrace leaves the order of map entries with equal values unspecified, so
the runners (tests/e2e/run.py, tests/diff/run.py) sort each run of
consecutive entry lines of one map with one value before comparing.
"""


def sort_ties(lines, map_line):
    """lines with every run of consecutive lines that map_line (a regex
    whose groups are the map's name and the value) matches with equal
    groups sorted; other lines keep their place."""
    out, i = [], 0
    while i < len(lines):
        m = map_line.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines):
            n = map_line.match(lines[j])
            if not n or n.groups() != m.groups():
                break
            j += 1
        out.extend(sorted(lines[i:j]))
        i = j
    return out
