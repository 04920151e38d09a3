using BenchmarkDotNet.Running;

// Every benchmark class in this assembly, chosen with BenchmarkDotNet's command line, e.g.
//   dotnet run -c Release --project benchmarks/KvEngine.Benchmarks -- --filter '*'
//   dotnet run -c Release --project benchmarks/KvEngine.Benchmarks -- --filter '*MemTable*' --inProcess
//   dotnet run -c Release --project benchmarks/KvEngine.Benchmarks -- --cpu-time [seconds] [rounds]
//     (MultiGetBenchmarks by process CPU time, MultiGet/Gets per pair: CpuTimeRunner.cs)
if (args.Length > 0 && args[0] == "--cpu-time")
{
    KvEngine.Benchmarks.CpuTimeRunner.Run(args[1..]);
}
else
{
    BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
