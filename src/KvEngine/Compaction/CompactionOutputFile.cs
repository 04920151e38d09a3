using KvEngine.Format;
using KvEngine.Versions;
using KvEngine.RangeDel;
using KvEngine.RateLimiting;
using KvEngine.Storage;
using KvEngine.Table;

namespace KvEngine.Compaction;

/// <summary>
/// One table being written by a compaction: the file, its builder, and the metadata gathered as
/// entries arrive (key range, sequence range, estimated size). <see cref="Finish"/> completes the
/// table and fsyncs the file; <see cref="Abandon"/> closes it unfinished (the caller deletes it).
/// Range tombstones come last (<see cref="AddRangeTombstones"/>) and widen the file's boundaries
/// as RocksDB's CompactionOutputs::AddRangeDels does.
/// Not thread-safe.
/// </summary>
internal sealed class CompactionOutputFile : IDisposable
{
    private readonly IWritableFile _file;
    private readonly TableBuilder _builder;
    private ulong _smallestSeq = ulong.MaxValue;
    private ulong _largestSeq;
    private long _lastFileSize;
    private long _unflushedBytes;
    private byte[]? _tombstoneSmallest;
    private byte[]? _tombstoneLargest;
    private bool _closed;

    public CompactionOutputFile(ulong number, string path, IFileSystem fs, TableOptions options, TableBuildContext? context = null,
        BackgroundWriteLimit? writeLimit = null)
    {
        Number = number;
        Path = path;
        _file = RateLimitedWritableFile.Wrap(fs.CreateWritable(path, options.UseDirectWrites), writeLimit, KvIOPriority.Low);
        try
        {
            _builder = new TableBuilder(options, _file, context);
        }
        catch
        {
            _file.Dispose();
            throw;
        }
    }

    public ulong Number { get; }

    public string Path { get; }

    public long NumEntries => _builder.NumEntries;

    /// <summary>Recorded in the file's metadata at <see cref="Finish"/> (see <see cref="FileMetaData.CompensatedRangeDeletionSize"/>).</summary>
    public ulong CompensatedRangeDeletionSize { get; set; }

    /// <summary>Bytes written so far plus the raw size of the data block not yet written.</summary>
    public long EstimatedSize => _builder.FileSize + _unflushedBytes;

    public void Add(ReadOnlySpan<byte> internalKey, ReadOnlySpan<byte> value)
    {
        _builder.Add(internalKey, value);
        ulong seq = InternalKeys.Sequence(internalKey);
        _smallestSeq = Math.Min(_smallestSeq, seq);
        _largestSeq = Math.Max(_largestSeq, seq);
        if (_builder.FileSize != _lastFileSize)
        {
            _lastFileSize = _builder.FileSize;
            _unflushedBytes = 0;
        }
        _unflushedBytes += internalKey.Length + value.Length;
    }

    /// <summary>
    /// Writes, whole, every fragment of <paramref name="tombstones"/> overlapping this file's share
    /// of the key space [<paramref name="lower"/>, <paramref name="upper"/>) (null: unbounded; lower
    /// is this file's first point key, upper the next file's), and widens the boundaries to the
    /// overlap, clamped to that share: smallest = the first start (at its newest sequence), or
    /// lower@0:RangeDeletion when the tombstone starts before lower; largest = the sentinel of the
    /// last end, or of upper when the tombstone runs past it. So the file claims exactly the keys
    /// its tombstones may delete there, and never the next file's first user key.
    /// </summary>
    public void AddRangeTombstones(FragmentedRangeTombstoneList tombstones, byte[]? lower, byte[]? upper, out int first, out int last)
    {
        first = lower == null ? 0 : tombstones.FindFragment(lower);
        last = first;
        while (last < tombstones.Count && (upper == null || tombstones.Start(last).SequenceCompareTo(upper) < 0))
        {
            last++;
        }
        if (last == first)
        {
            return;
        }
        RangeTombstoneWriter.Add(_builder, tombstones, first, last, out byte[] smallest, out _, out ulong minSeq, out ulong maxSeq);
        if (lower != null && tombstones.Start(first).SequenceCompareTo(lower) < 0)
        {
            smallest = InternalKeys.Create(lower, 0, Format.ValueType.RangeDeletion);
        }
        ReadOnlySpan<byte> end = tombstones.End(last - 1);
        if (upper != null && end.SequenceCompareTo(upper) > 0)
        {
            end = upper;
        }
        _tombstoneSmallest = smallest;
        _tombstoneLargest = RangeTombstoneWriter.Sentinel(end);
        _smallestSeq = Math.Min(_smallestSeq, minSeq);
        _largestSeq = Math.Max(_largestSeq, maxSeq);
    }

    /// <summary>When the file was created (Unix seconds, the job's clock); 0: the system clock at <see cref="Finish"/>.</summary>
    public ulong CreationTime { get; init; }

    /// <summary>Finishes the table, fsyncs and closes the file, and describes it.</summary>
    public FileMetaData Finish(ulong oldestAncesterTime)
    {
        byte[] smallest = _builder.SmallestKey.ToArray();
        byte[] largest = _builder.LargestKey.ToArray();
        if (_tombstoneSmallest != null && (smallest.Length == 0 || InternalKeyComparer.Compare(_tombstoneSmallest, smallest) < 0))
        {
            smallest = _tombstoneSmallest;
        }
        if (_tombstoneLargest != null && (largest.Length == 0 || InternalKeyComparer.Compare(_tombstoneLargest, largest) > 0))
        {
            largest = _tombstoneLargest;
        }
        _builder.Finish();
        _file.Sync();
        _closed = true;
        _builder.Dispose();
        _file.Dispose();
        ulong now = CreationTime != 0 ? CreationTime : (ulong)DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        return new FileMetaData
        {
            Number = Number,
            FileSize = (ulong)_builder.FileSize,
            Smallest = smallest,
            Largest = largest,
            SmallestSeqno = _smallestSeq,
            LargestSeqno = _largestSeq,
            OldestAncesterTime = oldestAncesterTime == 0 ? now : oldestAncesterTime,
            CompensatedRangeDeletionSize = CompensatedRangeDeletionSize,
            FileCreationTime = now,
        };
    }

    /// <summary>Closes the file without completing the table.</summary>
    public void Abandon()
    {
        if (_closed)
        {
            return;
        }
        _closed = true;
        _builder.Abandon();
        _builder.Dispose();
        try
        {
            _file.Dispose();
        }
        catch (IOException)
        {
            // The file is deleted by the caller or swept as obsolete at the next open.
        }
    }

    public void Dispose() => Abandon();
}
