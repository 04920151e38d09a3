#!/usr/bin/env bash
# Coverage-guided fuzzing of one target with AFL++ and SharpFuzz (docs/fuzzing.md).
#   tests/KvEngine.Fuzz/run.sh <table|wal|manifest|writebatch> [seconds]   (default 600)
# Builds the fuzz project into $KVFUZZ_WORK (default /tmp/kvengine-fuzz), instruments KvEngine.dll
# there with the sharpfuzz tool, and runs one AFL++ instance (nice +10) seeded with
# corpus/<target>/ and the committed regressions. Findings land in $KVFUZZ_WORK/findings/<target>/
# (crashes/, hangs/); replay one with
#   dotnet $KVFUZZ_WORK/build/KvEngine.Fuzz.dll replay <target> <file>
# Needs: afl-fuzz (apt-get install afl++), sharpfuzz (dotnet tool install --global SharpFuzz.CommandLine).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?usage: run.sh <table|wal|manifest|writebatch> [seconds]}
seconds=${2:-600}
case "$target" in table|wal|manifest|writebatch) ;; *) echo "unknown target $target" >&2; exit 2 ;; esac
export PATH="$PATH:$HOME/.dotnet/tools"
command -v afl-fuzz >/dev/null || { echo "afl-fuzz not found: apt-get install afl++" >&2; exit 1; }
command -v sharpfuzz >/dev/null || { echo "sharpfuzz not found: dotnet tool install --global SharpFuzz.CommandLine" >&2; exit 1; }

work=${KVFUZZ_WORK:-/tmp/kvengine-fuzz}
build=$work/build
mkdir -p "$work"
# One instrumented build shared by every target; rebuilt when the sources are newer.
(
  flock 9
  if [ ! -f "$build/.instrumented" ] || [ -n "$(find "$here/../../src/KvEngine" "$here" -name '*.cs' -newer "$build/.instrumented" -print -quit)" ]; then
    rm -rf "$build"
    dotnet build "$here/KvEngine.Fuzz.csproj" -c Release -o "$build" -nologo -v q
    sharpfuzz "$build/KvEngine.dll"
    touch "$build/.instrumented"
  fi
) 9>"$work/build.lock"

# Seeds: the committed corpus plus every committed crash input (minimised ones make good seeds).
seeds=$work/seeds/$target
rm -rf "$seeds"
mkdir -p "$seeds"
cp "$here/corpus/$target"/* "$seeds/"
if [ -d "$here/regressions/$target" ]; then
  for f in "$here/regressions/$target"/*; do cp "$f" "$seeds/regression-$(basename "$f")"; done
fi

out=$work/findings/$target
mkdir -p "$work/findings"
export AFL_SKIP_BIN_CHECK=1            # a managed program: no AFL instrumentation in the ELF
export AFL_NO_AFFINITY=1               # the machine is shared: do not pin a core
export AFL_SKIP_CPUFREQ=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_NO_UI=1
export AFL_AUTORESUME=1
export DOTNET_TieredPGO=0
# -t: per-input timeout (ms; a hang), -m none: the .NET runtime reserves a lot of address space.
nice -n 10 afl-fuzz -i "$seeds" -o "$out" -t 5000 -m none -V "$seconds" \
  -- dotnet "$build/KvEngine.Fuzz.dll" fuzz "$target" || true
stats=$out/default/fuzzer_stats
if [ -f "$stats" ]; then
  grep -E '^(run_time|execs_done|execs_per_sec|corpus_count|bitmap_cvg|edges_found|total_edges|saved_crashes|saved_hangs)' "$stats"
fi
crashes=$(find "$out/default/crashes" "$out/default/hangs" -type f -name 'id:*' 2>/dev/null | wc -l)
echo "$target: $crashes crash/hang inputs in $out/default/{crashes,hangs}"
[ "$crashes" = "0" ]
