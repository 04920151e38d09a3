#!/usr/bin/env bash
# PR 12939's experiment (partitioned index and filters, filter partitions cut independently),
# scaled to a 2-core machine: fillrandom of NUM keys, flush, READS readrandom, FIFO compaction,
# WAL off, at each cache size, for decoupled 4 KiB, coupled 4 KiB and coupled 8 KiB metadata
# blocks. (The PR uses -duration, which in db_bench and kvbench also bounds fillrandom by time
# only: the faster writer then writes more keys and reads a larger database. Fixed counts keep
# the two databases the same size.) KvEngine runs every configuration; db_bench 7.8 (through compare.py) the
# coupled ones, which it has. Output: one compare.py block per (configuration, cache size).
# Usage (from the project root): benchmarks/scripts/partition_sweep.sh NUM READS RUNS > sweep.txt
set -euo pipefail
# KVBENCH=path/to/kvbench uses a published kvbench instead of publishing one per configuration.
num=${1:-1000000}
reads=${2:-300000}
runs=${3:-1}
common="-benchmarks=fillrandom,flush,readrandom -num=$num -reads=$reads -disable_wal=1 -write_buffer_size=30000000 \
 -bloom_bits=10 -compaction_style=2 -fifo_compaction_max_table_files_size_mb=10000 -fifo_compaction_allow_compaction=0 \
 -partition_index_and_filters=1 -compression_type=snappy"
for cs in 3 10 30 100 300 1200; do
  for cfg in "4096 1" "4096 0" "8192 0"; do
    set -- $cfg
    echo "## cache_mb=$cs metadata_block_size=$1 decouple=$2"
    python3 ../shared/bench/compare.py --runs "$runs" ${KVBENCH:+--kvbench "$KVBENCH"} --dbbench benchmarks/scripts/db_bench_78.sh -- $common \
      -cache_size=$((cs * 1000000)) -metadata_block_size=$1 -decouple_partitioned_filters=$2 || true
      # (compare.py exits 1 because "flush" prints no ops/sec line in either tool)
  done
done
