#!/usr/bin/env python3
"""Replays a MANIFEST (dumped by RocksDB 7.8's `ldb manifest_dump --verbose --hex`) and explains
how every compaction cut its outputs, per output level, for KvEngine and RocksDB alike.

Usage: ldb manifest_dump --path=DB/MANIFEST-N --verbose --hex > m.txt
       manifest_cuts.py m.txt [--target 2097152] [--unaligned]

For each compaction (an edit that deletes files and adds new ones at level L >= 1) it looks at the
version just before the edit: the grandparents (files of level L+1 overlapping the inputs' key
range), and whether the output is bottommost (no deeper file overlaps). Every output but the last
of a compaction ended because of a cut; it is classified by its size against the rules of
CompactionOutputs::ShouldStopBefore (PR 10655):
  max1x   : >= 0.97 x target and < 1.3 x target (the max size when there are no grandparents)
  max2x   : >= 1.9 x target (the max size with grandparents and dynamic sizing)
  between : 1.3-1.9 x target (only a boundary cut with grandparents can end there)
  early   : < 0.97 x target (a boundary cut: pre-cut or skipped grandparent file)
and, for early/between cuts, whether a grandparent boundary lies between the output's last key and
the next output's first key (the rules only cut early at a boundary).
(counted as cut_<kind>_gp_not_at_boundary; absent = every such cut was at a boundary).
model_*: what the rules predict for the same compactions (with grandparents, unless --unaligned):
simulate() runs them over the compaction's written bytes spread evenly over its outputs' key ranges
(random keys have a uniform density), giving cuts by rule and, as model_size_*, by the size classes
above, to compare with the real cut_*_gp counts.
Trivial moves (a file deleted at L-1 and added at L with the same number) are counted apart.
Keys are db_bench's: the first 8 bytes are the big-endian key number.
"""
import re
import sys
from collections import defaultdict

ADD = re.compile(r"AddFile: (\d+) (\d+) (\d+) '([0-9A-F]*)' seq:\d+, type:\d+ \.\. '([0-9A-F]*)'")
DEL = re.compile(r"DeleteFile: (\d+) (\d+)")


def parse(path):
    edits, cur = [], None
    for line in open(path, errors="replace"):
        if line.startswith("VersionEdit {"):
            cur = {"add": [], "del": []}
        elif line.startswith("}") and cur is not None:
            edits.append(cur)
            cur = None
        elif cur is not None:
            m = ADD.search(line)
            if m:
                lvl, num, size, lo, hi = m.groups()
                cur["add"].append((int(lvl), int(num), int(size), bytes.fromhex(lo), bytes.fromhex(hi)))
                continue
            m = DEL.search(line)
            if m:
                cur["del"].append((int(m.group(1)), int(m.group(2))))
    return edits


def overlapping(files, lo, hi):
    return [f for f in files.values() if not (f[4] < lo or f[3] > hi)]


def boundaries_between(gp, a, b):
    """Grandparent boundaries (a file's smallest or largest) in (a, b]."""
    n = 0
    for f in gp:
        if a < f[3] <= b:
            n += 1
        if a <= f[4] < b:  # passing a file's end happens at the first key after it
            n += 1
    return n


def size_kind(size, target):
    if size >= 1.9 * target:
        return "max2x"
    if size >= 1.3 * target:
        return "between"
    if size >= 0.97 * target:
        return "max1x"
    return "early"


def knum(k):
    return int.from_bytes(k[:8], "big")


