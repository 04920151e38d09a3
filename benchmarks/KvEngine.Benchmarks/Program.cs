using BenchmarkDotNet.Running;

// Every benchmark class in this assembly, chosen with BenchmarkDotNet's command line, e.g.
//   dotnet run -c Release --project benchmarks/KvEngine.Benchmarks -- --filter '*'
//   dotnet run -c Release --project benchmarks/KvEngine.Benchmarks -- --filter '*MemTable*' --inProcess
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
