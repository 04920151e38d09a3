using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// What a table's filter holds for each key, as RocksDB 7.8's FullFilterBlockBuilder::Add decides:
/// the whole user key (with whole-key filtering) and, with a prefix extractor, the key's prefix
/// when the key is in the extractor's domain. Whole keys and prefixes interleave, so when both go
/// in each is deduplicated against the previous one of its kind (the bits builder only drops a
/// repeat of the entry just before); prefix-only filters leave consecutive duplicates to the bits
/// builder. <see cref="Reset"/> starts a new filter partition. Not thread-safe.
/// </summary>
internal sealed class FilterKeyAdder : IDisposable
{
    private readonly KvPrefixExtractor? _extractor;
    private readonly bool _wholeKeyFiltering;
    private readonly ByteBuffer _lastWholeKey = new(64);
    private readonly ByteBuffer _lastPrefix = new(32); // maintained only with whole-key filtering, as RocksDB's last_prefix_str_
    private bool _lastWholeKeyRecorded;
    private bool _lastPrefixRecorded;

    public FilterKeyAdder(KvPrefixExtractor? extractor, bool wholeKeyFiltering)
    {
        _extractor = extractor;
        _wholeKeyFiltering = wholeKeyFiltering;
    }

    public bool WholeKeyFiltering => _wholeKeyFiltering;

    public KvPrefixExtractor? Extractor => _extractor;

    /// <summary>The last prefix recorded with whole-key filtering (stale across <see cref="Reset"/>, empty without whole keys), as RocksDB's last_prefix_str().</summary>
    public ReadOnlySpan<byte> LastPrefix => _lastPrefix.WrittenSpan;

    /// <summary>Adds <paramref name="userKey"/>'s filter entries to <paramref name="bits"/>; returns how many AddKey calls were made.</summary>
    public int Add(IFilterBitsBuilder bits, ReadOnlySpan<byte> userKey)
    {
        bool addPrefix = _extractor != null && _extractor.InDomain(userKey);
        if (_extractor == null)
        {
            if (!_wholeKeyFiltering)
            {
                return 0;
            }
            bits.AddKey(userKey);
            return 1;
        }
        int calls = 0;
        if (_wholeKeyFiltering)
        {
            if (!addPrefix)
            {
                bits.AddKey(userKey);
                calls++;
            }
            else
            {
                calls += AddUnlessRepeat(bits, userKey, _lastWholeKey, ref _lastWholeKeyRecorded);
            }
        }
        if (addPrefix)
        {
            ReadOnlySpan<byte> prefix = _extractor.Transform(userKey);
            if (!_wholeKeyFiltering)
            {
                bits.AddKey(prefix);
                calls++;
            }
            else
            {
                calls += AddUnlessRepeat(bits, prefix, _lastPrefix, ref _lastPrefixRecorded);
            }
        }
        return calls;
    }

    // Whole keys and prefixes interleave: each kind is deduplicated against its own last entry.
    private static int AddUnlessRepeat(IFilterBitsBuilder bits, ReadOnlySpan<byte> entry, ByteBuffer last, ref bool recorded)
    {
        if (recorded && last.WrittenSpan.SequenceEqual(entry))
        {
            return 0;
        }
        bits.AddKey(entry);
        recorded = true;
        last.Clear();
        last.Append(entry);
        return 1;
    }

    /// <summary>A new filter partition: nothing recorded yet (the last prefix's bytes stay, as in RocksDB).</summary>
    public void Reset()
    {
        _lastWholeKeyRecorded = false;
        _lastPrefixRecorded = false;
    }

    public void Dispose()
    {
        _lastWholeKey.Dispose();
        _lastPrefix.Dispose();
    }
}
