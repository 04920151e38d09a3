using System.Globalization;
using System.Text;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// One operation of a metamorphic op log, with its one-line text form. Keys and value tokens are
/// printable and contain no blank, "-" stands for none; families are numbers (0 = default),
/// snapshots "s&lt;n&gt;", iterators "i&lt;n&gt;":
/// <code>
/// put 1 apa12 v7~300        merge 0 bob3 #5         delete 2 cat         singledelete 0 sdk4
/// deleterange 0 apb bod1    batch put 0 k v | delete 1 k2 | merge 0 k #1
/// ingest 1 deleterange 1 a b | put 1 apa v9         snapshot s3          release s3
/// get 0 apa1 s3             multiget 0 - apa1 bob   scan 1 -             rscan 1 s3
/// iter i2 0 s3 apa dog total    seek i2 apa3   seekforprev i2 b   first i2   last i2   next i2
/// prev i2   closeiter i2    flush 1 (or all)   compact 0 - bob   reopen   checkpoint
/// </code>
/// A value token is literal text, "text~N" (the text padded to N bytes with a deterministic
/// filler) or "#N" (N as an 8-byte little-endian counter, <see cref="UInt64AddOperator"/>).
/// Immutable.
/// </summary>
internal sealed class MetaOp
{
    private static readonly string[] s_batchSeparator = [" | "];

    public required MetaOpKind Kind { get; init; }

    /// <summary>The column family (0 = default); -1 with <see cref="MetaOpKind.Flush"/> means all.</summary>
    public int Family { get; init; }

    /// <summary>Key, range begin, lower bound or seek target.</summary>
    public string? Key { get; init; }

    /// <summary>Range end or upper bound.</summary>
    public string? End { get; init; }

    /// <summary>Value token (see the class summary).</summary>
    public string? Value { get; init; }

    /// <summary>The snapshot created or released, or the iterator created or moved.</summary>
    public int Id { get; init; }

    /// <summary>The snapshot a read or iterator uses; -1 for the latest state.</summary>
    public int Snapshot { get; init; } = -1;

    /// <summary>An iterator confined to the prefix of its seek target (PrefixSameAsStart).</summary>
    public bool PrefixMode { get; init; }

    /// <summary>The writes of a batch or of an ingested file.</summary>
    public IReadOnlyList<MetaOp>? Records { get; init; }

    /// <summary>The keys of a MultiGet.</summary>
    public IReadOnlyList<string>? Keys { get; init; }

    /// <summary>True for the operations that change the database's contents.</summary>
    public bool IsWrite => Kind is MetaOpKind.Put or MetaOpKind.Merge or MetaOpKind.Delete or MetaOpKind.SingleDelete
        or MetaOpKind.DeleteRange or MetaOpKind.Batch or MetaOpKind.Ingest;

    public override string ToString()
    {
        var sb = new StringBuilder();
        Append(sb);
        return sb.ToString();
    }

    private void Append(StringBuilder sb)
    {
        string f = Family < 0 ? "all" : Family.ToString(CultureInfo.InvariantCulture);
        sb.Append(Word(Kind));
        switch (Kind)
        {
            case MetaOpKind.Put:
            case MetaOpKind.Merge:
                sb.Append(' ').Append(f).Append(' ').Append(Key).Append(' ').Append(Value);
                break;
            case MetaOpKind.Delete:
            case MetaOpKind.SingleDelete:
                sb.Append(' ').Append(f).Append(' ').Append(Key);
                break;
            case MetaOpKind.DeleteRange:
            case MetaOpKind.Compact:
                sb.Append(' ').Append(f).Append(' ').Append(Key ?? "-").Append(' ').Append(End ?? "-");
                break;
            case MetaOpKind.Batch:
            case MetaOpKind.Ingest:
                if (Kind == MetaOpKind.Ingest)
                {
                    sb.Append(' ').Append(f);
                }
                for (int i = 0; i < Records!.Count; i++)
                {
                    sb.Append(i == 0 ? " " : " | ");
                    Records[i].Append(sb);
                }
                break;
            case MetaOpKind.Snapshot:
            case MetaOpKind.Release:
                sb.Append(" s").Append(Id.ToString(CultureInfo.InvariantCulture));
                break;
            case MetaOpKind.Get:
                sb.Append(' ').Append(f).Append(' ').Append(Key).Append(' ').Append(Snap(Snapshot));
                break;
            case MetaOpKind.MultiGet:
                sb.Append(' ').Append(f).Append(' ').Append(Snap(Snapshot));
                foreach (string k in Keys!)
                {
                    sb.Append(' ').Append(k);
                }
                break;
            case MetaOpKind.Scan:
            case MetaOpKind.ReverseScan:
                sb.Append(' ').Append(f).Append(' ').Append(Snap(Snapshot));
                break;
            case MetaOpKind.Iter:
                sb.Append(" i").Append(Id.ToString(CultureInfo.InvariantCulture)).Append(' ').Append(f).Append(' ').Append(Snap(Snapshot))
                    .Append(' ').Append(Key ?? "-").Append(' ').Append(End ?? "-").Append(PrefixMode ? " prefix" : " total");
                break;
            case MetaOpKind.Seek:
            case MetaOpKind.SeekForPrev:
                sb.Append(" i").Append(Id.ToString(CultureInfo.InvariantCulture)).Append(' ').Append(Key);
                break;
            case MetaOpKind.First:
            case MetaOpKind.Last:
            case MetaOpKind.Next:
            case MetaOpKind.Prev:
            case MetaOpKind.CloseIter:
                sb.Append(" i").Append(Id.ToString(CultureInfo.InvariantCulture));
                break;
            case MetaOpKind.Flush:
                sb.Append(' ').Append(f);
                break;
            case MetaOpKind.Reopen:
            case MetaOpKind.Checkpoint:
                break;
            default:
                throw new InvalidOperationException(Kind.ToString());
        }
    }

