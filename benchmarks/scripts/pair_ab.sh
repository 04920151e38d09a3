#!/usr/bin/env bash
# Two kvbench builds, A and B, on the same workload at the same time, one pinned to each core,
# swapping cores every round: on a shared host whose neighbours come and go, both builds meet the
# same interference at the same moment, so the ratio of their times is steadier than the ratio of
# alternated runs (which swung +-20% between rounds here). For a change to a read path with the
# data already in place: each build reads its own copy of DB (made once with the same flags).
#
#   benchmarks/scripts/pair_ab.sh --a CMD --b CMD --db DIR [--rounds N] -- <kvbench flags>
#
# Each round runs the flags once per build (e.g. -use_existing_db=1 -benchmarks=readrandom,readrandom)
# and keeps the micros/op of every benchmark line but the first (the warm-up). Prints each round
# and the mean micros/op of both builds, B/A, and in how many rounds B was faster. Needs taskset
# and two cores; the machine should otherwise be idle.
set -euo pipefail
a="" b="" db="" rounds=6
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a=$2; shift 2 ;;
    --b) b=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ -z "$a" ] || [ -z "$b" ] || [ -z "$db" ]; then
  echo "usage: $0 --a CMD --b CMD --db DIR [--rounds N] -- <kvbench flags>" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$db" "$work/db-a"
cp -r "$db" "$work/db-b"

# micros/op of every benchmark line after the first, space-separated
run() {
  local cmd=$1 cpu=$2 dir=$3
  taskset -c "$cpu" $cmd -db="$dir" "${@:4}" 2>&1 | tr '\r' '\n' | grep -E '^[a-z0-9_]+ +: +[0-9.]+ micros/op' \
    | sed 's/.*: *\([0-9.]*\) micros\/op.*/\1/' | tail -n +2 | tr '\n' ' '
}

for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 0 ]; then ca=0; cb=1; else ca=1; cb=0; fi
  run "$a" "$ca" "$work/db-a" "$@" > "$work/out-a" &
  run "$b" "$cb" "$work/db-b" "$@" > "$work/out-b"
  wait
  echo "round $i  A: $(cat "$work/out-a") B: $(cat "$work/out-b")"
done | tee "$work/rounds"
awk '{
  split($0, halves, "B:"); sa = 0; sb = 0; na = 0; nb = 0
  n = split(halves[1], xa, " "); for (j = 4; j <= n; j++) { sa += xa[j]; na++ }
  n = split(halves[2], xb, " "); for (j = 1; j <= n; j++) { sb += xb[j]; nb++ }
  ta += sa; tb += sb; ca += na; cb += nb; if (nb > 0 && sb / nb < sa / na) faster++; r++
} END {
  printf "A mean %.3f us/op  B mean %.3f us/op  B/A %.3f  B faster in %d of %d rounds\n", ta / ca, tb / cb, (tb / cb) / (ta / ca), faster, r
}' "$work/rounds"
