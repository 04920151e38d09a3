namespace KvEngine.Tool;

/// <summary>
/// The command ran and its answer is a failure (a key not found, a table that fails verification):
/// a one-line message and <see cref="ExitCode"/>.
/// </summary>
internal sealed class ToolFailureException : Exception
{
    public ToolFailureException(string message, int exitCode = ExitCodes.Failed) : base(message) => ExitCode = exitCode;

    public ToolFailureException() : this("failed")
    {
    }

    public ToolFailureException(string message, Exception innerException) : base(message, innerException) => ExitCode = ExitCodes.Failed;

    public int ExitCode { get; }
}
