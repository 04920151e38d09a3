using KvEngine.Compaction;
using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.RangeDel;
using KvEngine.Table;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Ingestion;

/// <summary>
/// The ingestion's decisions (RocksDB 7.8's NeedsFlush, AssignLevelAndSeqnoForIngestedFile,
/// IngestedFileFitInLevel, AssignGlobalSeqnoForIngestedFile). "Overlap" with data is an
/// iterator check (a point entry or a range tombstone inside the files' user-key range), "fit" a
/// check of file ranges and running compactions' outputs.
/// </summary>
internal sealed partial class ExternalSstFileIngestionJob
{
    /// <summary>True when the family's memtables (mutable and immutable) hold data in a file's range (RocksDB's RangesOverlapWithMemtables).</summary>
    public bool NeedsFlush(ReadState state)
    {
        foreach (IngestedFileInfo f in _files)
        {
            ReadOnlySpan<byte> lo = InternalKeys.UserKey(f.Smallest);
            ReadOnlySpan<byte> hi = InternalKeys.UserKey(f.Largest);
            if (MemTableOverlaps(state.Mem, lo, hi))
            {
                return true;
            }
            foreach (MemTable imm in state.Immutable)
            {
                if (MemTableOverlaps(imm, lo, hi))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /// <summary>
    /// Writes are stopped and the memtables do not overlap the files. Picks each file's level and
    /// sequence number against <paramref name="pinned"/> (the family's pinned version, read for
    /// data overlap) and <paramref name="current"/> (its newest version, for file ranges), writes
    /// the sequence number into the ingested file when asked, and fills <see cref="Edit"/>.
    /// <paramref name="lastSequence"/> is the database's last sequence number.
    /// </summary>
    public void Run(Version pinned, Version current, CompactionPicker picker, bool hasSnapshots, ulong lastSequence)
    {
        bool forceGlobalSeqno = _options.SnapshotConsistency && hasSnapshots;
        Edit.ColumnFamily = _cfd.Id;
        ulong last = lastSequence;
        ulong now = _cfd.NowSeconds;
        foreach (IngestedFileInfo f in _files)
        {
            ulong seqno = AssignLevelAndSeqno(pinned, current, picker, forceGlobalSeqno, last, f);
            // Only sequence number 0 is replaced: a tombstone's end (the sentinel) keeps its own.
            f.Smallest = WithSequence(f.Smallest, seqno);
            f.Largest = WithSequence(f.Largest, seqno);
            AssignGlobalSeqno(f, seqno);
            if (seqno > last)
            {
                last = seqno;
                ConsumedSeqnoCount++;
            }
            Edit.AddFile(f.PickedLevel, new FileMetaData
            {
                Number = f.FileNumber,
                FileSize = f.FileSize,
                Smallest = f.Smallest,
                Largest = f.Largest,
                SmallestSeqno = seqno,
                LargestSeqno = seqno,
                OldestAncesterTime = now, // the import time, as RocksDB records it
                FileCreationTime = now,
            });
        }
    }

    private ulong AssignLevelAndSeqno(Version pinned, Version current, CompactionPicker picker, bool forceGlobalSeqno, ulong last, IngestedFileInfo f)
    {
        ulong seqno = 0;
        CompactionOptions o = picker.Options;
        // FIFO keeps every file in level 0 (RocksDB requires num_levels = 1 for it).
        int levels = o.Style == CompactionStyle.Fifo ? 1 : o.NumLevels;
        // Universal compaction's sorted runs must stay ordered by age: a file goes below level 0
        // only into a non-empty level, with that level's newest sequence number (RocksDB 7.8).
        bool universal = o.Style == CompactionStyle.Universal;
        if (forceGlobalSeqno)
        {
            seqno = last + 1;
            if (FilesOverlap || universal)
            {
                ThrowIfMustBeBottommost(0, levels);
                f.PickedLevel = 0;
                return seqno;
            }
        }
        ReadOnlySpan<byte> lo = InternalKeys.UserKey(f.Smallest);
        ReadOnlySpan<byte> hi = InternalKeys.UserKey(f.Largest);
        int baseLevel = levels > 1 ? LevelTargets.Compute(current, o).BaseLevel : 1;
        bool overlapWithDb = false;
        int target = 0;
        for (int level = 0; level < levels; level++)
        {
            if (level > 0 && level < baseLevel)
            {
                continue;
            }
            if (pinned.NumFiles(level) > 0 && DataOverlapsLevel(pinned, level, lo, hi))
            {
                // The file must go above this level, with a sequence number newer than its data.
                overlapWithDb = true;
                break;
            }
            if (universal && level > 0)
            {
                ulong levelLargest = 0;
                foreach (FileMetaData file in pinned.Files(level))
                {
                    levelLargest = Math.Max(levelLargest, file.LargestSeqno);
                }
                if (levelLargest == 0 || !FitsInLevel(pinned, current, picker, level, lo, hi))
                {
                    continue; // an empty level, or one whose data carries no sequence number to take
                }
                seqno = levelLargest;
            }
            if (FitsInLevel(pinned, current, picker, level, lo, hi))
            {
                target = level;
            }
        }
        if (FilesOverlap)
        {
            target = 0;
            seqno = last + 1;
        }
        ThrowIfMustBeBottommost(target, levels);
        f.PickedLevel = target;
        if (overlapWithDb && seqno == 0)
        {
            seqno = last + 1;
        }
        return seqno;
    }

    private void ThrowIfMustBeBottommost(int target, int levels)
    {
        if (_options.FailIfNotBottommostLevel && target < levels - 1)
        {
            // RocksDB's TryAgain.
            throw new InvalidOperationException(
                "Files cannot be ingested to Lmax. Please make sure key range of Lmax does not overlap with files to ingest.");
        }
    }

    /// <summary>RocksDB's IngestedFileFitInLevel: level 0 always; another level when no file there and no running compaction's output meets the range.</summary>
    private static bool FitsInLevel(Version pinned, Version current, CompactionPicker picker, int level, ReadOnlySpan<byte> lo, ReadOnlySpan<byte> hi)
    {
        if (level == 0)
        {
            return true;
        }
        return !pinned.OverlapInLevel(level, lo, hi) && !current.OverlapInLevel(level, lo, hi) && !picker.RangeOverlapsRunningOutput(level, lo, hi);
    }

    /// <summary>
    /// RocksDB's OverlapWithLevelIterator: some file of the level holds a point entry in [lo, hi]
    /// (a seek to lo lands at or before hi) or a range tombstone meeting it.
    /// </summary>
    private bool DataOverlapsLevel(Version v, int level, ReadOnlySpan<byte> lo, ReadOnlySpan<byte> hi)
    {
        byte[] seek = InternalKeys.Create(lo, InternalKeys.MaxSequenceNumber, Format.ValueType.ValueTypeForSeek);
        foreach (FileMetaData file in v.LevelFiles(level))
        {
            if (InternalKeys.UserKey(file.Smallest).SequenceCompareTo(hi) > 0 || InternalKeys.UserKey(file.Largest).SequenceCompareTo(lo) < 0)
            {
                continue;
            }
            TableReader reader = _cfd.Tables.Get(file, level);
            if (TombstonesOverlap(reader.RangeTombstones, lo, hi))
            {
                return true;
            }
            using InternalIterator it = reader.NewIterator(verifyChecksums: false, fillCache: true);
            it.Seek(seek);
            if (it.Valid && InternalKeys.UserKey(it.Key).SequenceCompareTo(hi) <= 0)
            {
                return true;
            }
        }
        return false;
    }

    private static bool MemTableOverlaps(MemTable mem, ReadOnlySpan<byte> lo, ReadOnlySpan<byte> hi)
    {
        if (mem.IsEmpty)
        {
            return false;
        }
        if (TombstonesOverlap(mem.GetRangeTombstones(), lo, hi))
        {
            return true;
        }
        using InternalIterator it = mem.NewIterator();
        it.Seek(InternalKeys.Create(lo, InternalKeys.MaxSequenceNumber, Format.ValueType.ValueTypeForSeek));
        return it.Valid && InternalKeys.UserKey(it.Key).SequenceCompareTo(hi) <= 0;
    }

    /// <summary>A tombstone fragment [start, end) meets the user keys [lo, hi].</summary>
    private static bool TombstonesOverlap(FragmentedRangeTombstoneList? list, ReadOnlySpan<byte> lo, ReadOnlySpan<byte> hi)
    {
        if (list == null || list.IsEmpty)
        {
            return false;
        }
        int i = list.FindFragment(lo); // the first fragment ending after lo
        return i < list.Count && list.Start(i).SequenceCompareTo(hi) <= 0;
    }

    private static byte[] WithSequence(byte[] internalKey, ulong seqno)
    {
        if (InternalKeys.Sequence(internalKey) != 0)
        {
            return internalKey;
        }
        return InternalKeys.Create(InternalKeys.UserKey(internalKey), seqno, InternalKeys.Type(internalKey));
    }

    /// <summary>
    /// RocksDB's AssignGlobalSeqnoForIngestedFile: nothing when the file already records
    /// <paramref name="seqno"/>; else, with WriteGlobalSeqno, the 8 bytes of the property value are
    /// overwritten in the ingested file (fixed64 little-endian) and the file synced. The
    /// properties block's checksum is left as it was: readers accept the block when it matches
    /// with those bytes zeroed (TableReader.ReadProperties).
    /// </summary>
    private void AssignGlobalSeqno(IngestedFileInfo f, ulong seqno)
    {
        if (f.OriginalSeqno == seqno)
        {
            f.AssignedSeqno = seqno;
            return;
        }
        if (!_options.AllowGlobalSeqNo)
        {
            throw new InvalidOperationException(
                $"Global seqno is required, but disabled: {f.ExternalPath} overlaps data in the database (or a snapshot exists) and IngestExternalFileOptions.AllowGlobalSeqNo is false.");
        }
        if (f.GlobalSeqnoOffset == 0)
        {
            throw new InvalidOperationException($"{f.ExternalPath}: trying to set a global seqno for a file that has no global seqno field.");
        }
        if (_options.WriteGlobalSeqno)
        {
            Span<byte> value = stackalloc byte[8];
            Util.Coding.EncodeFixed64(value, seqno);
            _fs.WriteAt(f.InternalPath, (long)f.GlobalSeqnoOffset, value);
        }
        f.AssignedSeqno = seqno;
    }
}
