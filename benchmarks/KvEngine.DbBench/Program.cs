using System.Runtime.CompilerServices;
using KvEngine.DbBench;
using KvEngine.DbBench.Engines;

try
{
    BenchFlags flags = BenchFlags.Parse(args);
    if (flags.Help)
    {
        BenchFlagsHelp.Print(Console.Out);
        return 0;
    }
    if (flags.Engine == BenchEngineKind.RocksDb)
    {
        // RocksDbSharp binds librocksdb's C API with Reflection.Emit (its NativeImport), which a
        // Native AOT build cannot run. The check is a constant false there, so the AOT compiler
        // drops RocksDbSharp from the binary instead of warning about it.
        if (!RuntimeFeature.IsDynamicCodeSupported)
        {
            Console.Error.WriteLine("-engine=rocksdb needs the JIT build of kvbench (dotnet publish without " +
                "-p:PublishAot=true): RocksDbSharp binds librocksdb with Reflection.Emit, which Native AOT cannot run");
            return 1;
        }
        return RunOnRocksDb(flags);
    }
    if (flags.Engine == BenchEngineKind.ZoneTree || flags.Engine == BenchEngineKind.Lmdb || flags.Benchmarks == "raftbench")
    {
        // A constant under AOT: when false, ZoneTree, DotNext and KvEngine.Replication are not
        // compiled into the binary (BenchFeatures.OtherEngines).
        if (!BenchFeatures.OtherEngines)
        {
            Console.Error.WriteLine((flags.Engine == BenchEngineKind.ZoneTree ? "-engine=zonetree" : flags.Engine == BenchEngineKind.Lmdb ? "-engine=lmdb" : "-benchmarks=raftbench") +
                " is not in this kvbench: it was published with Native AOT without the other engines; publish with " +
                "-p:KvBenchOtherEngines=true, or use the JIT build");
            return 1;
        }
        return flags.Engine switch
        {
            BenchEngineKind.ZoneTree => RunOnZoneTree(flags),
            BenchEngineKind.Lmdb => RunOnLmdb(flags),
            _ => RunRaftBench(flags),
        };
    }
    if (flags.Benchmarks == "filterbench")
    {
        return new FilterBench(flags).Run();
    }
    if (flags.Benchmarks == "largevalue")
    {
        return new LargeValueBench(flags).Run();
    }
    if (flags.Benchmarks == "cachebench")
    {
        return new CacheBench(flags).Run();
    }
    if (flags.Benchmarks == "iouring")
    {
        return new IoEngineBench(flags).Run();
    }
    return RunOnKvEngine(flags);
}
catch (ArgumentException e)
{
    Console.Error.WriteLine(e.Message);
    return 1;
}

// Each engine's runner in its own method, so a KvEngine run never loads RocksDbSharp (the types of
// a method's body load when it is compiled, and tiered compilation is off).
[MethodImpl(MethodImplOptions.NoInlining)]
static int RunOnKvEngine(BenchFlags flags) =>
    new BenchRunner<KvEngineBench, KvEngineBenchIterator, KvEngineBenchBatch>(flags, new KvEngineBench(flags)).Run();

// Refuses what RocksDB cannot honour (filterbench and cachebench among it) before anything runs.
[MethodImpl(MethodImplOptions.NoInlining)]
static int RunOnRocksDb(BenchFlags flags) =>
    new BenchRunner<RocksDbBench, RocksDbBenchIterator, RocksDbBenchBatch>(flags, new RocksDbBench(flags)).Run();

[MethodImpl(MethodImplOptions.NoInlining)]
static int RunRaftBench(BenchFlags flags) => new RaftBench(flags).Run();

// Refuses what ZoneTree cannot honour (readreverse, merges, range deletions...) before anything runs.
[MethodImpl(MethodImplOptions.NoInlining)]
static int RunOnZoneTree(BenchFlags flags) =>
    new BenchRunner<ZoneTreeBench, ZoneTreeBenchIterator, ZoneTreeBenchBatch>(flags, new ZoneTreeBench(flags)).Run();

// Refuses what LMDB cannot honour (merges, range deletions, column families...) before anything runs.
[MethodImpl(MethodImplOptions.NoInlining)]
static int RunOnLmdb(BenchFlags flags) =>
    new BenchRunner<LmdbBench, LmdbBenchIterator, LmdbBenchBatch>(flags, new LmdbBench(flags)).Run();
