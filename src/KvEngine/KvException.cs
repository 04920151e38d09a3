namespace KvEngine;

/// <summary>Base type of every error KvEngine raises on its own account.</summary>
public class KvException : Exception
{
    /// <summary>Creates an exception with the default message.</summary>
    public KvException() { }

    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvException(string message) : base(message) { }

    /// <summary>Creates an exception with <paramref name="message"/> caused by <paramref name="innerException"/>.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="innerException">The error that caused it.</param>
    public KvException(string message, Exception innerException) : base(message, innerException) { }
}
