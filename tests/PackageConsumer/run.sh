#!/usr/bin/env bash
# Packs KvEngine and KvEngine.Extensions.Caching with a unique prerelease version into a temporary
# folder, then builds and runs tests/PackageConsumer against those packages as an outside
# application would: the project is
# copied out of the repository (no Directory.*.props apply), restored through its own NuGet.config
# (the folder holding the new .nupkg plus nuget.org) into a dedicated, empty packages folder, so
# neither the global NuGet cache nor an earlier run can serve a stale KvEngine.
# Exit status: 0 when the consumer's Put/Get with LZ4 succeeded. Used by .ci/run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvengine-consumer.XXXXXX")"
trap 'rm -rf "$work"' EXIT

version="0.1.0-ci.$(date -u +%Y%m%d%H%M%S).$$"
echo "# package consumer: packing KvEngine and KvEngine.Extensions.Caching $version"
for project in KvEngine KvEngine.Extensions.Caching; do
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