    /// <summary>Parses one line of <see cref="ToString"/>'s form.</summary>
    /// <exception cref="FormatException">The line is not an operation.</exception>
    public static MetaOp Parse(string line)
    {
        string trimmed = line.Trim();
        int space = trimmed.IndexOf(' ', StringComparison.Ordinal);
        string word = space < 0 ? trimmed : trimmed[..space];
        if (word is "batch" or "ingest")
        {
            string rest = space < 0 ? "" : trimmed[(space + 1)..];
            int family = 0;
            if (word == "ingest")
            {
                int s = rest.IndexOf(' ', StringComparison.Ordinal);
                family = Int(s < 0 ? rest : rest[..s], line);
                rest = s < 0 ? "" : rest[(s + 1)..];
            }
            var records = new List<MetaOp>();
            foreach (string part in rest.Split(s_batchSeparator, StringSplitOptions.None))
            {
                MetaOp r = Parse(part);
                if (!r.IsWrite || r.Kind is MetaOpKind.Batch or MetaOpKind.Ingest)
                {
                    throw new FormatException($"not a record of a batch or file: '{part}' in '{line}'");
                }
                records.Add(r);
            }
            return new MetaOp { Kind = word == "batch" ? MetaOpKind.Batch : MetaOpKind.Ingest, Family = family, Records = records };
        }
        string[] t = trimmed.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        MetaOpKind kind = KindOf(t[0], line);
        int n = t.Length;
        switch (kind)
        {
            case MetaOpKind.Put:
            case MetaOpKind.Merge:
                Need(n == 4, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Key = t[2], Value = t[3] };
            case MetaOpKind.Delete:
            case MetaOpKind.SingleDelete:
                Need(n == 3, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Key = t[2] };
            case MetaOpKind.DeleteRange:
                Need(n == 4, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Key = t[2], End = t[3] };
            case MetaOpKind.Compact:
                Need(n == 4, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Key = Null(t[2]), End = Null(t[3]) };
            case MetaOpKind.Snapshot:
            case MetaOpKind.Release:
                Need(n == 2, line);
                return new MetaOp { Kind = kind, Id = ParseId(t[1], 's', line) };
            case MetaOpKind.Get:
                Need(n == 4, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Key = t[2], Snapshot = Snap(t[3], line) };
            case MetaOpKind.MultiGet:
                Need(n >= 4, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Snapshot = Snap(t[2], line), Keys = t[3..] };
            case MetaOpKind.Scan:
            case MetaOpKind.ReverseScan:
                Need(n == 3, line);
                return new MetaOp { Kind = kind, Family = Int(t[1], line), Snapshot = Snap(t[2], line) };
            case MetaOpKind.Iter:
                Need(n == 7 && t[6] is "prefix" or "total", line);
                return new MetaOp
                {
                    Kind = kind,
                    Id = ParseId(t[1], 'i', line),
                    Family = Int(t[2], line),
                    Snapshot = Snap(t[3], line),
                    Key = Null(t[4]),
                    End = Null(t[5]),
                    PrefixMode = t[6] == "prefix",
                };
            case MetaOpKind.Seek:
            case MetaOpKind.SeekForPrev:
                Need(n == 3, line);
                return new MetaOp { Kind = kind, Id = ParseId(t[1], 'i', line), Key = t[2] };
            case MetaOpKind.First:
            case MetaOpKind.Last:
            case MetaOpKind.Next:
            case MetaOpKind.Prev:
            case MetaOpKind.CloseIter:
                Need(n == 2, line);
                return new MetaOp { Kind = kind, Id = ParseId(t[1], 'i', line) };
            case MetaOpKind.Flush:
                Need(n == 2, line);
                return new MetaOp { Kind = kind, Family = t[1] == "all" ? -1 : Int(t[1], line) };
            default:
                Need(n == 1, line);
                return new MetaOp { Kind = kind };
        }
    }

    private static string Word(MetaOpKind kind) => kind switch
    {
        MetaOpKind.ReverseScan => "rscan",
        _ => kind.ToString().ToLowerInvariant(),
    };

    private static MetaOpKind KindOf(string word, string line)
    {
        foreach (MetaOpKind k in Enum.GetValues<MetaOpKind>())
        {
            if (Word(k) == word)
            {
                return k;
            }
        }
        throw new FormatException($"unknown operation '{word}' in '{line}'");
    }

    private static string Snap(int snapshot) => snapshot < 0 ? "-" : "s" + snapshot.ToString(CultureInfo.InvariantCulture);

    private static int Snap(string token, string line) => token == "-" ? -1 : ParseId(token, 's', line);

    private static int ParseId(string token, char letter, string line)
    {
        Need(token.Length > 1 && token[0] == letter, line);
        return Int(token[1..], line);
    }

    private static int Int(string token, string line) =>
        int.TryParse(token, NumberStyles.Integer, CultureInfo.InvariantCulture, out int v) ? v : throw new FormatException($"'{token}' is not a number in '{line}'");

    private static string? Null(string token) => token == "-" ? null : token;

    private static void Need(bool ok, string line)
    {
        if (!ok)
        {
            throw new FormatException($"malformed operation '{line}'");
        }
    }
}
