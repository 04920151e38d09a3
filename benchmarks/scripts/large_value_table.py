#!/usr/bin/env python3
"""Markdown table of kvbench -benchmarks=largevalue runs, before against after.

Usage: large_value_table.py DIR
Reads DIR/before-<size>-r<ratio>.txt (else DIR/managed-caller-before-<size>-r<ratio>.txt, the
row then marked *) and DIR/after-<size>-r<ratio>.txt (kvbench's output with the
command line first) and prints, for every size and compression ratio found in both, one row per
stage: the stage's peak RSS (VmHWM, reset before the stage) before and after; that peak less the
RSS right after the open, over the value's size (all the value costs at that point); and that peak
less the RSS at the start of the stage, over the value's size (what the stage itself adds).
"""
import pathlib
import re
import sys


def read(path):
    stages = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 6 and re.fullmatch(r"[a-z_]+", parts[0]) and parts[0] != "stage":
            stages[parts[0]] = (float(parts[2]), float(parts[4]), float(parts[1]))  # peak MB, (peak - open) / value, start MB
    return stages


def main():
    folder = pathlib.Path(sys.argv[1])
    runs = sorted(
        {m.groups() for p in folder.glob("after-*.txt") if (m := re.fullmatch(r"after-(\d+)-r([\d.]+)\.txt", p.name))},
        key=lambda g: (int(g[0]), -float(g[1])),
    )
    print("| value | compression ratio | stage | peak RSS before (MiB) | after (MiB) "
          "| (peak - RSS at open) / value, before | after | (peak - RSS at stage start) / value, before | after |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size, ratio in runs:
        before_path = folder / f"before-{size}-r{ratio}.txt"
        marker = ""
        if not before_path.exists():
            before_path = folder / f"managed-caller-before-{size}-r{ratio}.txt"
            marker = "*"  # the earlier benchmark: see the README
            if not before_path.exists():
                continue
        before, after = read(before_path), read(folder / f"after-{size}-r{ratio}.txt")
        label = f"{int(size) / 2**20:.0f} MiB{marker}"
        mib = int(size) / 2**20
        for stage in after:
            if stage in ("open", "make_value") or stage not in before:
                continue
            b, a = before[stage], after[stage]
            print(f"| {label} | {ratio} | {stage} | {b[0]:.0f} | {a[0]:.0f} | {b[1]:.2f} | {a[1]:.2f} "
                  f"| {(b[0] - b[2]) / mib:.2f} | {(a[0] - a[2]) / mib:.2f} |")


if __name__ == "__main__":
    main()
