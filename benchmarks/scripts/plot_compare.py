#!/usr/bin/python3
"""Plots from the outputs of rangedel_table.sh and partition_sweep.sh (Debian's python3-matplotlib).

  /usr/bin/python3 benchmarks/scripts/plot_compare.py rangedel rangedel.txt docs/img/rangedel.png
  /usr/bin/python3 benchmarks/scripts/plot_compare.py sweep sweep.txt docs/img/partition_sweep.png
  /usr/bin/python3 benchmarks/scripts/plot_compare.py memory peak_rss.tsv docs/img/memory_peak_rss.png

  /usr/bin/python3 benchmarks/scripts/plot_compare.py ratios "1M, 1 thread=a.txt;1M, 2 threads=b.txt" docs/img/ratios.png ["77efc27"]

ratios: compare.py outputs (label=path, separated by ';'), one group of bars per benchmark, one
bar per output, with issue 13's 1.5x (1M) and 1.25x (10M) lines; an optional last argument ends the title.
memory: a tab-separated file with a header line "keys<TAB>series<TAB>peak_rss_mib", one row per
kvbench run (peak RSS as /usr/bin/time or kvbench's Memory line gives it); one line per series.
"""
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

HEAD = re.compile(r"^## (.*)$")
ROW = re.compile(r"^(\w+)\s+(\d+)\s+(\d+)\s+([\d.]+)$")


def blocks(path):
    """[(header dict, {benchmark: (rocksdb ops/s, kvengine ops/s)})] in file order."""
    out = []
    for line in open(path):
        line = line.strip()
        m = HEAD.match(line)
        if m:
            out.append((dict(kv.split("=") for kv in m.group(1).split()), {}))
            continue
        m = ROW.match(line)
        if m and out:
            out[-1][1][m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out



COMPARE_ROW = re.compile(r"^(\w+)\s+(\d+)\s+(\d+)\s+([\d.]+)$")


def ratios(spec, png, when=""):
    runs = []
    for part in spec.split(";"):
        label, path = part.split("=", 1)
        rows = {}
        for line in open(path):
            m = COMPARE_ROW.match(line.strip())
            if m:
                rows[m.group(1)] = float(m.group(4))
        runs.append((label, rows))
    benches = [b for b in runs[0][1]]
    fig, ax = plt.subplots(figsize=(10, 4.6))
    width = 0.8 / len(runs)
    for i, (label, rows) in enumerate(runs):
        xs = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(benches))]
        ax.bar(xs, [rows.get(b, 0) for b in benches], width, label=label)
    ax.axhline(1.5, color="tab:red", linestyle="--", linewidth=1, label="1.5x (1M target)")
    ax.axhline(1.25, color="tab:orange", linestyle=":", linewidth=1, label="1.25x (10M target)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(benches)), benches, rotation=20)
    ax.set_ylabel("KvEngine / RocksDB 11.12 ops/s")
    ax.set_title("KvEngine vs release RocksDB (kvbench -engine=rocksdb)" + (f", {when}" if when else ""))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def memory(path, png):
    series = {}
    for n, line in enumerate(open(path)):
        if n == 0 or not line.strip():
            continue
        keys, name, mib = line.rstrip("\n").split("\t")
        series.setdefault(name, []).append((int(keys) / 1e6, float(mib)))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, rows in series.items():
        rows.sort()
        ax.plot([k for k, _ in rows], [m for _, m in rows], "o-", label=name)
    ax.set_xlabel("keys (millions), one thread, 8 MiB block cache, 64 MiB write buffer")
    ax.set_ylabel("peak RSS (MiB)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax.set_title("Peak resident set, engine_compare.sh workload")
    fig.tight_layout()
    fig.savefig(png, dpi=110)

def rangedel(path, png):
    data = blocks(path)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, bench in zip(axes, ("readrandom", "fillrandom")):
        for threads, style in (("1", "-"), ("2", "--")):
            rows = [(int(h["max_num_range_tombstones"]), r[bench]) for h, r in data if h["threads"] == threads and bench in r]
            xs = [max(n, 0.5) for n, _ in rows]  # 0 tombstones drawn at 0.5 on the log axis
            ax.plot(xs, [1e6 / v[1] for _, v in rows], "o" + style, color="tab:blue", label=f"KvEngine, {threads} thread(s)")
            ax.plot(xs, [1e6 / v[0] for _, v in rows], "s" + style, color="tab:red", label=f"db_bench 7.8, {threads} thread(s)")
        ax.set_xscale("log")
        ax.set_xticks([0.5, 1, 10, 100, 1000], ["0", "1", "10", "100", "1000"])
        ax.set_xlabel("range tombstones in the memtables")
        ax.set_ylabel("µs/op (median of 3, lower is better)")
        ax.set_title(bench)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("PR 10547's benchmark: 200k writes, 100k reads, every memtable kept")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def sweep(path, png):
    data = blocks(path)
    fig, ax = plt.subplots(figsize=(8, 5))
    configs = [("4096", "1", "KvEngine decoupled 4 KiB", "tab:blue", "o-"),
               ("4096", "0", "KvEngine coupled 4 KiB", "tab:green", "s-"),
               ("8192", "0", "KvEngine coupled 8 KiB", "tab:purple", "^-")]
    for size, dec, label, color, style in configs:
        rows = [(int(h["cache_mb"]), r["readrandom"][1]) for h, r in data
                if h["metadata_block_size"] == size and h["decouple"] == dec and "readrandom" in r]
        ax.plot([c for c, _ in rows], [v for _, v in rows], style, color=color, label=label)
    for size, label, style in (("4096", "db_bench 7.8 (coupled) 4 KiB", "s:"), ("8192", "db_bench 7.8 (coupled) 8 KiB", "^:")):
        rows = [(int(h["cache_mb"]), r["readrandom"][0]) for h, r in data
                if h["metadata_block_size"] == size and h["decouple"] == "0" and "readrandom" in r]
        ax.plot([c for c, _ in rows], [v for _, v in rows], style, color="tab:red", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("block cache (MB)")
    ax.set_ylabel("readrandom ops/s")
    ax.set_title("PR 12939's experiment, scaled: partitioned index and filters, FIFO, no WAL")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    {"rangedel": rangedel, "sweep": sweep, "memory": memory, "ratios": ratios}[sys.argv[1]](*sys.argv[2:])
