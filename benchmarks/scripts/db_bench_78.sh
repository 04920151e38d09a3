#!/usr/bin/env bash
# db_bench 7.8 with the flags it does not have removed, so compare.py can pass KvEngine's newer
# flags to both tools: -decouple_partitioned_filters (RocksDB 9.x, PR 12939; 7.8 always couples).
args=()
for a in "$@"; do
  case "$a" in
    -decouple_partitioned_filters=*|--decouple_partitioned_filters=*) ;;
    *) args+=("$a") ;;
  esac
done
exec db_bench "${args[@]}"
