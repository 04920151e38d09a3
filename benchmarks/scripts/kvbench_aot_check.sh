#!/usr/bin/env bash
# Publishes kvbench with Native AOT and runs a short KvEngine workload on it: the check that the
# engine and every library it loads (K4os LZ4, ZstdSharp, Snappier, System.IO.Hashing, DotNext...)
# stay trim- and AOT-clean, which the analyzers of a normal build cannot see (they check only the
# project's own code). Any trim or AOT warning fails the publish (warnings are errors).
# Needs the ILCompiler package from NuGet and a C linker (clang, or gcc when clang is absent);
# takes a few minutes, so it is not part of .ci/run. It publishes twice: with the other engines
# (-p:KvBenchOtherEngines=true: ZoneTree, raftbench's DotNext cluster), so every library is checked,
# and the default AOT build, which leaves them out and must refuse them.
# usage: kvbench_aot_check.sh [OUTPUT_DIR]   (default: a temporary folder, removed at the end)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvbench-aot.XXXXXX")"
trap 'rm -rf "$work"' EXIT
out="${1:-$work/bin}"

dotnet publish "$repo/benchmarks/KvEngine.DbBench" -c Release -r linux-x64 -p:PublishAot=true -p:KvBenchOtherEngines=true -o "$out" --nologo
# Small memtables and levels, so the keys go through flushes, compactions, table reads, the block
# cache and the Bloom filters, with each codec.
for compression in zstd lz4 snappy; do
  rm -rf "$work/db"
  "$out/kvbench" -benchmarks=fillrandom,readrandom,seekrandom,readseq -num=100000 -compression_type=$compression \
    -bloom_bits=10 -write_buffer_size=262144 -target_file_size_base=262144 -max_bytes_for_level_base=1048576 \
    -cache_size=1048576 -db="$work/db"
  # RocksDB 7.8's tools, when installed, read what the AOT build wrote.
  if command -v ldb >/dev/null 2>&1 && command -v sst_dump >/dev/null 2>&1; then
    ldb --db="$work/db" checkconsistency
    if sst_dump --file="$work/db" --command=verify 2>&1 | grep -iE "corrupt|error"; then
      echo "kvbench_aot_check: sst_dump rejected a table written with $compression" >&2
      exit 1
    fi
  fi
done
# -engine=rocksdb cannot run under AOT (RocksDbSharp emits code at run time): it must refuse, exit 1.
if "$out/kvbench" -engine=rocksdb -benchmarks=fillrandom -num=10 -db="$work/rocksdb" 2>"$work/err"; then
  echo "kvbench_aot_check: -engine=rocksdb ran under Native AOT; it should refuse" >&2
  exit 1
fi
grep -q "needs the JIT build" "$work/err"
# The other engines run in this build.
"$out/kvbench" -engine=zonetree -benchmarks=fillrandom,readrandom -num=10000 -db="$work/zonetree"
"$out/kvbench" -benchmarks=raftbench -num=1000 -db="$work/raft"
# The default AOT build carries KvEngine alone: it runs KvEngine and refuses the others, exit 1.
dotnet publish "$repo/benchmarks/KvEngine.DbBench" -c Release -r linux-x64 -p:PublishAot=true -o "$work/lean" --nologo
"$work/lean/kvbench" -benchmarks=fillrandom,readrandom -num=10000 -db="$work/lean-db"
for args in "-engine=zonetree -benchmarks=fillrandom" "-benchmarks=raftbench"; do
  # shellcheck disable=SC2086
  if "$work/lean/kvbench" $args -num=10 -db="$work/lean-other" 2>"$work/err"; then
    echo "kvbench_aot_check: the default AOT build ran $args; it should refuse" >&2
    exit 1
  fi
  grep -q "KvBenchOtherEngines=true" "$work/err"
done
echo "kvbench_aot_check: OK"
