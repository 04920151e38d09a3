using KvEngine.DbBench;

try
{
    BenchFlags flags = BenchFlags.Parse(args);
    if (flags.Help)
    {
        BenchFlagsHelp.Print(Console.Out);
        return 0;
    }
    return new BenchRunner(flags).Run();
}
catch (ArgumentException e)
{
    Console.Error.WriteLine(e.Message);
    return 1;
}
