using System.Numerics;
using System.Runtime.CompilerServices;

namespace KvEngine.Util;

/// <summary>
/// CRC32C (Castagnoli) over <see cref="BitOperations.Crc32C(uint, byte)"/>, which uses the CPU's CRC
/// instruction where there is one, plus LevelDB/RocksDB's mask for CRCs stored next to the data they
/// cover. Stateless and thread-safe.
/// </summary>
internal static class Crc32C
{
    private const uint MaskDelta = 0xa282ead8u;

    /// <summary>CRC32C of <paramref name="data"/>, continuing from <paramref name="crc"/> (0 to start).</summary>
    public static uint Extend(uint crc, ReadOnlySpan<byte> data)
    {
        uint c = ~crc;
        ref byte p = ref System.Runtime.InteropServices.MemoryMarshal.GetReference(data);
        int i = 0;
        int n = data.Length;
        for (; i + 8 <= n; i += 8)
        {
            c = BitOperations.Crc32C(c, Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref p, i)));
        }
        for (; i < n; i++)
        {
            c = BitOperations.Crc32C(c, Unsafe.Add(ref p, i));
        }
        return ~c;
    }

    public static uint Compute(ReadOnlySpan<byte> data) => Extend(0, data);

    /// <summary>RocksDB's crc32c::Mask: rotate right by 15 and add a constant.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint Mask(uint crc) => ((crc >> 15) | (crc << 17)) + MaskDelta;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint Unmask(uint masked)
    {
        uint rot = masked - MaskDelta;
        return (rot >> 17) | (rot << 15);
    }
}
