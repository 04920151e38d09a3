namespace KvEngine.Fuzz.Targets;

/// <summary>A misbehaviour a target detects itself (not an exception the engine threw), e.g. an absurd allocation.</summary>
internal sealed class FuzzFindingException : Exception
{
    public FuzzFindingException()
    {
    }

    public FuzzFindingException(string message)
        : base(message)
    {
    }

    public FuzzFindingException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
