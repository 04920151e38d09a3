using System.Buffers;
using System.Runtime.CompilerServices;

namespace KvEngine.Util;

/// <summary>
/// Copies a value into a caller's <see cref="IBufferWriter{T}"/> asking for its whole length at
/// once (GetSpan(length)), where <see cref="BuffersExtensions.Write{T}(IBufferWriter{T}, ReadOnlySpan{T})"/>
/// asks for "any" span and then grows the writer piece by piece: for a large value that is a
/// series of doubling buffers (each copied into the next) instead of one of the right size. A
/// writer that hands out less than asked still gets the value, through the piecewise copy.
/// Stateless; thread-safe as the writer is.
/// </summary>
internal static class BufferWriterCopy
{
    /// <summary>Appends <paramref name="value"/> to <paramref name="writer"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void WriteWhole(IBufferWriter<byte> writer, ReadOnlySpan<byte> value)
    {
        Span<byte> destination = writer.GetSpan(value.Length);
        if (destination.Length >= value.Length)
        {
            value.CopyTo(destination);
            writer.Advance(value.Length);
            return;
        }
        writer.Write(value);
    }
}
