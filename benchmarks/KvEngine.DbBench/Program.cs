using KvEngine.DbBench;

try
{
    BenchFlags flags = BenchFlags.Parse(args);
    return new BenchRunner(flags).Run();
}
catch (ArgumentException e)
{
    Console.Error.WriteLine(e.Message);
    return 1;
}
