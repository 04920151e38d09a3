using System.Globalization;
using System.Text;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// A metamorphic op log: the column families it uses, the merge operator of every family, and the
/// operations in order. Its text form (<see cref="ToText"/>, read back by <see cref="Parse"/>) is
/// what a failing run writes out, so a seed can be replayed and cut down by hand:
/// <code>
/// # any comment
/// families 3
/// merge uint64add
/// put 0 apa1 #4
/// ...
/// </code>
/// Immutable.
/// </summary>
internal sealed class MetaLog
{
    public MetaLog(int families, bool uint64Add, IReadOnlyList<MetaOp> ops, string comment = "")
    {
        if (families is < 1 or > 9)
        {
            throw new ArgumentOutOfRangeException(nameof(families), families, "1..9 families");
        }
        Families = families;
        UInt64Add = uint64Add;
        Ops = ops;
        Comment = comment;
    }

    /// <summary>Families 0 (default) .. Families - 1; the others are "cf1", "cf2", ...</summary>
    public int Families { get; }

    /// <summary><see cref="UInt64AddOperator"/> when true, else <see cref="StringAppendOperator"/> (',').</summary>
    public bool UInt64Add { get; }

    public IReadOnlyList<MetaOp> Ops { get; }

    /// <summary>The first line's comment (how the log was made).</summary>
    public string Comment { get; }

    public string ToText()
    {
        var sb = new StringBuilder();
        if (Comment.Length > 0)
        {
            sb.Append("# ").Append(Comment).Append('\n');
        }
        sb.Append("families ").Append(Families.ToString(CultureInfo.InvariantCulture)).Append('\n');
        sb.Append("merge ").Append(UInt64Add ? "uint64add" : "stringappend").Append('\n');
        foreach (MetaOp op in Ops)
        {
            sb.Append(op.ToString()).Append('\n');
        }
        return sb.ToString();
    }

    /// <exception cref="FormatException">A line is malformed, or the header is missing.</exception>
    public static MetaLog Parse(string text)
    {
        int? families = null;
        bool? uint64Add = null;
        string comment = "";
        var ops = new List<MetaOp>();
        foreach (string raw in text.Split('\n'))
        {
            string line = raw.Trim();
            if (line.Length == 0)
            {
                continue;
            }
            if (line[0] == '#')
            {
                if (comment.Length == 0)
                {
                    comment = line[1..].Trim();
                }
                continue;
            }
            if (line.StartsWith("families ", StringComparison.Ordinal))
            {
                families = int.Parse(line.AsSpan(9), NumberStyles.Integer, CultureInfo.InvariantCulture);
            }
            else if (line.StartsWith("merge ", StringComparison.Ordinal) && line.Split(' ').Length == 2)
            {
                uint64Add = line[6..] switch
                {
                    "uint64add" => true,
                    "stringappend" => false,
                    _ => throw new FormatException($"unknown merge operator in '{line}'"),
                };
            }
            else
            {
                ops.Add(MetaOp.Parse(line));
            }
        }
        if (families == null || uint64Add == null)
        {
            throw new FormatException("an op log starts with 'families N' and 'merge uint64add|stringappend'");
        }
        return new MetaLog(families.Value, uint64Add.Value, ops, comment);
    }
}
