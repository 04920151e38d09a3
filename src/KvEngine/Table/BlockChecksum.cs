using System.IO.Hashing;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// The fixed32 checksum in a block trailer, over the block bytes and the trailer's compression
/// type byte (RocksDB's ComputeBuiltinChecksumWithLastByte, table/format.cc):
/// <code>
/// Crc32C   : mask(crc32c(block ++ type))
/// XxHash   : XXH32(block ++ type, seed 0)
/// XxHash64 : lo32(XXH64(block ++ type, seed 0))
/// Xxh3     : lo32(XXH3_64(block)) ^ (type * 0x6b9083d9)
/// </code>
/// XXH3, XXH32 and XXH64 come from System.IO.Hashing; CRC32C from the CPU instruction
/// (<see cref="Crc32C"/>). Stateless and thread-safe.
/// </summary>
internal static class BlockChecksum
{
    /// <summary>XXH3's multiplier of the type byte (RocksDB's kRandomPrime).</summary>
    internal const uint LastBytePrime = 0x6b9083d9U;

    public static uint Compute(ChecksumType type, ReadOnlySpan<byte> block, byte typeByte)
    {
        ReadOnlySpan<byte> last = [typeByte];
        return type switch
        {
            ChecksumType.None => 0,
            ChecksumType.Crc32C => Crc32C.Mask(Crc32C.Extend(Crc32C.Compute(block), last)),
            ChecksumType.XxHash => LegacyXxHash.Hash32(block, last),
            ChecksumType.XxHash64 => (uint)LegacyXxHash.Hash64(block, last),
            ChecksumType.Xxh3 => (uint)XxHash3.HashToUInt64(block) ^ (typeByte * LastBytePrime),
            _ => throw new ArgumentOutOfRangeException(nameof(type), type, "unknown checksum type"),
        };
    }
}
