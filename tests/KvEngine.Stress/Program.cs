using KvEngine.Stress;

// kvstress: RocksDB db_stress for KvEngine. Exit codes: 0 passed, 1 verification failure,
// 2 bad arguments, 3 unexpected error.
StressFlags flags;
try
{
    flags = StressFlags.Parse(args);
}
catch (ArgumentException e)
{
    Console.Error.WriteLine("kvstress: " + e.Message);
    return 2;
}
try
{
    return new StressRunner(flags, Console.Out).Run();
}
catch (ArgumentException e)
{
    Console.Error.WriteLine("kvstress: " + e.Message);
    return 2;
}
catch (Exception e)
{
    Console.Out.WriteLine("kvstress: FAILED with an unexpected error: " + e);
    Console.Out.Flush();
    return 3;
}
