namespace KvEngine.OptionsFile;

/// <summary>
/// A malformed option value inside the OPTIONS-file parser; never escapes it (the parser rethrows
/// it as a <see cref="KvCorruptionException"/> naming file, section and option).
/// </summary>
internal sealed class OptionsFormatException : Exception
{
    public OptionsFormatException(string message) : base(message)
    {
    }

    public OptionsFormatException()
    {
    }

    public OptionsFormatException(string message, Exception innerException) : base(message, innerException)
    {
    }
}
