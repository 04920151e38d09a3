using System.Runtime.InteropServices;

namespace KvEngine.Tests.Memory;

/// <summary>Reads this process's /proc/self/smaps and page residency (Linux): what the kernel records of a mapping.</summary>
internal static unsafe partial class Smaps
{
    /// <summary>Pages of [<paramref name="address"/>, +<paramref name="length"/>) in memory (mincore(2)); the address page-aligned.</summary>
    public static int ResidentPages(nint address, int length)
    {
        int pages = (length + Environment.SystemPageSize - 1) / Environment.SystemPageSize;
        byte[] vector = new byte[pages];
        fixed (byte* v = vector)
        {
            if (MinCore(address, (nuint)length, v) != 0)
            {
                throw new InvalidOperationException($"mincore failed (errno {Marshal.GetLastPInvokeError()}).");
            }
        }
        int resident = 0;
        foreach (byte b in vector)
        {
            resident += b & 1;
        }
        return resident;
    }

    [LibraryImport("libc", EntryPoint = "mincore", SetLastError = true)]
    private static partial int MinCore(nint address, nuint length, byte* vector);

    /// <summary>The VmFlags line of the mapping that holds <paramref name="address"/> in /proc/self/smaps.</summary>
    public static string VmFlags(nint address)
    {
        bool inside = false;
        foreach (string line in File.ReadLines("/proc/self/smaps"))
        {
            int dash = line.IndexOf('-', StringComparison.Ordinal);
            int space = line.IndexOf(' ', StringComparison.Ordinal);
            if (dash > 0 && space > dash && IsHex(line.AsSpan(0, dash)))
            {
                long start = long.Parse(line.AsSpan(0, dash), System.Globalization.NumberStyles.HexNumber, null);
                long end = long.Parse(line.AsSpan(dash + 1, space - dash - 1), System.Globalization.NumberStyles.HexNumber, null);
                inside = address >= start && address < end;
            }
            else if (inside && line.StartsWith("VmFlags:", StringComparison.Ordinal))
            {
                return line;
            }
        }
        throw new InvalidOperationException($"No mapping holds 0x{address:x}.");
    }

    private static bool IsHex(ReadOnlySpan<char> s) => s.Length > 0 && s.IndexOfAnyExcept("0123456789abcdef") < 0;
}
