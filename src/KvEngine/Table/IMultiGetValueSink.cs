namespace KvEngine.Table;

/// <summary>
/// Where <see cref="TableReader.MultiGet"/> hands a found Value (a struct implementation, so the
/// call is direct and allocates nothing). The span is valid only during the call.
/// </summary>
internal interface IMultiGetValueSink
{
    /// <summary>The value of sorted position <paramref name="pos"/>'s key.</summary>
    void OnValue(int pos, ReadOnlySpan<byte> value);
}
