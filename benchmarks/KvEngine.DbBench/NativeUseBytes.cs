using System.Runtime.CompilerServices;
using KvEngine.Memory;

namespace KvEngine.DbBench;

/// <summary>Live native bytes per <see cref="NativeUse"/> value (indexed by it), held inline. A value.</summary>
[InlineArray(NativeAllocator.UseSlots)]
internal struct NativeUseBytes
{
    private long _element0;
}
