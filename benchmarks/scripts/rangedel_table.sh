#!/usr/bin/env bash
# PR 10547's table (DeleteRange, the fragmented list cached on the mutable memtable), scaled to
# nothing: it is the PR's own command (200k writes, 100k reads, every memtable kept), run through
# compare.py for KvEngine and db_bench 7.8 with 0, 1, 10, 100 and 1000 range tombstones in the
# memtables, at one and two threads. Output: one compare.py block per configuration.
# Usage (from the project root): benchmarks/scripts/rangedel_table.sh [runs] > rangedel.txt
set -euo pipefail
# KVBENCH=path/to/kvbench uses a published kvbench instead of publishing one per configuration.
runs=${1:-3}
for threads in 1 2; do
  for n in 0 1 10 100 1000; do
    echo "## threads=$threads max_num_range_tombstones=$n"
    python3 ../shared/bench/compare.py --runs "$runs" ${KVBENCH:+--kvbench "$KVBENCH"} -- -benchmarks=fillrandom,readrandom \
      -writes_per_range_tombstone=200 -max_write_buffer_number=100 -min_write_buffer_number_to_merge=100 \
      -writes=200000 -reads=100000 -disable_auto_compactions=true -max_num_range_tombstones=$n -threads=$threads
  done
done
