namespace KvEngine.Tool;

/// <summary>The command line is wrong (unknown command or option, a missing or malformed argument): exit code <see cref="ExitCodes.Usage"/>.</summary>
internal sealed class ToolUsageException : Exception
{
    public ToolUsageException(string message) : base(message)
    {
    }

    public ToolUsageException()
    {
    }

    public ToolUsageException(string message, Exception innerException) : base(message, innerException)
    {
    }
}
