using KvEngine.Fuzz;
using KvEngine.Fuzz.Targets;

// KvEngine.Fuzz fuzz <target>             run under AFL++ (run.sh; KvEngine.dll instrumented by sharpfuzz)
// KvEngine.Fuzz replay <target> <path>... run files (or every file under directories) through a target
// KvEngine.Fuzz seeds <corpus-dir>        write the seed inputs KvEngine's own writers produce
if (args.Length >= 2 && args[0] == "fuzz" && FuzzTargets.Names.Contains(args[1]))
{
    string target = args[1];
    SharpFuzz.Fuzzer.Run(stream =>
    {
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        _ = FuzzTargets.Execute(target, copy.GetBuffer().AsSpan(0, (int)copy.Length));
    });
    return 0;
}
if (args.Length >= 3 && args[0] == "replay" && FuzzTargets.Names.Contains(args[1]))
{
    return Replay.Run(args[1], args.AsSpan(2));
}
if (args.Length == 2 && args[0] == "seeds")
{
    SeedWriter.WriteAll(args[1]);
    return 0;
}
Console.Error.WriteLine($"usage: KvEngine.Fuzz fuzz|replay|seeds ...; targets: {string.Join(", ", FuzzTargets.Names)}");
return 2;
