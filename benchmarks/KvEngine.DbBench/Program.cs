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
        // Refuses what RocksDB cannot honour (filterbench and cachebench among it) before anything runs.
        return new BenchRunner<RocksDbBench, RocksDbBenchIterator, RocksDbBenchBatch>(flags, new RocksDbBench(flags)).Run();
    }
    if (flags.Benchmarks == "filterbench")
    {
        return new FilterBench(flags).Run();
    }
    if (flags.Benchmarks == "cachebench")
    {
        return new CacheBench(flags).Run();
    }
    return new BenchRunner<KvEngineBench, KvEngineBenchIterator, KvEngineBenchBatch>(flags, new KvEngineBench(flags)).Run();
}
catch (ArgumentException e)
{
    Console.Error.WriteLine(e.Message);
    return 1;
}
