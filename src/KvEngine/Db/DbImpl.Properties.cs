using KvEngine.Db.State;
using KvEngine.Db.Stats;

namespace KvEngine.Db;

/// <summary>
/// Properties and size estimates dispatch: the checks of the database's state, then
/// <see cref="InternalStats"/> (GetProperty) and <see cref="SizeApproximation"/>.
/// </summary>
internal sealed partial class DbImpl
{
    public string? GetProperty(ColumnFamilyData cfd, string name)
    {
        using CallScope call = EnterCall();
        return _internalStats.GetProperty(cfd, name);
    }

    public long[] GetApproximateSizes(ColumnFamilyData cfd, IReadOnlyList<KeyRange> ranges, SizeApproximationFlags flags)
    {
        SizeApproximation.CheckArguments(ranges, flags);
        using CallScope call = EnterCall();
        return SizeApproximation.GetApproximateSizes(cfd, ranges, flags);
    }

    public void GetApproximateMemTableStats(ColumnFamilyData cfd, KeyRange range, out long count, out long size)
    {
        SizeApproximation.CheckRange(range);
        using CallScope call = EnterCall();
        SizeApproximation.GetApproximateMemTableStats(cfd, range, out count, out size);
    }
}
