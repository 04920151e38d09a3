#!/usr/bin/env python3
"""When did levels 3 and 4 get their first file during a load, and how many L1->L2 compactions ran
with no level-3 file in their key range (so their level-2 outputs had no grandparents to align to)?
Input: `ldb manifest_dump --path=DB/MANIFEST-N --verbose --hex` output. Flushes are counted as edits
adding level-0 files and deleting none.
Usage: manifest_timeline.py m.txt"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifest_cuts as m  # noqa: E402

edits = m.parse(sys.argv[1])
levels = {l: {} for l in range(7)}
l2c = 0; first_l3 = None; nogp_after = 0; nogp_before = 0; flushes = 0; first_l3_flush = None; first_l4_flush=None; first_l4=None
for e in edits:
    dn = {n for _, n in e['del']}
    new = [a for a in e['add'] if a[1] not in dn]
    if any(a[0] == 0 for a in e['add']) and not e['del']:
        flushes += 1
    if e['del'] and new and new[0][0] == 2:
        l2c += 1
        ins = [levels[l][n] for l, n in e['del'] if n in levels[l]]
        lo = min(f[3] for f in ins); hi = max(f[4] for f in ins)
        gp = m.overlapping(levels[3], lo, hi)
        if not gp:
            if first_l3 is None: nogp_before += 1
            else: nogp_after += 1
    for l, n in e['del']: levels[l].pop(n, None)
    for a in e['add']: levels[a[0]][a[1]] = a
    if first_l3 is None and levels[3]:
        first_l3 = l2c; first_l3_flush = flushes
    if first_l4 is None and levels[4]:
        first_l4_flush = flushes
print(f"flushes={flushes} L1->L2 compactions={l2c}; L3 first file after flush {first_l3_flush} (L2 compaction #{first_l3}); L2 compactions w/o L3 overlap: {nogp_before} before, {nogp_after} after; L4 first file after flush {first_l4_flush}")
