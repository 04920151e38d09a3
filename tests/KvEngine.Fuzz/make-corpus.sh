#!/usr/bin/env bash
# Regenerates the seed corpora in corpus/<target>/ (docs/fuzzing.md): kv-* files from KvEngine's
# own writers (KvEngine.Fuzz seeds), rocksdb-* files from RocksDB 7.8's db_bench (tables in several
# format versions, compressions, checksums and index/filter layouts; their MANIFESTs and WALs; the
# WAL records' WriteBatch payloads). Deterministic apart from db_bench's random keys and the
# MANIFEST's DB id, so a rerun rewrites the rocksdb-* files with different but equivalent bytes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$corpus"
mkdir -p "$corpus"/{table,wal,manifest,writebatch}

dotnet run --project "$here/KvEngine.Fuzz.csproj" -c Release -- seeds "$corpus"

# name | db_bench flags (small tables: 150 keys, 256-byte blocks)
variants=(
  "fv5-snappy-xxh3|-format_version=5 -compression_type=snappy -checksum_type=4 -bloom_bits=10"
  "fv4-zlib-crc32c|-format_version=4 -compression_type=zlib -checksum_type=1 -bloom_bits=10"
  "fv3-lz4-xxhash|-format_version=3 -compression_type=lz4 -checksum_type=2"
  "fv2-none-xxhash64|-format_version=2 -compression_type=none -checksum_type=3 -bloom_bits=10"
  "fv5-zstd-partitioned|-format_version=5 -compression_type=zstd -partition_index_and_filters=true -bloom_bits=10 -metadata_block_size=128"
  "fv5-none-nochecksum|-format_version=5 -compression_type=none -checksum_type=0 -bloom_bits=10"
  "fv5-none-nochecksum-partitioned|-format_version=5 -compression_type=none -checksum_type=0 -partition_index_and_filters=true -bloom_bits=10 -metadata_block_size=128"
)
common="-num=150 -key_size=12 -value_size=20 -block_size=256 -threads=1 -seed=42 -stats_interval_seconds=0"
for v in "${variants[@]}"; do
  name=${v%%|*}
  flags=${v#*|}
  db=$tmp/$name
  # shellcheck disable=SC2086
  db_bench -benchmarks=fillrandom,compact -db="$db" $common $flags >/dev/null
  n=0
  for f in "$db"/*.sst; do cp "$f" "$corpus/table/rocksdb-$name-$n.sst"; n=$((n + 1)); done
  cp "$(ls "$db"/MANIFEST-* | head -1)" "$corpus/manifest/rocksdb-$name-MANIFEST"
done

# A WAL: writes left in the log (RocksDB does not flush a WAL-backed memtable at close). db_bench
# 7.8 cannot write recyclable logs; kv-recyclable.log covers those.
db=$tmp/wal
db_bench -benchmarks=fillrandom -db="$db" -num=100 -key_size=12 -value_size=20 -batch_size=4 -threads=1 -seed=7 >/dev/null
cp "$(ls -S "$db"/*.log | head -1)" "$corpus/wal/rocksdb-plain.log"
# A zstd-compressed WAL (wal_compression): well-formed, refused with KvException ("-unsupported").
db=$tmp/walz
db_bench -benchmarks=fillrandom -db="$db" -num=50 -key_size=12 -value_size=20 -batch_size=4 -threads=1 -seed=9 -wal_compression=zstd >/dev/null
cp "$(ls -S "$db"/*.log | head -1)" "$corpus/wal/rocksdb-zstd-unsupported.log"

# WriteBatch payloads: the first full records of the plain WAL (header: crc32c 4, length 2, type 1).
python3 - "$corpus/wal/rocksdb-plain.log" "$corpus/writebatch" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
pos, n = 0, 0
while pos + 7 <= len(data) and n < 4:
    length, kind = struct.unpack_from('<HB', data, pos + 4)
    if kind == 1:
        open(f"{sys.argv[2]}/rocksdb-batch{n}.bin", 'wb').write(data[pos + 7:pos + 7 + length])
        n += 1
    pos += 7 + length
PY
du -sh "$corpus"/*
