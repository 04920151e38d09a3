namespace KvEngine;

/// <summary>Base type of every error KvEngine raises on its own account.</summary>
public class KvException : Exception
{
    public KvException() { }

    public KvException(string message) : base(message) { }

    public KvException(string message, Exception innerException) : base(message, innerException) { }
}
