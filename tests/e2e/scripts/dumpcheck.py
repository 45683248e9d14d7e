#!/usr/bin/env python3
"""dumpcheck.py FILE - checks ubt's dumps of the attach stage (-d sites,
-d link, -d rsys) in FILE (ubt's stderr) and prints what it found, one fact
a line, for tests/e2e/dump.test to expect:

  sites: N, complete: N              every site block has its header (address,
                                     name, file), jump or `breakpoint: REASON`
                                     with a reason, displaced instructions whose
                                     bytes add up to the displaced length, a
                                     trampoline in the main code or an island,
                                     and patch bytes as long as the displaced
                                     bytes: e9 then cc fill for a jump, cc for
                                     a breakpoint
  site NAME: breakpoint: REASON      each breakpoint site, with its reason
  site NAME: jump
  link: WHAT: N sections, M symbols, inside: yes|no
                                     every section and symbol lies inside the
                                     image, sections in address order, no
                                     overlap
  link section INPUT NAME PERMS
  rsys: N calls, well-formed: N      each `rsys: pid P: NAME(ARGS) = RESULT`
  rsys NAME ok|ERRNO                 each call in order (consecutive repeats
                                     are printed once)
  rsys: munmaps of an earlier mmap: K of K
  rsys: code mapped at the linked base: yes|no

A block that breaks a rule prints `bad: ...` with the line.
"""
import re
import sys

HEX = r'0x[0-9a-f]+'


def check_sites(lines):
    blocks, cur = [], None
    announced = 0
    for line in lines:
        m = re.fullmatch(r'(\d+) (?:more )?sites?(?: \(a library loaded after attach\))?', line)
        if m:
            announced += int(m.group(1))
            continue
        m = re.fullmatch(r'site (\d+): (' + HEX + r') (.+) \((\S+)\)', line)
        if m:
            cur = {'name': m.group(3), 'lines': []}
            blocks.append(cur)
            continue
        if cur is not None and line.startswith('  '):
            cur['lines'].append(line)
        else:
            cur = None
    complete = 0
    for b in blocks:
        name, body = b['name'], b['lines']
        kind = reason = None
        displaced = ninsns = None
        insn_bytes, patch, tramp = 0, None, False
        for line in body:
            if line == '  jump':
                kind = 'jump'
            elif line.startswith('  breakpoint: '):
                kind, reason = 'breakpoint', line[len('  breakpoint: '):].strip()
            elif m := re.fullmatch(r'  displaced: (\d+) bytes?, (\d+) instructions?', line):
                displaced, ninsns = int(m.group(1)), int(m.group(2))
            elif m := re.fullmatch(r'    ' + HEX + r':((?: [0-9a-f]{2})+) +\S.*', line):
                insn_bytes += len(m.group(1).split())
                ninsns = ninsns - 1 if ninsns is not None else None
            elif re.fullmatch(r'  trampoline: ' + HEX + r' \((main code|island \d+) at ' + HEX +
                              r'\)', line):
                tramp = True
            elif m := re.fullmatch(r'  patch:((?: [0-9a-f]{2})+)', line):
                patch = m.group(1).split()
        ok = True
        why = []
        if kind is None:
            why.append('neither jump nor breakpoint')
        if kind == 'breakpoint' and not reason:
            why.append('a breakpoint without its reason')
        if displaced is None or ninsns != 0 or insn_bytes != displaced:
            why.append('displaced instructions do not add up')
        if not tramp:
            why.append('no trampoline')
        if patch is None or displaced is None or len(patch) != displaced:
            why.append('patch bytes missing or not as long as the displaced bytes')
        elif kind == 'jump' and (patch[0] != 'e9' or any(x != 'cc' for x in patch[5:])):
            why.append('a jump patch that is not e9 rel32 then cc fill')
        elif kind == 'breakpoint' and patch[0] != 'cc':
            why.append('a breakpoint patch that does not start with cc')
        if why:
            ok = False
            print(f'bad: site {name}: {"; ".join(why)}')
        complete += ok
        if kind == 'breakpoint':
            print(f'site {name}: breakpoint: {reason}')
        elif kind == 'jump':
            print(f'site {name}: jump')
    if blocks:
        if announced != len(blocks):
            print(f'bad: {announced} sites announced, {len(blocks)} printed')
        print(f'sites: {len(blocks)}, complete: {complete}')


