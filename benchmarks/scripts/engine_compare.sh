#!/usr/bin/env bash
# Issue 13's engine matrix: kvbench -engine=kvengine against kvbench -engine=rocksdb (release RocksDB
# 11.12 through the RocksDB NuGet package's RocksDbSharp and librocksdb.so), same process type, same
# flags, alternated by ../shared/bench/compare.py, at 1M and 10M keys with 1 and 2 threads.
#
#   benchmarks/scripts/engine_compare.sh [--runs N] [--nums "1000000 10000000"] [--threads "1 2"] [--out DIR]
#
# Run from anywhere on a quiet machine (it warns when the load average is high). Writes under
# docs/data/engines/<UTC time>/ (or --out): one compare.py table per (num, threads), every
# kvbench run's full output (report, managed B/op, memory lines) in <num>_t<threads>.log, and
# uptime/machine notes in machine.txt. 10M keys need about 2.5 GB of disk per database and roughly
# an hour for the whole matrix with --runs 3.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=3
nums="1000000 10000000"
threads="1 2"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --nums) nums=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
out=${out:-$root/docs/data/engines/$(date -u +%Y%m%dT%H%MZ)}
mkdir -p "$out"

# One published kvbench serves both sides.
bin=$root/.bench/kvbench-engines
dotnet publish "$root/benchmarks/KvEngine.DbBench" -c Release -o "$bin" --nologo -v q >/dev/null
kvbench=$bin/kvbench
logged=$root/benchmarks/scripts/kvbench_logged.sh

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "uptime: $(uptime)"
  echo "cpus: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo || true
  "$kvbench" -engine=rocksdb -benchmarks=fillseq -num=1 -db="$out/.probe" | grep '^Engine:' || true
  rm -rf "$out/.probe"
} >"$out/machine.txt"
cat "$out/machine.txt"

flags=(-benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,seekrandom,readwhilewriting
  -key_size=16 -value_size=100 -compression_ratio=0.5 -compression_type=lz4 -bloom_bits=10
  -write_buffer_size=67108864 -cache_size=8388608)
for num in $nums; do
  for t in $threads; do
    name=${num}_t${t}
    echo "== $name (uptime: $(uptime))"
    python3 "$root/../shared/bench/compare.py" --root "$root" --runs "$runs" \
      --dbbench "$logged $out/$name.log $kvbench -engine=rocksdb" \
      --kvbench "$logged $out/$name.log $kvbench -engine=kvengine" \
      -- "${flags[@]}" -num="$num" -threads="$t" 2>&1 | tee "$out/$name.txt"
  done
done
echo "raw output in $out"
