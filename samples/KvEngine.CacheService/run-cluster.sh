#!/usr/bin/env bash
# Starts a 3-node KvEngine cache cluster on loopback (Raft over TCP, DotNext.Net.Cluster):
#   node i: HTTP http://127.0.0.1:$((HTTP_BASE+i)), Raft 127.0.0.1:$((RAFT_BASE+i)), data in $DATA/node$i
# Ctrl+C (or SIGTERM) stops the three nodes. See README.md, "Cluster mode".
# Environment: HTTP_BASE (5081), RAFT_BASE (7081), DATA (./data/cluster), CONFIGURATION (Release),
# ELECTION_MS (300: election timeout between it and twice it; raise it on a loaded machine).
set -euo pipefail
cd "$(dirname "$0")"
HTTP_BASE=${HTTP_BASE:-5081}
RAFT_BASE=${RAFT_BASE:-7081}
DATA=${DATA:-data/cluster}
CONFIGURATION=${CONFIGURATION:-Release}
ELECTION_MS=${ELECTION_MS:-300}

dotnet build -c "$CONFIGURATION" --nologo -v quiet >/dev/null
dll="bin/$CONFIGURATION/net10.0/KvEngine.CacheService.dll"

members=()
for i in 0 1 2; do
  members+=("--Cluster:Members:$i:Raft=127.0.0.1:$((RAFT_BASE + i))" "--Cluster:Members:$i:Http=http://127.0.0.1:$((HTTP_BASE + i))")
done

pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT INT TERM

for i in 0 1 2; do
  mkdir -p "$DATA/node$i"
  dotnet "$dll" --cluster \
    --urls "http://127.0.0.1:$((HTTP_BASE + i))" \
    "--Cluster:Self=$i" "--Cluster:DataDirectory=$DATA/node$i" \
    "--Cluster:LowerElectionTimeout=$ELECTION_MS" "--Cluster:UpperElectionTimeout=$((2 * ELECTION_MS))" \
    "--Logging:LogLevel:Default=Warning" \
    "${members[@]}" >"$DATA/node$i.log" 2>&1 &
  pids+=($!)
  echo "node $i: http://127.0.0.1:$((HTTP_BASE + i)) (raft 127.0.0.1:$((RAFT_BASE + i))), log $DATA/node$i.log"
done

# Wait (at most 30 s) until some node reports a leader.
for _ in $(seq 1 300); do
  for i in 0 1 2; do
    if curl -fsS "http://127.0.0.1:$((HTTP_BASE + i))/cluster" 2>/dev/null | grep -q '"role":"Leader"'; then
      echo "leader: node $i (http://127.0.0.1:$((HTTP_BASE + i)))"
      echo "try: curl -i -L -X PUT --data-binary hello http://127.0.0.1:$HTTP_BASE/cache/greeting"
      echo "press Ctrl+C to stop"
      wait
      exit 0
    fi
  done
  sleep 0.1
done
echo "no leader within 30 s; see $DATA/node*.log" >&2
exit 1
