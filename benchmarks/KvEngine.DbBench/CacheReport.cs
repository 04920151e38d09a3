using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>Prints a block cache's state after a run: each tier's charge and its values' requested vs allocated bytes.</summary>
internal static class CacheReport
{
    public static void Print(TextWriter output, KvBlockCache cache)
    {
        (long pr, long pa) = cache.Primary.ValueBytes;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Block cache: capacity {cache.Capacity}, usage {cache.Usage}, entries {cache.Primary.Count}, values requested {pr} B, allocated {pa} B ({Frag(pr, pa)})"));
        if (cache.Secondary is { } s)
        {
            (long sr, long sa) = s.Inner.ValueBytes;
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"Compressed secondary cache: capacity {s.Inner.Capacity}, usage {s.Inner.Usage}, entries {s.Inner.Count}, split {s.Options.Split}, chunks requested {sr} B, allocated {sa} B ({Frag(sr, sa)})"));
        }
    }

    private static string Frag(long requested, long allocated) =>
        requested == 0 ? "no values" : string.Create(CultureInfo.InvariantCulture, $"internal fragmentation {100.0 * (allocated - requested) / requested:F2}%");
}
