using System.Buffers.Binary;
using KvEngine.Versions;
using KvEngine.Storage;
using Xunit.Abstractions;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// PR 10655's claim at small scale: a fillrandom-like load, compacted deterministically (auto
/// compaction off, the picker's compactions run inline after every flush), writes fewer compaction
/// bytes with outputs aligned to the next level than without, while file sizes stay within
/// 0.5x..2x of the target.
/// </summary>
public sealed class AlignmentWriteAmpTests
{
    private const long Target = 16 << 10;

    private readonly ITestOutputHelper _out;

    public AlignmentWriteAmpTests(ITestOutputHelper output)
    {
        _out = output;
    }

    [Fact]
    public void AlignedOutputsWriteLessThanUnaligned()
    {
        (long onBytes, FileStats onFiles) = Load(align: true);
        (long offBytes, FileStats offFiles) = Load(align: false);
        double saving = 100.0 * (offBytes - onBytes) / offBytes;
        _out.WriteLine($"compaction bytes written: aligned {onBytes}, unaligned {offBytes} ({saving:F2}% less)");
        _out.WriteLine($"files above the bottom level: aligned {onFiles}, unaligned {offFiles}");
        Assert.True(onBytes < offBytes, $"aligned {onBytes} >= unaligned {offBytes}");
        Assert.True(onFiles.Max <= 2 * Target + 8192, $"an aligned file exceeds twice the target: {onFiles}");
    }

    private static (long CompactionBytes, FileStats Files) Load(bool align)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/a");
        var options = new KvOptions
        {
            FileSystem = fs,
            WriteBufferSize = 1 << 20, // never switched by size: the test flushes
            DisableAutoCompactions = true,
            Compression = KvCompressionType.None,
            BloomBitsPerKey = 0,
            TargetFileSizeBase = Target,
            MaxBytesForLevelBase = 4 * Target,
            MaxBytesForLevelMultiplier = 4,
            Level0FileNumCompactionTrigger = 2,
            LevelCompactionDynamicFileSize = align,
        };
        var rng = new Random(10655);
        var key = new byte[16];
        var value = new byte[100];
        using KvDb db = KvDb.Open("/a/db", options);
        for (int batch = 0; batch < 120; batch++)
        {
            for (int i = 0; i < 250; i++)
            {
                BinaryPrimitives.WriteUInt64BigEndian(key, (ulong)rng.Next(60_000)); // db_bench's key layout
                rng.NextBytes(value);
                db.Put(key, value);
            }
            db.Flush();
            db.Impl.RunCompactionsInline();
        }
        var sizes = new List<long>();
        KvEngine.Versions.Version v = db.Impl.Versions.Current;
        int bottom = 0;
        for (int level = 1; level < KvEngine.Versions.Version.NumLevels; level++)
        {
            if (v.NumFiles(level) > 0)
            {
                bottom = level;
            }
        }
        for (int level = 1; level < bottom; level++)
        {
            foreach (FileMetaData f in v.Files(level))
            {
                sizes.Add((long)f.FileSize);
            }
        }
        return (db.Counters.CompactWriteBytes, FileStats.Of(sizes));
    }

    private readonly record struct FileStats(int Count, double Mean, double Std, long Max)
    {
        public static FileStats Of(List<long> sizes)
        {
            if (sizes.Count == 0)
            {
                return default;
            }
            double mean = 0;
            long max = 0;
            foreach (long s in sizes)
            {
                mean += s;
                max = Math.Max(max, s);
            }
            mean /= sizes.Count;
            double var = 0;
            foreach (long s in sizes)
            {
                var += (s - mean) * (s - mean);
            }
            return new FileStats(sizes.Count, mean, Math.Sqrt(var / sizes.Count), max);
        }

        public override string ToString() => $"count {Count}, mean {Mean:F0}, std {Std:F0}, max {Max}";
    }
}
