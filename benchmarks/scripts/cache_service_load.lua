-- wrk script for cache_service_load.sh: 90% GET / 10% PUT over a fixed key set, each PUT a value
-- of VALUE_SIZE bytes, keys drawn uniformly ("key0" .. "key<KEYS-1>", pre-populated by the script).
-- Prints one machine-readable RESULT line at the end (latencies in microseconds).
local keys = tonumber(os.getenv("KEYS") or "10000")
local value_size = tonumber(os.getenv("VALUE_SIZE") or "1024")
local put_percent = tonumber(os.getenv("PUT_PERCENT") or "10")
local value = string.rep("v", value_size)
local thread_count = 0

function setup(thread)
  thread:set("id", thread_count)
  thread_count = thread_count + 1
end

function init(args)
  math.randomseed(1000003 * (id + 1))
end

function request()
  local path = "/cache/key" .. math.random(0, keys - 1)
  if math.random(1, 100) <= put_percent then
    return wrk.format("PUT", path, { ["Content-Type"] = "application/octet-stream" }, value)
  end
  return wrk.format("GET", path)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT requests=%d duration_us=%d rps=%.0f p50_us=%d p99_us=%d max_us=%d errors_connect=%d errors_read=%d errors_write=%d errors_status=%d errors_timeout=%d\n",
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
