namespace KvEngine.Db;

/// <summary>
/// One call counted in by <see cref="CallGate.TryEnter"/>; disposing it counts the call out.
/// A struct, for <c>using</c> without allocation. <c>default</c> counts nothing.
/// </summary>
internal readonly struct CallScope : IDisposable
{
    private readonly CallGate? _gate;

    public CallScope(CallGate gate)
    {
        _gate = gate;
    }

    public void Dispose() => _gate?.Exit();
}
