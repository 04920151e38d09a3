namespace KvEngine.Filters;

/// <summary>
/// Answers "may match" for every key: the reader for filters of unknown, reserved or malformed
/// format (never a false negative). Stateless singleton; thread-safe.
/// </summary>
internal sealed class AlwaysTrueFilterReader : IFilterBitsReader
{
    public static readonly AlwaysTrueFilterReader Instance = new();

    private AlwaysTrueFilterReader()
    {
    }

    public bool MayMatch(ReadOnlySpan<byte> key) => true;
}
