#!/usr/bin/env bash
# Packs KvEngine, KvEngine.Extensions.Caching and KvEngine.Replication with a unique prerelease version into a temporary
# folder, then builds and runs tests/PackageConsumer against those packages as an outside
# application would: the project is
# copied out of the repository (no Directory.*.props apply), restored through its own NuGet.config
# (the folder holding the new .nupkg plus nuget.org) into a dedicated, empty packages folder, so
# neither the global NuGet cache nor an earlier run can serve a stale KvEngine.
# Then packs KvEngine.Tool into the same folder, installs it into a temporary tool path with
# `dotnet tool install --add-source`, and checks that `kvtool scan --db <db> --hex` on a small
# database written by RocksDB 7.8's db_bench prints byte for byte what `ldb --hex scan` prints.
# Exit status: 0 when the consumer's Put/Get with LZ4, its cache and its one-node Raft write
# succeeded and kvtool matched ldb. Used by .ci/run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvengine-consumer.XXXXXX")"
trap 'rm -rf "$work"' EXIT

version="0.1.0-ci.$(date -u +%Y%m%d%H%M%S).$$"
echo "# package consumer: packing KvEngine, KvEngine.Extensions.Caching and KvEngine.Replication $version"
for project in KvEngine KvEngine.Extensions.Caching KvEngine.Replication; do
  dotnet pack "$repo/src/$project/$project.csproj" -c Release -o "$work/feed" -p:Version="$version" --nologo -v quiet
  test -f "$work/feed/$project.$version.nupkg"
  test -f "$work/feed/$project.$version.snupkg"
done

mkdir -p "$work/consumer"
cp "$repo/tests/PackageConsumer/PackageConsumer.csproj" "$repo/tests/PackageConsumer/Program.cs" "$work/consumer/"
cat > "$work/consumer/NuGet.config" <<CONFIG
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="local" value="$work/feed" />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
  </packageSources>
  <config>
    <add key="globalPackagesFolder" value="$work/packages" />
  </config>
</configuration>
CONFIG

echo "# package consumer: restoring and running against $work/feed"
dotnet run --project "$work/consumer/PackageConsumer.csproj" -c Release -p:KvEngineVersion="$version" -- "$version"

echo "# package consumer: packing KvEngine.Tool $version and installing kvtool from $work/feed"
dotnet pack "$repo/src/KvEngine.Tool/KvEngine.Tool.csproj" -c Release -o "$work/feed" -p:Version="$version" --nologo -v quiet
test -f "$work/feed/KvEngine.Tool.$version.nupkg"
dotnet tool install KvEngine.Tool --version "$version" --tool-path "$work/tools" --add-source "$work/feed" \
  --configfile "$work/consumer/NuGet.config"
kvtool="$work/tools/kvtool"

echo "# package consumer: kvtool scan --hex against ldb --hex scan on a db_bench 7.8 database"
db_bench --benchmarks=fillrandom --num=2000 --key_size=16 --value_size=64 --compression_type=snappy \
  --write_buffer_size=65536 --disable_auto_compactions=true --seed=7 --db="$work/dbbench" >/dev/null 2>"$work/db_bench.err" \
  || { cat "$work/db_bench.err" >&2; exit 1; }
mkdir "$work/ldbcopy"
# ldb replays the WAL and writes a new MANIFEST: it reads a copy; kvtool opens read-only.
find "$work/dbbench" -maxdepth 1 -type f ! -name LOCK -exec cp {} "$work/ldbcopy/" \;
ldb --db="$work/ldbcopy" --hex scan > "$work/ldb-scan.txt"
"$kvtool" scan --db "$work/dbbench" --hex > "$work/kvtool-scan.txt"
test -s "$work/ldb-scan.txt"
cmp "$work/ldb-scan.txt" "$work/kvtool-scan.txt"
echo "# package consumer: kvtool scan matches ldb ($(wc -l < "$work/kvtool-scan.txt") keys)"
