using KvEngine.Stress;

// kvstress: RocksDB db_stress for KvEngine. Exit codes: 0 passed, 1 verification failure,
// 2 bad arguments, 3 unexpected error.
const string Usage = """
    usage: kvstress -db=DIR -expected_values_dir=DIR [flags]     (on disk; a killed run is verified by the next)
           kvstress -power_loss_cycles=N [-fault_injection] [flags] (in memory: power cuts, I/O errors)
    flags (db_stress's spelling): -max_key -ops_per_thread -threads -reopen -readpercent -prefixpercent
      -writepercent -delpercent -delrangepercent -iterpercent -value_size_mult -write_buffer_size -bloom_bits -sync
      -sync_one_in -seed -destroy_db_initially -verify_only -verify_db_one_in -compression_type
      -flush_one_in -compact_range_one_in -acquire_snapshot_one_in -write_batch_one_in
      -range_deletion_width -read_fault_one_in -write_fault_one_in -progress_ms -column_families
      -use_merge (every Put is a Merge under db_stress's PutOperator) -mmap_wal (KvOptions.MemoryMappedWal, default 1)
      -use_direct_reads -use_direct_io_for_flush_and_compaction (KvOptions' direct I/O, default 0)
      -compaction_style (0 leveled, the default; 1 universal)
      -durability_journal (on disk: keep the durability model beside the expected state and verify each
        open as after a power cut; kvcrashtest --power-cut)
    """;
if (args.Length == 1 && args[0].TrimStart('-') is "help" or "h")
{
    Console.Out.WriteLine(Usage);
    return 0;
}
StressFlags flags;
try
{
    flags = StressFlags.Parse(args);
}
catch (ArgumentException e)
{
    Console.Error.WriteLine("kvstress: " + e.Message);
    Console.Error.WriteLine(Usage);
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
