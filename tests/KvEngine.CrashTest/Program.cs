using KvEngine.CrashTest;

// kvcrashtest: RocksDB's db_crashtest.py for KvEngine. Exit codes: 0 no loss found, 1 a loss or
// verification failure, 2 bad arguments, 4 --power-cut without a usable FUSE.
try
{
    CrashTestFlags flags = CrashTestFlags.Parse(args);
    return new CrashTestRunner(flags, Console.Out).Run();
}
catch (FuseUnavailableException e)
{
    Console.Out.WriteLine("kvcrashtest: FUSE unavailable: " + e.Message);
    return PowerCutFs.UnavailableExitCode;
}
catch (ArgumentException e)
{
    Console.Error.WriteLine("kvcrashtest: " + e.Message);
    Console.Error.WriteLine("usage: kvcrashtest [--kill | --power-loss | --faults | --power-cut] [--cycles N | --duration S] [--seed N] [--db DIR]");
    Console.Error.WriteLine("                   [--threads N] [--max-key N] [--column-families N] [--ops N] [--min-kill-ms N] [--max-kill-ms N] [--kvstress PATH] [--direct-io 0|1] [-- kvstress flags]");
    Console.Error.WriteLine("                   --power-cut (FUSE): [--mmap-wal 0|1] [--cut-in-open-one-in N] [--lie-fsync SUFFIX] [--keep-unsynced-one-in N]");
    return 2;
}
