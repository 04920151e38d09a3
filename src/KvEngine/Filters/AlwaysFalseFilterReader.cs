namespace KvEngine.Filters;

/// <summary>
/// Answers "no" for every key: the reader for a filter of at most 5 bytes, i.e. one built from zero
/// keys. Stateless singleton; thread-safe.
/// </summary>
internal sealed class AlwaysFalseFilterReader : IFilterBitsReader
{
    public static readonly AlwaysFalseFilterReader Instance = new();

    private AlwaysFalseFilterReader()
    {
    }

    public bool MayMatch(ReadOnlySpan<byte> key) => false;
}
