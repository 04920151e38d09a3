namespace KvEngine.Tests.Fuzz;

/// <summary>
/// A small deterministic mutator for in-process fuzzing in CI (no coverage feedback): the havoc
/// moves of AFL — bit flips, random and "interesting" bytes and little-endian words, block
/// deletion, duplication and insertion, truncation, splicing with another seed — stacked 1 to 8 at
/// a time. Same seed, same inputs. Not thread-safe.
/// </summary>
internal sealed class InputMutator(int seed)
{
    private static readonly byte[] s_interestingBytes = [0, 1, 0x7f, 0x80, 0xff, 16, 32, 64, 100, 0xfe];
    private static readonly uint[] s_interestingWords = [0, 1, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 4096, 32768];

    private readonly Random _random = new(seed);

    public byte[] Mutate(byte[] input, IReadOnlyList<byte[]> pool)
    {
        var data = new List<byte>(input);
        int moves = 1 << _random.Next(4);
        for (int i = 0; i < moves; i++)
        {
            ApplyOne(data, pool);
        }
        return [.. data];
    }

    private void ApplyOne(List<byte> data, IReadOnlyList<byte[]> pool)
    {
        if (data.Count == 0)
        {
            data.Add((byte)_random.Next(256));
            return;
        }
        int at = _random.Next(data.Count);
        switch (_random.Next(10))
        {
            case 0:
                data[at] ^= (byte)(1 << _random.Next(8));
                break;
            case 1:
                data[at] = (byte)_random.Next(256);
                break;
            case 2:
                data[at] = s_interestingBytes[_random.Next(s_interestingBytes.Length)];
                break;
            case 3:
                data[at] = (byte)(data[at] + _random.Next(-35, 36));
                break;
            case 4:
            {
                uint word = s_interestingWords[_random.Next(s_interestingWords.Length)];
                for (int b = 0; b < 4 && at + b < data.Count; b++)
                {
                    data[at + b] = (byte)(word >> (8 * b));
                }
                break;
            }
            case 5:
                data.RemoveRange(at, Math.Min(data.Count - at, 1 + _random.Next(Math.Min(64, data.Count))));
                break;
            case 6:
            {
                int length = Math.Min(data.Count - at, 1 + _random.Next(64));
                data.InsertRange(_random.Next(data.Count + 1), data.GetRange(at, length));
                break;
            }
            case 7:
            {
                var bytes = new byte[1 + _random.Next(16)];
                _random.NextBytes(bytes);
                data.InsertRange(at, bytes);
                break;
            }
            case 8:
                data.RemoveRange(at, data.Count - at);
                break;
            default:
            {
                byte[] other = pool[_random.Next(pool.Count)];
                if (other.Length > 0)
                {
                    int from = _random.Next(other.Length);
                    int length = Math.Min(other.Length - from, 1 + _random.Next(256));
                    int to = _random.Next(data.Count);
                    for (int b = 0; b < length; b++)
                    {
                        if (to + b < data.Count)
                        {
                            data[to + b] = other[from + b];
                        }
                        else
                        {
                            data.Add(other[from + b]);
                        }
                    }
                }
                break;
            }
        }
    }
}
