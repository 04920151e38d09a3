namespace KvEngine.Compaction;

/// <summary>Outcome of <see cref="CompactionPicker.PickManual"/>.</summary>
internal enum ManualPickResult
{
    /// <summary>No file of the level overlaps the remaining range.</summary>
    NothingToDo,

    /// <summary>Some needed file is being compacted: wait for it and retry.</summary>
    Conflict,

    /// <summary>A compaction was picked and registered.</summary>
    Picked,
}
