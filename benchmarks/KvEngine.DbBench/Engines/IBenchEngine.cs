using System.Buffers;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// A storage engine kvbench's workloads run against (<c>-engine=</c>): KvEngine
/// (<see cref="KvEngineBench"/>) or release RocksDB through RocksDbSharp (<see cref="RocksDbBench"/>).
/// The workloads in <see cref="BenchRunner{TEngine, TIterator, TBatch}"/> are written once against
/// this interface. Implementations are structs, so the JIT compiles the runner once per engine with
/// direct, inlinable calls: the per-operation path has no interface dispatch and no allocation
/// beyond the engine's own.
/// <para>
/// An implementation is a mutable struct held in one field of the runner and never copied; it is
/// opened, closed and reopened between benchmarks on the main thread only. The data operations
/// (<see cref="Put"/>, <see cref="TryGet"/>, iterators...) may run on several benchmark threads at
/// once while it is open, as the underlying database allows.
/// </para>
/// </summary>
/// <typeparam name="TIterator">The engine's iterator.</typeparam>
/// <typeparam name="TBatch">The engine's write batch.</typeparam>
internal interface IBenchEngine<TIterator, TBatch> : IDisposable
    where TIterator : struct, IBenchIterator
    where TBatch : struct, IBenchBatch
{
    /// <summary>The name printed in kvbench's header (<c>-engine=</c> value and version).</summary>
    string Description { get; }

    /// <summary>Opens (creating if missing) the database at <c>-db</c> with the options the flags map to.</summary>
    void Open();

    /// <summary>Closes the database (idempotent); the block cache and statistics survive until <see cref="IDisposable.Dispose"/>.</summary>
    void Close();

    /// <summary>Puts into column family <paramref name="family"/> (0 = default; see <see cref="BenchFlags.NumColumnFamilies"/>).</summary>
    void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, bool sync);

    void Delete(ReadOnlySpan<byte> key, bool sync);

    /// <summary>Adds a merge operand (needs the engine's merge operator, from <c>-merge_operator</c>).</summary>
    void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, bool sync);

    /// <summary>A new, empty write batch, owned by the caller (dispose it).</summary>
    TBatch NewBatch();

    void Write(TBatch batch, bool sync);

    /// <summary>Looks <paramref name="key"/> up in column family <paramref name="family"/> and appends its value to <paramref name="value"/>; false when absent.</summary>
    bool TryGet(int family, ReadOnlySpan<byte> key, ArrayBufferWriter<byte> value);

    /// <summary>
    /// Looks all of <paramref name="keys"/> up in column family <paramref name="family"/> in one batched
    /// MultiGet (db_bench's multireadrandom with -multiread_batched); result <c>i</c> in
    /// <paramref name="results"/> belongs to key <c>i</c>.
    /// </summary>
    void MultiGet(int family, ReadOnlyMemory<byte>[] keys, MultiGetResults results);

    /// <summary>
    /// <see cref="TryGet"/> through the engine's asynchronous Get on the default column family
    /// (kvbench's -inflight); completes synchronously when no read waits for the device. Engines
    /// without an asynchronous Get refuse -inflight when their flags are validated.
    /// </summary>
    ValueTask<bool> TryGetAsync(ReadOnlyMemory<byte> key, ArrayBufferWriter<byte> value);

    /// <summary>A new iterator over the default column family, owned by the caller (dispose it).</summary>
    TIterator NewIterator();

    /// <summary>Flushes the memtables of every column family to level 0 and waits for it.</summary>
    void Flush();

    /// <summary>Compacts the whole key range (db_bench's <c>compact</c>: CompactRange(nullptr, nullptr)).</summary>
    void CompactAll();

    /// <summary>A RocksDB property (<c>rocksdb.stats</c>, <c>rocksdb.num-running-compactions</c>...); null when unknown.</summary>
    string? GetProperty(string name);

    /// <summary>db_bench's <c>sstables</c> output: the live table files per level.</summary>
    string SsTables();

    /// <summary>
    /// The engine's memory figures now (<see cref="EngineMemory.Unknown"/> while closed); called by
    /// kvbench's memory sampler from its own thread while benchmark threads run, never during open or close.
    /// </summary>
    EngineMemory SampleMemory();

    /// <summary>After the run: block cache and (with <c>-statistics</c>) statistics, in db_bench's words where it has them.</summary>
    void PrintReport(TextWriter output);
}
