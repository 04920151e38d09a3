namespace KvEngine.Tests.Memory;

/// <summary>Reads this process's /proc/self/smaps (Linux): what the kernel records of a mapping.</summary>
internal static class Smaps
{
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
