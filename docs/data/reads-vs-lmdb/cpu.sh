#!/usr/bin/env bash
# CPU seconds per readrandom (user + sys from /usr/bin/time), a figure less disturbed by other
# processes than wall time on a loaded machine: existing 1M-key databases (KvEngine filled and
# compacted without and with the data-block hash index, LMDB filled), -reads=R random reads, two
# passes per process; a -reads=1 run per database measures what start, open and close cost, and
# is subtracted. Usage: cpu.sh OUTDIR ROUNDS, after filling the databases:
#   kvbench -num=1000000 -key_size=16 -value_size=100 -seed=1 -bloom_bits=10 -use_data_block_hash_index=T \
#       -db=/tmp/x/cpu-T -benchmarks=fillrandom,compact,waitforcompaction        (T = 0 and 1)
#   kvbench -engine=lmdb -num=1000000 -key_size=16 -value_size=100 -seed=1 -db=/tmp/x/cpu-lmdb -benchmarks=fillrandom
# cpu-summary.py OUTDIR prints CPU us per read: (user + sys - the -reads=1 run's) / 1,000,000 reads.
set -euo pipefail
out=${1:?}; rounds=${2:-2}; reads=500000
kvbench=${KVBENCH:-"dotnet benchmarks/KvEngine.DbBench/bin/Release/net10.0/kvbench.dll"}
common="-num=1000000 -key_size=16 -value_size=100 -seed=3 -use_existing_db=1"
mkdir -p "$out"
run() { # name args...
  local name=$1; shift
  { echo "### $(date -u +%H:%M:%S) $(uptime)"; echo "### $kvbench $common $*"
    /usr/bin/time -f "### cpu: user %U sys %S elapsed %e" $kvbench $common "$@"; } >> "$out/$name.txt" 2>&1
}
for r in $(seq 1 "$rounds"); do
  for cache in 8388608 268435456; do
    for t in 0 1; do
      run "kv-$cache-hash$t" -db=/tmp/x/cpu-$t -bloom_bits=10 -cache_size=$cache -benchmarks=readrandom,readrandom -reads=$reads
      run "kv-$cache-hash$t-base" -db=/tmp/x/cpu-$t -bloom_bits=10 -cache_size=$cache -benchmarks=readrandom -reads=1
    done
  done
  run lmdb -engine=lmdb -db=/tmp/x/cpu-lmdb -benchmarks=readrandom,readrandom -reads=$reads
  run lmdb-base -engine=lmdb -db=/tmp/x/cpu-lmdb -benchmarks=readrandom -reads=1
done
