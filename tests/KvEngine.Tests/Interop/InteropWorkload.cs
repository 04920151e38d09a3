using System.Buffers.Binary;

namespace KvEngine.Tests.Interop;

/// <summary>
/// A deterministic mix of puts, overwrites, deletes and multi-record batches applied to a
/// <see cref="KvDb"/> and mirrored in a sorted model. Keys are binary (every byte value, lengths
/// 0..40) drawn from a fixed pool so overwrites and deletes hit live keys; values mix random and
/// repetitive bytes so compressed and uncompressed blocks both occur. Not thread-safe.
/// </summary>
internal sealed class InteropWorkload
{
    private readonly Random _rng;
    private readonly List<byte[]> _pool;

    public InteropWorkload(int seed, int poolSize, IEnumerable<byte[]>? extraKeys = null)
    {
        _rng = new Random(seed);
        _pool = new List<byte[]>(poolSize + 1) { Array.Empty<byte>() };
        for (int i = 0; i < poolSize; i++)
        {
            _pool.Add(NewKey(i));
        }
        if (extraKeys != null)
        {
            _pool.AddRange(extraKeys);
        }
        Model = RocksDbOracle.NewModel();
    }

    /// <summary>The live pairs, as every write so far left them.</summary>
    public SortedDictionary<byte[], byte[]> Model { get; }

    public int Puts { get; private set; }

    public int Deletes { get; private set; }

    /// <summary>Applies <paramref name="operations"/> random writes to <paramref name="db"/> and the model.</summary>
    public void Apply(KvDb db, int operations)
    {
        for (int done = 0; done < operations;)
        {
            int roll = _rng.Next(100);
            if (roll < 5)
            {
                using var batch = new WriteBatch();
                int n = _rng.Next(2, 20);
                var staged = new List<(byte[] Key, byte[]? Value)>(n);
                for (int i = 0; i < n; i++)
                {
                    byte[] key = PickKey();
                    if (_rng.Next(4) == 0)
                    {
                        batch.Delete(key);
                        staged.Add((key, null));
                    }
                    else
                    {
                        byte[] value = NewValue();
                        batch.Put(key, value);
                        staged.Add((key, value));
                    }
                }
                db.Write(batch);
                foreach ((byte[] key, byte[]? value) in staged)
                {
                    Record(key, value);
                }
                done += n;
            }
            else if (roll < 25 && Model.Count > 0)
            {
                byte[] key = _rng.Next(3) == 0 ? PickKey() : PickLiveKey();
                db.Delete(key);
                Record(key, null);
                done++;
            }
            else
            {
                byte[] key = PickKey();
                byte[] value = NewValue();
                db.Put(key, value);
                Record(key, value);
                done++;
            }
        }
    }

    /// <summary>Deletes about <paramref name="fraction"/> of the live keys.</summary>
    public void DeleteSome(KvDb db, double fraction)
    {
        foreach (byte[] key in Model.Keys.ToList())
        {
            if (_rng.NextDouble() < fraction)
            {
                db.Delete(key);
                Record(key, null);
            }
        }
    }

    /// <summary>Seeds the model with pairs already in the database (written by someone else).</summary>
    public void Load(IEnumerable<KeyValuePair<byte[], byte[]>> pairs)
    {
        foreach (KeyValuePair<byte[], byte[]> p in pairs)
        {
            Model[p.Key] = p.Value;
            _pool.Add(p.Key);
        }
    }

    private void Record(byte[] key, byte[]? value)
    {
        if (value == null)
        {
            Model.Remove(key);
            Deletes++;
        }
        else
        {
            Model[key] = value;
            Puts++;
        }
    }

    private byte[] PickKey() => _pool[_rng.Next(_pool.Count)];

    private byte[] PickLiveKey()
    {
        // Model keys are not indexable; a pool key that is live is found within a few tries.
        for (int i = 0; i < 16; i++)
        {
            byte[] k = PickKey();
            if (Model.ContainsKey(k))
            {
                return k;
            }
        }
        return PickKey();
    }

    private byte[] NewKey(int i)
    {
        switch (i % 3)
        {
            case 0:
                {
                    // Random binary: every byte value, including 0x00 and 0xFF.
                    var k = new byte[_rng.Next(1, 41)];
                    _rng.NextBytes(k);
                    return k;
                }
            case 1:
                {
                    // A shared prefix and a big-endian counter: long shared prefixes in blocks.
                    byte[] k = [(byte)'u', (byte)'s', (byte)'e', (byte)'r', (byte)':', 0x00, 0xFF, 0x01, 0, 0, 0, 0];
                    BinaryPrimitives.WriteInt32BigEndian(k.AsSpan(8), i);
                    return k;
                }
            default:
                {
                    var k = new byte[_rng.Next(1, 6)];
                    _rng.NextBytes(k);
                    k[0] = (byte)(0xF0 | (k[0] & 0x0F));
                    return k;
                }
        }
    }

    private byte[] NewValue()
    {
        int length = _rng.Next(8) == 0 ? 0 : _rng.Next(1, 300);
        var v = new byte[length];
        if (_rng.Next(2) == 0)
        {
            _rng.NextBytes(v);
        }
        else
        {
            byte a = (byte)_rng.Next(256);
            for (int i = 0; i < v.Length; i++)
            {
                v[i] = (byte)(a + (i % 7));
            }
        }
        return v;
    }
}
