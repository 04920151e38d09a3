namespace KvEngine.Stress;

/// <summary>
/// The database disagreed with the expected state: the message names the key, what was expected
/// and what was read. Thrown by the checks and caught by the runner, which reports it and exits
/// non-zero.
/// </summary>
internal sealed class VerificationException : Exception
{
    public VerificationException() { }

    public VerificationException(string message) : base(message) { }

    public VerificationException(string message, Exception innerException) : base(message, innerException) { }
}
