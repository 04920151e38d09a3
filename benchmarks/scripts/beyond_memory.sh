#!/usr/bin/env bash
# Reads from databases larger than memory, KvEngine against release RocksDB 11.12 (kvbench
# -engine=rocksdb), in issue 41's two setups:
#   cgroup: buffered reads inside a cgroup v1 memory cgroup whose limit (process + page cache) is
#           far below the database's size; the page cache is dropped before every run, so neither
#           engine reads what an earlier run (or the fill) left cached;
#   direct: -use_direct_reads=1 -use_direct_io_for_flush_and_compaction=1, no cgroup.
# Each (setup, benchmark) runs both engines back to back, the order alternating between rows.
#
#   benchmarks/scripts/beyond_memory.sh --kvbench BIN --dbs DIR [--num N] [--limit BYTES]
#       [--duration S] [--setups "cgroup direct"] [--benchmarks "readrandom ..."] [--out DIR]
#
# DIR holds kvengine/ and rocksdb/, each made by
#   kvbench -engine=E -benchmarks=fillrandom,waitforcompaction,stats -num=N -threads=1 -key_size=16 \
#       -value_size=100 -compression_type=lz4 -compression_ratio=0.5 -bloom_bits=10 \
#       -write_buffer_size=67108864 -cache_size=268435456 -db=DIR/E
# Benchmark names: readrandom_t1, readrandom_t2, multireadrandom_b32 (-async_io: KvEngine's
# MultiGetAsync), readrandom_inflight32 (KvEngine: one thread, 32 TryGetAsync in flight; RocksDB,
# which has no asynchronous Get: 32 threads), seekrandom_t1, readwhilewriting_t1 (it writes: keep
# it last). Writes one log per
# run (kvbench's report and /usr/bin/time -v) and summary.tsv under --out (default
# docs/data/beyond-memory/<UTC time>/). Root is needed for the cgroup and drop_caches.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kvbench=""
dbs=""
num=100000000
limit=$((1024 * 1024 * 1024))
duration=30
setups="cgroup direct"
benchmarks="readrandom_t1 readrandom_t2 multireadrandom_b32 readrandom_inflight32 seekrandom_t1 readwhilewriting_t1"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kvbench) kvbench=$2; shift 2 ;;
    --dbs) dbs=$2; shift 2 ;;
    --num) num=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --setups) setups=$2; shift 2 ;;
    --benchmarks) benchmarks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -n "$kvbench" ] && [ -n "$dbs" ] || { echo "--kvbench and --dbs are required" >&2; exit 2; }
out=${out:-$root/docs/data/beyond-memory/$(date -u +%Y%m%dT%H%MZ)}
mkdir -p "$out"
cg=/sys/fs/cgroup/memory/kvbench-beyond-memory

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "kvbench: $kvbench"
  echo "uptime: $(uptime)"
  echo "cgroup limit: $limit bytes"
  for e in kvengine rocksdb; do echo "db $e: $(du -sb "$dbs/$e" | cut -f1) bytes"; done
} >"$out/machine.txt"
cat "$out/machine.txt"

common=(-use_existing_db=1 -num="$num" -duration="$duration" -key_size=16 -value_size=100
  -compression_type=lz4 -bloom_bits=10 -write_buffer_size=67108864 -cache_size=268435456 -histogram=1)

bench_flags() {
  case "$1" in
    readrandom_t1) echo "-benchmarks=readrandom -threads=1" ;;
    readrandom_t2) echo "-benchmarks=readrandom -threads=2" ;;
    multireadrandom_b32) echo "-benchmarks=multireadrandom -threads=1 -batch_size=32 -multiread_batched=1 -async_io=1" ;;
    readrandom_inflight32)
      # KvEngine: one thread keeping 32 TryGetAsync calls in flight; release RocksDB has no
      # asynchronous Get, so its way to keep 32 reads in flight is 32 threads.
      if [ "$2" = rocksdb ]; then echo "-benchmarks=readrandom -threads=32"; else echo "-benchmarks=readrandom -threads=1 -inflight=32"; fi ;;
    seekrandom_t1) echo "-benchmarks=seekrandom -threads=1 -seek_nexts=10" ;;
    readwhilewriting_t1) echo "-benchmarks=readwhilewriting -threads=1" ;;
    *) echo "unknown benchmark $1" >&2; exit 2 ;;
  esac
}

setup_flags() {
  case "$1" in
    cgroup) echo "" ;;
    direct) echo "-use_direct_reads=1 -use_direct_io_for_flush_and_compaction=1" ;;
  esac
}

run_one() { # setup bench engine
  local setup=$1 bench=$2 engine=$3 log="$out/$1-$2-$3.txt"
  sync
  echo 3 >/proc/sys/vm/drop_caches
  # shellcheck disable=SC2046
  local cmd=("$kvbench" -engine="$engine" -db="$dbs/$engine" "${common[@]}" $(bench_flags "$bench" "$engine") $(setup_flags "$setup"))
  echo "### $(date -u +%FT%TZ) uptime: $(uptime)" >"$log"
  echo "### ${cmd[*]}" >>"$log"
  if [ "$setup" = cgroup ]; then
    mkdir -p "$cg"
    echo "$limit" >"$cg/memory.limit_in_bytes"
    echo 0 >"$cg/memory.max_usage_in_bytes" 2>/dev/null || true
    /usr/bin/time -v sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "${cmd[@]}" >>"$log" 2>&1 || echo "### exit $?" >>"$log"
    echo "### cgroup max_usage_in_bytes: $(cat "$cg/memory.max_usage_in_bytes")" >>"$log"
  else
    /usr/bin/time -v "${cmd[@]}" >>"$log" 2>&1 || echo "### exit $?" >>"$log"
  fi
  local ops rss
  ops=$(tr '\r' '\n' <"$log" | grep -a -m1 'ops/sec' | sed -E 's/.* ([0-9.]+) ops\/sec.*/\1/' || true)
  rss=$(grep -m1 'Maximum resident set size' "$log" | awk '{print $NF}' || true)
  printf '%s\t%s\t%s\t%s\t%s\n' "$setup" "$bench" "$engine" "$ops" "$rss" | tee -a "$out/summary.tsv"
}

printf 'setup\tbenchmark\tengine\tops_per_sec\tpeak_rss_kib\n' >"$out/summary.tsv"
row=0
for setup in $setups; do
  for bench in $benchmarks; do
    if [ $((row % 2)) -eq 0 ]; then order="kvengine rocksdb"; else order="rocksdb kvengine"; fi
    for engine in $order; do run_one "$setup" "$bench" "$engine"; done
    row=$((row + 1))
  done
done
rmdir "$cg" 2>/dev/null || true
echo "uptime at end: $(uptime)" >>"$out/machine.txt"
