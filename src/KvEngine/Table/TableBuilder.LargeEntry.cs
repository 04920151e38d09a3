using System.Buffers;
using KvEngine.Compression;
using KvEngine.Util;
using Snappier;

namespace KvEngine.Table;

// A large value's data block, written in pieces (the same bytes BlockBuilder would assemble):
//   block := header  key  value  restarts  num_restarts
//   header := shared: varint32 (0)  non_shared: varint32  value_length: varint32
//   restarts := fixed32 (0)   num_restarts := fixed32 (1)
// Uncompressed: header, key, value and the 8-byte tail go to the file as they are, the checksum
// accumulated over them. Snappy: the four pieces are one ReadOnlySequence that the codec reads
// fragment by fragment (64 KiB at a time), twice: first only to count the compressed size (given
// up as soon as it passes RocksDB's GoodCompressionRatio limit, raw - raw / 8), then, if it is
// small enough, into a scratch buffer that goes to the file fragment by fragment.

/// <summary>The large-value path of <see cref="TableBuilder"/> (see the header comment of this file).</summary>
internal sealed partial class TableBuilder
{
    /// <summary>
    /// Smallest value that gets a data block of its own written in pieces (when it is also at
    /// least a block and the compression is None or Snappy): assembling it in a block buffer and
    /// compressing that into another would cost two more copies of the value while the memtable
    /// (or the compaction input block) still holds it.
    /// </summary>
    internal const int LargeValueMinBytes = 1 << 20;

    private const int TailBytes = 8; // restarts [0] and num_restarts 1

    private bool IsLargeValue(int valueLength) =>
        valueLength >= LargeValueMinBytes && valueLength >= _options.BlockSize &&
        _options.Compression is CompressionType.None or CompressionType.Snappy;

    /// <summary>Writes one entry as a data block of its own (see the header comment) and returns its handle.</summary>
    private unsafe BlockHandle WriteLargeEntryBlock(ReadOnlySpan<byte> internalKey, ReadOnlySpan<byte> value)
    {
        byte[] header = new byte[3 * Coding.MaxVarint32Length];
        int headerLength = Coding.EncodeVarint32(header, 0);
        headerLength += Coding.EncodeVarint32(header.AsSpan(headerLength), (uint)internalKey.Length);
        headerLength += Coding.EncodeVarint32(header.AsSpan(headerLength), (uint)value.Length);
        byte[] tail = new byte[TailBytes];
        Coding.EncodeFixed32(tail.AsSpan(4), 1);
        long raw = headerLength + (long)internalKey.Length + value.Length + TailBytes;
        fixed (byte* key = internalKey)
        fixed (byte* val = value)
        {
            var first = new BlockPiece(header.AsMemory(0, headerLength));
            BlockPiece last = first
                .Append(new PointerMemoryManager(key, internalKey.Length).Memory)
                .Append(new PointerMemoryManager(val, value.Length).Memory)
                .Append(tail);
            var block = new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
            var checksum = new BlockChecksumAccumulator(_options.Checksum);
            ulong offset = _offset;
            CompressionType type = CompressionType.None;
            long payload;
            if (_options.Compression == CompressionType.Snappy && SnappyFits(block, raw - (raw / 8) - 1))
            {
                using var output = new FileBlockWriter(_file, checksum);
                Snappy.Compress(block, output);
                payload = output.Written;
                type = CompressionType.Snappy;
            }
            else
            {
                foreach (ReadOnlyMemory<byte> piece in block)
                {
                    checksum.Append(piece.Span);
                    _file.Append(piece.Span);
                }
                payload = raw;
            }
            Span<byte> trailer = stackalloc byte[TableFormat.BlockTrailerSize];
            trailer[0] = (byte)type;
            Coding.EncodeFixed32(trailer[1..], checksum.Finish((byte)type));
            _file.Append(trailer);
            _offset += (ulong)payload + TableFormat.BlockTrailerSize;
            return new BlockHandle(offset, (ulong)payload);
        }
    }

    /// <summary>True when Snappy compresses <paramref name="block"/> to at most <paramref name="limit"/> bytes; stops counting as soon as it passes.</summary>
    private static bool SnappyFits(ReadOnlySequence<byte> block, long limit)
    {
        using var probe = new SizeProbe(limit);
        try
        {
            Snappy.Compress(block, probe);
            return true;
        }
        catch (SizeProbe.LimitExceededException)
        {
            return false;
        }
    }

    /// <summary>One piece of a block given as a sequence.</summary>
    private sealed class BlockPiece : ReadOnlySequenceSegment<byte>
    {
        public BlockPiece(ReadOnlyMemory<byte> memory) => Memory = memory;

        public BlockPiece Append(ReadOnlyMemory<byte> memory)
        {
            var next = new BlockPiece(memory) { RunningIndex = RunningIndex + Memory.Length };
            Next = next;
            return next;
        }
    }

    /// <summary>A codec's output in one reused scratch buffer; the owner disposes it (returns the scratch).</summary>
    private abstract class ScratchWriter : IBufferWriter<byte>, IDisposable
    {
        private byte[] _scratch = ArrayPool<byte>.Shared.Rent(128 << 10);

        public long Written { get; private set; }

        public void Advance(int count)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(count);
            ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _scratch.Length);
            Written += count;
            Take(_scratch.AsSpan(0, count));
        }

        public Memory<byte> GetMemory(int sizeHint = 0)
        {
            Reserve(sizeHint);
            return _scratch;
        }

        public Span<byte> GetSpan(int sizeHint = 0)
        {
            Reserve(sizeHint);
            return _scratch;
        }

        public void Dispose()
        {
            ArrayPool<byte>.Shared.Return(_scratch);
            _scratch = [];
        }

        /// <summary>The bytes of one Advance.</summary>
        protected abstract void Take(ReadOnlySpan<byte> output);

        private void Reserve(int sizeHint)
        {
            if (sizeHint > _scratch.Length)
            {
                ArrayPool<byte>.Shared.Return(_scratch);
                _scratch = ArrayPool<byte>.Shared.Rent(sizeHint);
            }
        }
    }

    /// <summary>Counts the output and throws <see cref="LimitExceededException"/> once it passes the limit.</summary>
    private sealed class SizeProbe(long limit) : ScratchWriter
    {
        protected override void Take(ReadOnlySpan<byte> output)
        {
            if (Written > limit)
            {
                throw new LimitExceededException();
            }
        }

        /// <summary>Ends a probe whose output got too large (caught by <see cref="SnappyFits"/> alone).</summary>
        internal sealed class LimitExceededException : Exception
        {
        }
    }

    /// <summary>Appends the output to the table file as it comes, checksummed.</summary>
    private sealed class FileBlockWriter(Storage.IWritableFile file, BlockChecksumAccumulator checksum) : ScratchWriter
    {
        protected override void Take(ReadOnlySpan<byte> output)
        {
            checksum.Append(output);
            file.Append(output);
        }
    }
}