def simulate(gp, outs, target, max_compaction_bytes, bottommost, step=1024):
    """Predicts the cuts of one compaction by running ShouldStopBefore's rules over its written
    bytes spread evenly over the outputs' key ranges (random keys: uniform density), one sample
    key per `step` bytes. Returns cut counts by rule (max1x, max2x, precut, skipped, maxcomp)."""
    max_out = target if bottommost or not gp else 2 * target
    g = [(knum(f[3]), knum(f[4]), f[2]) for f in gp]
    samples = []
    for f in outs:
        lo, hi = knum(f[3]), knum(f[4])
        n = max(1, f[2] // step)
        samples.extend(lo + (hi - lo) * j // n for j in range(n))
    cuts = defaultdict(int)
    idx, in_gap, seen_key = 0, True, False
    overlap = seen = size = 0
    for k in samples:
        prev = overlap
        crossed = 0
        while idx < len(g):
            if in_gap:
                if k < g[idx][0]:
                    break
                if seen_key:
                    crossed += 1
                    seen += 1
                    overlap += g[idx][2]
                in_gap = False
            else:
                if k <= g[idx][1]:
                    break
                if seen_key:
                    crossed += 1
                    seen += 1
                in_gap = True
                idx += 1
        if not seen_key and not in_gap:
            overlap = g[idx][2]
        seen_key = True
        if size > 0:
            reason = None
            if size >= max_out:
                reason = "max2x" if max_out > target else "max1x"
            elif crossed > 0:
                if overlap + size > max_compaction_bytes:
                    reason = "maxcomp"
                elif crossed >= (2 if in_gap else 3) and overlap - prev > target / 8:
                    reason = "skipped"
                elif size >= (target + 99) // 100 * (50 + min(seen * 5, 40)):
                    reason = "precut"
            if reason:
                cuts[reason] += 1
                cuts["size_" + size_kind(size, target)] += 1
                size = seen = 0
                overlap = 0 if in_gap or idx >= len(g) else g[idx][2]
        size += step
    return cuts


def main():
    path = sys.argv[1]
    target = 2097152
    if "--target" in sys.argv:
        target = int(sys.argv[sys.argv.index("--target") + 1])
    dynamic = "--unaligned" not in sys.argv
    max_compaction_bytes = 25 * target
    levels = defaultdict(dict)  # level -> num -> (lvl, num, size, lo, hi)
    stats = defaultdict(lambda: defaultdict(int))
    for e in parse(path):
        if not e["del"] and not e["add"]:
            continue
        deleted_nums = {n for _, n in e["del"]}
        added = e["add"]
        moves = [a for a in added if a[1] in deleted_nums]
        new = [a for a in added if a[1] not in deleted_nums and a[0] >= 1]
        for a in moves:
            stats[a[0]]["trivial_moves"] += 1
        if e["del"] and new:
            out_level = new[0][0]
            inputs = [levels[l][n] for l, n in e["del"] if n in levels[l]]
            lo = min(f[3] for f in inputs)
            hi = max(f[4] for f in inputs)
            gp = sorted(overlapping(levels[out_level + 1], lo, hi), key=lambda f: f[3])
            bottommost = all(not overlapping(levels[l], lo, hi) for l in range(out_level + 1, 7))
            s = stats[out_level]
            s["compactions"] += 1
            key = "with_gp" if gp else ("no_gp_bottommost" if bottommost else "no_gp_not_bottommost")
            s["compactions_" + key] += 1
            outs = sorted(new, key=lambda f: f[3])
            if gp and dynamic:
                for r, c in simulate(gp, outs, target, max_compaction_bytes, bottommost).items():
                    s["model_" + r] += c
            for i, f in enumerate(outs):
                s["outputs"] += 1
                if i == len(outs) - 1:
                    s["last_output"] += 1
                    continue
                kind = size_kind(f[2], target)
                tag = "gp" if gp else "nogp"
                s[f"cut_{kind}_{tag}"] += 1
                if kind in ("early", "between") and gp:
                    if boundaries_between(gp, f[4], outs[i + 1][3]) == 0:
                        s[f"cut_{kind}_gp_not_at_boundary"] += 1
        for l, n in e["del"]:
            levels[l].pop(n, None)
        for a in added:
            levels[a[0]][a[1]] = a
    for lvl in sorted(stats):
        print(f"L{lvl}: " + ", ".join(f"{k}={v}" for k, v in sorted(stats[lvl].items())))


if __name__ == "__main__":
    main()
