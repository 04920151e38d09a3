#!/usr/bin/env bash
# Issue 45's "universal vs leveled" figures: fillrandom then overwrite of --num keys (default 50M,
# 16-byte keys, 100-byte values, lz4, 64 MiB memtables), under leveled (-compaction_style=0) and
# universal (-compaction_style=1, RocksDB's default CompactionOptionsUniversal) compaction, with
# kvbench -engine=kvengine and -engine=rocksdb (release RocksDB through RocksDbSharp), same flags.
# For each run it records:
#   - throughput: fillrandom and overwrite ops/sec (kvbench's report lines);
#   - write amplification: (flush + compaction bytes written) / user bytes (2 x num x 116), from
#     rocksdb.stats' "Flush(GB): cumulative" and "Cumulative compaction: X GB write" after
#     a flush and waitforcompaction;
#   - space amplification: table bytes on disk once compaction settled / table bytes after a full
#     manual compaction of the same database (-use_existing_db, benchmark "compact").
#
#   benchmarks/scripts/universal_vs_leveled.sh [--num 50000000] [--runs 1] [--engines "kvengine rocksdb"] [--out DIR]
#
# Needs a quiet machine (it warns when the load average is high) and about 2 x 12 GB of disk at 50M
# keys; a run of the whole matrix takes hours. Writes under docs/data/universal/<UTC time>/ (or
# --out): every kvbench output in <engine>_<style>_<run>.log, machine.txt, and results.md (one table
# row per run, and the KvEngine/RocksDB throughput ratios per style).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
num=50000000
runs=1
engines="kvengine rocksdb"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --num) num=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
out=${out:-$root/docs/data/universal/$(date -u +%Y%m%dT%H%MZ)}
mkdir -p "$out"
load=$(cut -d' ' -f1 /proc/loadavg)
if awk "BEGIN { exit !($load > 0.5) }"; then
  echo "warning: load average $load; the figures want a quiet machine" >&2
fi

bin=$root/.bench/kvbench-universal
dotnet publish "$root/benchmarks/KvEngine.DbBench" -c Release -o "$bin" --nologo -v q >/dev/null
kvbench=$bin/kvbench
db=${TMPDIR:-/tmp}/kvbench-universal-db

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "uptime: $(uptime)"
  echo "cpus: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo || true
  echo "num: $num"
} >"$out/machine.txt"
cat "$out/machine.txt"

common=(-key_size=16 -value_size=100 -compression_ratio=0.5 -compression_type=lz4 -bloom_bits=10
  -write_buffer_size=67108864 -max_background_jobs=4 -threads=1 -seed=1 -num="$num")
table_bytes() { find "$db" -name '*.sst' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }

echo "| engine | style | run | fillrandom ops/s | overwrite ops/s | write amp | space amp |" >"$out/results.md"
echo "|---|---|---|---|---|---|---|" >>"$out/results.md"
for run in $(seq 1 "$runs"); do
  for style in 0 1; do
    name=$([ "$style" = 0 ] && echo leveled || echo universal)
    for engine in $engines; do
      log=$out/${engine}_${name}_${run}.log
      echo "== $engine $name run $run (uptime: $(uptime))"
      rm -rf "$db"
      "$kvbench" -engine="$engine" -db="$db" -compaction_style="$style" "${common[@]}" \
        -benchmarks=fillrandom,overwrite,flush,waitforcompaction,stats >"$log" 2>&1
      settled=$(table_bytes)
      "$kvbench" -engine="$engine" -db="$db" -use_existing_db=1 -compaction_style="$style" "${common[@]}" \
        -benchmarks=compact >>"$log" 2>&1
      compacted=$(table_bytes)
      python3 - "$log" "$num" "$settled" "$compacted" "$engine" "$name" "$run" >>"$out/results.md" <<'EOF'
import re, sys
log, num, settled, compacted, engine, style, run = sys.argv[1:]
text = open(log).read()
def ops(bench):
    m = re.search(rf"^{bench}\s*:.*?(\d+) ops/sec", text, re.M)
    return m.group(1) if m else "?"
flush = re.findall(r"Flush\(GB\): cumulative ([\d.]+)", text)
comp = re.findall(r"Cumulative compaction: ([\d.]+) GB write", text)
user_gb = 2 * int(num) * 116 / 2**30
wamp = f"{(float(flush[-1]) + float(comp[-1])) / user_gb:.2f}" if flush and comp else "?"
samp = f"{int(settled) / int(compacted):.2f}" if int(compacted) > 0 else "?"
print(f"| {engine} | {style} | {run} | {ops('fillrandom')} | {ops('overwrite')} | {wamp} | {samp} |")
EOF
      tail -n 1 "$out/results.md"
    done
  done
done
rm -rf "$db"
cat "$out/results.md"
