namespace KvEngine.Db.State;

/// <summary>
/// A parked iterator tree a family keeps for its next iterator (<see cref="ColumnFamilyData.SpareIterators"/>).
/// The read path parks and takes them; the family only drops them (a new read state, a release,
/// close), so it needs nothing of the tree but its disposal. Dispose is idempotent.
/// </summary>
internal interface ISpareIterator
{
    /// <summary>Disposes the tree and unpins the read state it holds (once).</summary>
    void Dispose();
}
