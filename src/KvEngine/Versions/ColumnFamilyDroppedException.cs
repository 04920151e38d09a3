using System.Globalization;

namespace KvEngine.Versions;

/// <summary>
/// A flush or compaction finished for a column family that was dropped meanwhile: its edit is not
/// recorded, and its outputs become obsolete files. Never reaches a caller of the public API
/// (background jobs treat it as "nothing to do").
/// </summary>
internal sealed class ColumnFamilyDroppedException : KvException
{
    public ColumnFamilyDroppedException(uint id)
        : base($"Column family {id.ToString(CultureInfo.InvariantCulture)} was dropped.", KvStatusCode.ColumnFamilyDropped, KvStatusSubCode.None, null)
    {
    }
}
