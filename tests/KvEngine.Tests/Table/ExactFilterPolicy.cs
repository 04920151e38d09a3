using System.Buffers;
using KvEngine.Filters;
using KvEngine.Util;

namespace KvEngine.Tests.Table;

/// <summary>
/// Test-only filter: stores every key (length-prefixed), so it has no false positives. Malformed
/// blocks give a reader that always says "may match", as the interface requires.
/// </summary>
internal sealed class ExactFilterPolicy : IFilterPolicy
{
    public string Name => "test.ExactFilter";

    public int Probes { get; private set; }

    public IFilterBitsBuilder CreateBuilder() => new Builder();

    /// <summary>About 16 bytes per stored key.</summary>
    public long ApproximateNumEntries(long bytes) => bytes / 16;

    public IFilterBitsReader CreateReader(ReadOnlyMemory<byte> filterBlock) => new Reader(this, filterBlock.ToArray());

    private sealed class Builder : IFilterBitsBuilder
    {
        private readonly List<byte[]> _keys = [];

        public int KeyCount => _keys.Count;

        public void AddKey(ReadOnlySpan<byte> key)
        {
            if (_keys.Count == 0 || !_keys[^1].AsSpan().SequenceEqual(key))
            {
                _keys.Add(key.ToArray());
            }
        }

        public void Finish(IBufferWriter<byte> output)
        {
            using var b = new ByteBuffer();
            foreach (byte[] k in _keys)
            {
                b.AppendLengthPrefixed(k);
            }
            output.Write(b.WrittenSpan);
            _keys.Clear();
        }

        public void Dispose()
        {
        }
    }

    private sealed class Reader : IFilterBitsReader
    {
        private readonly ExactFilterPolicy _policy;
        private readonly HashSet<string>? _keys = [];

        public Reader(ExactFilterPolicy policy, byte[] block)
        {
            _policy = policy;
            ReadOnlySpan<byte> p = block;
            while (p.Length > 0)
            {
                if (!Coding.TryGetLengthPrefixed(ref p, out ReadOnlySpan<byte> key))
                {
                    _keys = null;
                    return;
                }
                _keys.Add(Convert.ToHexString(key));
            }
        }

        public bool MayMatch(ReadOnlySpan<byte> key)
        {
            _policy.Probes++;
            return _keys == null || _keys.Contains(Convert.ToHexString(key));
        }
    }
}
