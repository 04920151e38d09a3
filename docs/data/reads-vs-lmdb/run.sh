#!/usr/bin/env bash
# Reads vs LMDB (docs/benchmarks.md): 1M keys of 16 B, 100 B values, one thread; KvEngine
# filled, fully compacted (compact + waitforcompaction) with and without the data-block hash
# index at an 8 MiB and a 256 MiB block cache, and LMDB (kvbench -engine=lmdb), interleaved over
# ROUNDS rounds. readrandom runs twice per database: the second pass is the warm figure.
# Usage: docs/data/reads-vs-lmdb/run.sh OUTDIR [ROUNDS]
set -euo pipefail
out=${1:?output directory}; rounds=${2:-2}
kvbench=${KVBENCH:-"dotnet benchmarks/KvEngine.DbBench/bin/Release/net10.0/kvbench.dll"}
common="-num=1000000 -reads=300000 -key_size=16 -value_size=100 -threads=1 -seed=1"
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for cfg in kv-8m-binary kv-8m-hash lmdb kv-256m-binary kv-256m-hash; do
    case $cfg in
      kv-8m-binary)   args="-cache_size=8388608 -bloom_bits=10 -use_data_block_hash_index=0" ;;
      kv-8m-hash)     args="-cache_size=8388608 -bloom_bits=10 -use_data_block_hash_index=1" ;;
      kv-256m-binary) args="-cache_size=268435456 -bloom_bits=10 -use_data_block_hash_index=0" ;;
      kv-256m-hash)   args="-cache_size=268435456 -bloom_bits=10 -use_data_block_hash_index=1" ;;
      lmdb)           args="-engine=lmdb" ;;
    esac
    db=/tmp/reads-vs-lmdb-$cfg
    { echo "### round $r $cfg: $(date -u +%H:%M:%S) uptime: $(uptime)"
      echo "### $kvbench $common $args -db=$db -benchmarks=fillrandom,compact,waitforcompaction,readrandom,readrandom"
      $kvbench $common $args -db=$db -benchmarks=fillrandom,compact,waitforcompaction,readrandom,readrandom
      echo "### du: $(du -sb $db | cut -f1) bytes"; } > "$out/round$r-$cfg.txt" 2>&1
    rm -rf "$db"
  done
done
