using KvEngine.Filters;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>Options for partitioned (two-level) test tables.</summary>
internal static class PartitionedTables
{
    public static TableOptions Options(bool decoupled, int metadataBlockSize = 4096, double bitsPerKey = 10) => new()
    {
        IndexType = IndexType.TwoLevelIndexSearch,
        PartitionFilters = true,
        DecouplePartitionedFilters = decoupled,
        MetadataBlockSize = metadataBlockSize,
        FilterPolicy = new FastLocalBloomPolicy(bitsPerKey),
    };
}
