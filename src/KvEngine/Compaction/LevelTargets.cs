
using Version = KvEngine.Versions.Version;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// Target size of each level and the base level (where level 0 compacts to) for one version,
/// following RocksDB's VersionStorageInfo::CalculateBaseBytes. Static targets: level 1 is the base,
/// level i targets MaxBytesForLevelBase x multiplier^(i-1). Dynamic targets
/// (LevelCompactionDynamicLevelBytes): the largest level sets the shape; levels above the base
/// level stay empty (target "infinite"), and no target falls below MaxBytesForLevelBase.
/// Immutable.
/// </summary>
internal sealed class LevelTargets
{
    private readonly long[] _maxBytes;

    private LevelTargets(int baseLevel, long[] maxBytes)
    {
        BaseLevel = baseLevel;
        _maxBytes = maxBytes;
    }

    /// <summary>The level that level-0 compactions write to.</summary>
    public int BaseLevel { get; }

    /// <summary>Target bytes of <paramref name="level"/> (levels 1 and deeper); long.MaxValue for none.</summary>
    public long MaxBytesForLevel(int level) => _maxBytes[level];

    public static LevelTargets Compute(Version v, CompactionOptions o)
    {
        int n = o.NumLevels;
        var max = new long[n];
        if (!o.LevelCompactionDynamicLevelBytes)
        {
            double size = o.MaxBytesForLevelBase;
            max[0] = o.MaxBytesForLevelBase;
            for (int level = 1; level < n; level++)
            {
                max[level] = Saturate(size);
                size *= o.MaxBytesForLevelMultiplier;
            }
            return new LevelTargets(1, max);
        }

        long maxLevelSize = 0;
        int firstNonEmpty = -1;
        for (int level = 1; level < n; level++)
        {
            long bytes = v.LevelBytes(level);
            if (bytes > 0 && firstNonEmpty < 0)
            {
                firstNonEmpty = level;
            }
            maxLevelSize = Math.Max(maxLevelSize, bytes);
        }
        Array.Fill(max, long.MaxValue);
        max[0] = o.MaxBytesForLevelBase;
        if (maxLevelSize == 0)
        {
            // Nothing below level 0 yet: level 0 compacts straight into the last level.
            return new LevelTargets(n - 1, max);
        }
        long baseBytesMax = o.MaxBytesForLevelBase;
        long baseBytesMin = (long)(baseBytesMax / o.MaxBytesForLevelMultiplier);
        double cur = maxLevelSize;
        for (int i = n - 2; i >= firstNonEmpty; i--)
        {
            cur /= o.MaxBytesForLevelMultiplier;
        }
        int baseLevel = firstNonEmpty;
        double baseSize;
        if (cur <= baseBytesMin)
        {
            baseSize = baseBytesMin + 1;
        }
        else
        {
            while (baseLevel > 1 && cur > baseBytesMax)
            {
                baseLevel--;
                cur /= o.MaxBytesForLevelMultiplier;
            }
            baseSize = Math.Min(cur, baseBytesMax);
        }
        double levelSize = baseSize;
        for (int level = baseLevel; level < n; level++)
        {
            if (level > baseLevel)
            {
                levelSize *= o.MaxBytesForLevelMultiplier;
            }
            max[level] = Math.Max(Saturate(levelSize), baseBytesMax);
        }
        return new LevelTargets(baseLevel, max);
    }

    private static long Saturate(double d) => d >= long.MaxValue ? long.MaxValue : (long)d;
}
