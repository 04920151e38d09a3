using System.IO.Hashing;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// <see cref="BlockChecksum.Compute"/> over a block given in pieces: <see cref="Append"/> each piece
/// in order, then <see cref="Finish"/> with the trailer's type byte gives what Compute gives for
/// their concatenation. For a block written without being assembled in memory (a value of a block
/// of its own, <see cref="TableBuilder"/>). One block per instance; not thread-safe.
/// </summary>
internal sealed class BlockChecksumAccumulator
{
    private readonly ChecksumType _type;
    private readonly NonCryptographicHashAlgorithm? _hash;
    private uint _crc;

    public BlockChecksumAccumulator(ChecksumType type)
    {
        _type = type;
        _hash = type switch
        {
            ChecksumType.None or ChecksumType.Crc32C => null,
            ChecksumType.XxHash => new XxHash32(),
            ChecksumType.XxHash64 => new XxHash64(),
            ChecksumType.Xxh3 => new XxHash3(),
            _ => throw new ArgumentOutOfRangeException(nameof(type), type, "unknown checksum type"),
        };
    }

    /// <summary>Adds the next piece of the block.</summary>
    public void Append(ReadOnlySpan<byte> piece)
    {
        if (_type == ChecksumType.Crc32C)
        {
            _crc = Crc32C.Extend(_crc, piece);
        }
        else
        {
            _hash?.Append(piece);
        }
    }

    /// <summary>The trailer's checksum of the pieces appended and <paramref name="typeByte"/>.</summary>
    public uint Finish(byte typeByte)
    {
        ReadOnlySpan<byte> last = [typeByte];
        switch (_type)
        {
            case ChecksumType.None:
                return 0;
            case ChecksumType.Crc32C:
                return Crc32C.Mask(Crc32C.Extend(_crc, last));
            case ChecksumType.XxHash:
                _hash!.Append(last);
                return ((XxHash32)_hash).GetCurrentHashAsUInt32();
            case ChecksumType.XxHash64:
                _hash!.Append(last);
                return (uint)((XxHash64)_hash).GetCurrentHashAsUInt64();
            default:
                return (uint)((XxHash3)_hash!).GetCurrentHashAsUInt64() ^ (typeByte * BlockChecksum.LastBytePrime);
        }
    }
}