def check_link(lines):
    images, cur = [], None
    for line in lines:
        m = re.fullmatch(r'link: (.+): (' + HEX + r'), (\d+) bytes', line)
        if m:
            cur = {'what': m.group(1), 'base': int(m.group(2), 16), 'size': int(m.group(3)),
                   'secs': [], 'syms': []}
            images.append(cur)
            continue
        if cur is None or not line.startswith('  '):
            cur = None
            continue
        if m := re.fullmatch(r'    (' + HEX + r') +(\d+) (r-x|rw-|r--) (\S+) +(\S+)', line):
            cur['secs'].append((int(m.group(1), 16), int(m.group(2)), m.group(3), m.group(4),
                                m.group(5)))
        elif m := re.fullmatch(r'    (' + HEX + r') (\S+)', line):
            cur['syms'].append((int(m.group(1), 16), m.group(2)))
    for img in images:
        lo, hi = img['base'], img['base'] + img['size']
        inside = all(lo <= a and a + n <= hi for a, n, *_ in img['secs'])
        inside &= all(lo <= a < hi for a, _ in img['syms'])
        ends = [a + n for a, n, *_ in img['secs']]
        inside &= all(img['secs'][i + 1][0] >= ends[i] for i in range(len(ends) - 1))
        print(f'link: {img["what"]}: {len(img["secs"])} sections, {len(img["syms"])} symbols, '
              f'inside: {"yes" if inside else "no"}')
        for _, _, perms, inp, name in img['secs']:
            print(f'link section {inp} {name} {perms}')
        for _, name in img['syms']:
            print(f'link symbol {name}')
    return images


def check_rsys(lines, images):
    calls = [l for l in lines if l.startswith('rsys: ')]
    if not calls:
        return
    good, mapped, munmaps, matched, code_ok = 0, [], 0, 0, None
    last = None
    base = next((i['base'] for i in images if i['what'] == 'probes run in the target'), None)
    for line in calls:
        m = re.fullmatch(r'rsys: pid \d+: (\w+)\((.*)\) = (-1 (E[A-Z0-9]+) \(.+\)|' + HEX +
                         r'|-?\d+|\? \(.+\))', line)
        if not m:
            print(f'bad: {line}')
            continue
        good += 1
        name, args, err = m.group(1), m.group(2).split(', '), m.group(4)
        res = m.group(3)
        shown = f'rsys {name} {err or "ok"}'
        if shown != last:
            print(shown)
        last = shown
        if name == 'mmap' and not err:
            mapped.append((int(res, 16), int(args[1])))
            if 'PROT_EXEC' in args[2] and 'MAP_SHARED' in args[3] and base is not None:
                code_ok = int(res, 16) == base
        if name == 'munmap' and not err:
            munmaps += 1
            matched += (int(args[0], 16), int(args[1])) in mapped
    print(f'rsys: {len(calls)} calls, well-formed: {good}')
    if munmaps:
        print(f'rsys: munmaps of an earlier mmap: {matched} of {munmaps}')
    if matched != munmaps:
        print('bad: a munmap of a range no mmap returned')
    if code_ok is not None:
        print(f'rsys: code mapped at the linked base: {"yes" if code_ok else "no"}')


def main():
    with open(sys.argv[1], errors='replace') as f:
        lines = f.read().splitlines()
    check_sites(lines)
    images = check_link(lines)
    check_rsys(lines, images)


if __name__ == '__main__':
    main()
