#!/usr/bin/env bash
# Load run of samples/KvEngine.CacheService (docs/benchmarks.md, "Cache service under load"):
# the same service, Release build, bound to 127.0.0.1, once per backend —
#   kvengine  AddKvEngineCache (embedded, a fresh database directory)
#   redis     AddStackExchangeRedisCache against Debian's redis-server, started here on loopback
#             (no persistence: Redis at its fastest), stopped after
#   garnet    the same RedisCache against Garnet (dotnet tool garnet-server), when it installs
# — each pre-populated with KEYS values of VALUE_SIZE bytes (curl), then driven by Debian's wrk for
# DURATION with CONNECTIONS connections: 90% GET / 10% PUT (cache_service_load.lua), loopback only.
# Prints one markdown table row per backend (requests/s, p50, p99, errors, load average).
#
# Needs: dotnet, wrk, curl, redis-server and redis-cli (apt-get install -y redis-server wrk curl).
# Usage: benchmarks/scripts/cache_service_load.sh [kvengine] [redis] [garnet]   (default: all three)
# Environment: DURATION (30s), CONNECTIONS (32), THREADS (2), KEYS (10000), VALUE_SIZE (1024),
#   PUT_PERCENT (10), PORT (5090), REDIS_PORT (6390), GARNET_PORT (6391), GARNET (path of garnet-server;
#   default: on PATH, else installed with dotnet tool into a temp dir), NO_BUILD=1 to skip the build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DURATION="${DURATION:-30s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-2}"
export KEYS="${KEYS:-10000}"
export VALUE_SIZE="${VALUE_SIZE:-1024}"
export PUT_PERCENT="${PUT_PERCENT:-10}"
PORT="${PORT:-5090}"
REDIS_PORT="${REDIS_PORT:-6390}"
GARNET_PORT="${GARNET_PORT:-6391}"
BACKENDS=("$@")
if [ ${#BACKENDS[@]} -eq 0 ]; then
  BACKENDS=(kvengine redis garnet)
fi

for tool in dotnet wrk curl; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 2; }
done

WORK="$(mktemp -d /tmp/kvengine-cache-load.XXXXXX)"
SERVICE_PID=""
SERVER_PID=""
cleanup() {
  for pid in $SERVICE_PID $SERVER_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

PROJECT="$ROOT/samples/KvEngine.CacheService"
APP="$PROJECT/bin/Release/net10.0/KvEngine.CacheService.dll"
if [ "${NO_BUILD:-0}" != 1 ]; then
  dotnet build "$PROJECT" -c Release -v q -nologo >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; exit 1; }
fi

# Waits until $1 (a URL) answers or the process $2 exits; 60 s at most.
wait_http() {
  for _ in $(seq 600); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Waits until a Redis-protocol server answers PING on port $1, or the process $2 exits (redis-cli).
wait_redis() {
  for _ in $(seq 600); do
    if [ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]; then return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Starts the service with the extra configuration arguments "$@" and waits for /health.
start_service() {
  dotnet "$APP" --Urls="http://127.0.0.1:$PORT" --Logging:LogLevel:Default=Warning \
    --CacheService:MaxValueBytes=$((VALUE_SIZE * 2 + 1024)) "$@" >"$WORK/service.log" 2>&1 &
  SERVICE_PID=$!
  if ! wait_http "http://127.0.0.1:$PORT/health" "$SERVICE_PID"; then
    echo "error: the service did not start:" >&2
    cat "$WORK/service.log" >&2
    exit 1
  fi
}

stop_service() {
  kill -TERM "$SERVICE_PID" 2>/dev/null || true
  wait "$SERVICE_PID" 2>/dev/null || true
  SERVICE_PID=""
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}

# Pre-populates every key, then runs wrk; prints the markdown row for backend $1.
measure() {
  head -c "$VALUE_SIZE" /dev/zero | tr '\0' 'v' >"$WORK/value.bin"
  curl -sS --no-progress-meter -f -Z --parallel-max 16 -X PUT -H 'Content-Type: application/octet-stream' \
    --data-binary @"$WORK/value.bin" -o /dev/null "http://127.0.0.1:$PORT/cache/key[0-$((KEYS - 1))]"
  local load
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$ROOT/benchmarks/scripts/cache_service_load.lua" \
    "http://127.0.0.1:$PORT" >"$WORK/wrk-$1.txt" 2>&1
  local line
  line="$(grep '^RESULT ' "$WORK/wrk-$1.txt")" || { cat "$WORK/wrk-$1.txt" >&2; exit 1; }
  local rps p50 p99 errors
  rps="$(sed -E 's/.* rps=([0-9]+).*/\1/' <<<"$line")"
  p50="$(sed -E 's/.* p50_us=([0-9]+).*/\1/' <<<"$line")"
  p99="$(sed -E 's/.* p99_us=([0-9]+).*/\1/' <<<"$line")"
  errors="$(awk '{ s = 0; for (i = 1; i <= NF; i++) if ($i ~ /^errors_/) { split($i, kv, "="); s += kv[2] } print s }' <<<"$line")"
  awk -v b="$2" -v r="$rps" -v p50="$p50" -v p99="$p99" -v e="$errors" -v w="$CONNECTIONS c, $THREADS t, $DURATION" -v l="$load" \
    'BEGIN { printf "| %s | %s | %.2f | %.2f | %s | %s | %s |\n", b, r, p50 / 1000, p99 / 1000, e, w, l }'
}

# Starts a Redis-protocol server (the command "$4"...) on loopback port $3, measures the service on
# it as backend $1 (row label $2), then stops both.
measure_redis_protocol() {
  local name="$1" label="$2" port="$3"
  shift 3
  "$@" >"$WORK/$name-server.log" 2>&1 &
  SERVER_PID=$!
  wait_redis "$port" "$SERVER_PID" || { cat "$WORK/$name-server.log" >&2; exit 1; }
  start_service --Cache:Backend=Redis --Cache:Redis:Configuration="127.0.0.1:$port"
  measure "$name" "$label"
  stop_service
  stop_server
}

echo "| backend | requests/s | p50 (ms) | p99 (ms) | errors | wrk | load avg (1/5/15 min) before |"
echo "| --- | ---: | ---: | ---: | ---: | --- | --- |"
for backend in "${BACKENDS[@]}"; do
  case "$backend" in
    kvengine)
      start_service --Cache:Backend=KvEngine --KvEngineCache:Path="$WORK/kvengine-data"
      measure kvengine "KvEngineCache (embedded)"
      stop_service
      ;;
    redis)
      if ! command -v redis-server >/dev/null; then
        echo "| RedisCache → redis-server | not run: redis-server is not installed | | | | | |"
        continue
      fi
      measure_redis_protocol redis "RedisCache → redis-server $(redis-server --version | sed -E 's/.*v=([0-9.]+).*/\1/')" "$REDIS_PORT" \
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --dir "$WORK"
      ;;
    garnet)
      GARNET="${GARNET:-$(command -v garnet-server || true)}"
      if [ -z "$GARNET" ]; then
        if dotnet tool install --tool-path "$WORK/garnet" garnet-server >"$WORK/garnet-install.log" 2>&1; then
          GARNET="$WORK/garnet/garnet-server"
        else
          echo "| RedisCache → Garnet | not run: \`dotnet tool install garnet-server\` failed: $(tail -1 "$WORK/garnet-install.log") | | | | | |"
          continue
        fi
      fi
      measure_redis_protocol garnet "RedisCache → Garnet" "$GARNET_PORT" "$GARNET" --port "$GARNET_PORT" --bind 127.0.0.1
      ;;
    *)
      echo "error: unknown backend '$backend' (kvengine, redis, garnet)" >&2
      exit 2
      ;;
  esac
done
