using System.Buffers;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// One uncompressed block (without its trailer), parsed just enough to find its restart array;
/// entries are decoded, with bounds checks, by <see cref="BlockCursor"/>. A data block at most
/// 64 KiB may carry RocksDB's data-block hash index (top bit of the last word set):
/// <code>
/// DataBlockWithHash := entry* restart: fixed32[n] bucket: byte[num_buckets] num_buckets: fixed16 footer: fixed32
///   footer := (1 &lt;&lt; 31) | n
/// </code>
/// The hash index is skipped (binary search over the restarts is always used).
/// Owns <see cref="Data"/>: when it was rented from <see cref="ArrayPool{T}.Shared"/>, Dispose
/// returns it, after which no cursor may use the block. Immutable otherwise; concurrent readers are
/// fine until Dispose.
/// </summary>
internal sealed class Block : IDisposable
{
    private const int MaxBlockSizeWithHashIndex = 1 << 16;
    private readonly string _fileName;
    private readonly string _kind;
    private readonly ulong _offset;
    private bool _pooled;

    /// <summary>Wraps <paramref name="data"/>[0..<paramref name="length"/>); throws <see cref="KvCorruptionException"/> when malformed.</summary>
    public Block(byte[] data, int length, bool pooled, bool isDataBlock, string fileName, string kind = "", ulong offset = 0)
    {
        Data = data;
        Length = length;
        _fileName = fileName;
        _kind = kind;
        _offset = offset;
        _pooled = pooled;
        if (length < 4)
        {
            Throw(Source, $"block of {length} bytes is too short for its restart count");
        }
        uint footer = Coding.DecodeFixed32(data.AsSpan(length - 4));
        long restartsEnd = length - 4;
        uint restarts = footer;
        if (isDataBlock && length <= MaxBlockSizeWithHashIndex && (footer & 0x8000_0000u) != 0)
        {
            restarts = footer & 0x7FFF_FFFFu;
            if (restartsEnd < 2)
            {
                Throw(Source, "data block hash index is truncated");
            }
            int buckets = data[length - 6] | (data[length - 5] << 8);
            restartsEnd -= 2 + buckets;
        }
        long restartsOffset = restartsEnd - (4L * restarts);
        if (restartsOffset < 0)
        {
            Throw(Source, $"block of {length} bytes cannot hold {restarts} restart points");
        }
        if (restarts == 0 && restartsOffset != 0)
        {
            Throw(Source, "block has entries but no restart points");
        }
        RestartsOffset = (int)restartsOffset;
        NumRestarts = (int)restarts;
    }

    public byte[] Data { get; private set; }

    /// <summary>Bytes of block content in <see cref="Data"/>.</summary>
    public int Length { get; }

    /// <summary>Offset of the restart array, which is also where the entries end.</summary>
    public int RestartsOffset { get; }

    public int NumRestarts { get; }

    /// <summary>Names the file and block in corruption messages (formatted on demand).</summary>
    public string Source => _kind.Length == 0 ? _fileName : $"{_fileName}: {_kind} block at offset {_offset}";

    /// <summary>The offset of restart point <paramref name="index"/>; corruption when it points outside the entries.</summary>
    public int RestartPoint(int index)
    {
        uint offset = Coding.DecodeFixed32(Data.AsSpan(RestartsOffset + (4 * index)));
        if (offset >= (uint)RestartsOffset)
        {
            Throw(Source, $"restart point {index} at {offset} lies outside the entries");
        }
        return (int)offset;
    }

    public void Dispose()
    {
        if (_pooled)
        {
            _pooled = false;
            byte[] data = Data;
            Data = [];
            ArrayPool<byte>.Shared.Return(data);
        }
    }

    public static void Throw(string source, string what) => throw new KvCorruptionException($"{source}: {what}.");
}
