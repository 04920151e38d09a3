namespace KvEngine.DbBench;

/// <summary>
/// The process's memory at one moment: its resident set (the operating system's view), the
/// managed heap (bytes in it now, live or not yet collected: <see cref="GC.GetTotalMemory(bool)"/>;
/// committed and large-object heap as of the last collection: <see cref="GC.GetGCMemoryInfo()"/>),
/// and the engine's own figures; taken while
/// <see cref="Phase"/> ran, <see cref="Seconds"/> after kvbench started. Immutable.
/// </summary>
internal readonly record struct MemorySnapshot(long Rss, long GcHeap, long GcCommitted, long GcLargeObjects, EngineMemory Engine, string Phase, double Seconds);
