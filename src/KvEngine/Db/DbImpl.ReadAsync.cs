using System.Buffers;
using System.Runtime.CompilerServices;
using KvEngine.Db.Read;
using KvEngine.Db.State;
using KvEngine.Storage.IO;
using KvEngine.Table;

namespace KvEngine.Db;

/// <summary>
/// The asynchronous point lookups (GetAsync, TryGetAsync, MultiGetAsync): the synchronous lookup
/// run in rounds over one pinned read state at one sequence (both taken at the start, so every
/// round sees the same state). A round is an attempt in which a table read that the block cache
/// cannot serve is deferred, not done (<see cref="DeferredBlockReads"/>); the deferred reads of a
/// round go to the block-read engine in one batch, the operation awaits them without holding a
/// thread, and the next round finds their bytes. A lookup whose blocks are all cached (or that the
/// memtables decide) finishes in its first round, synchronously and without allocating.
/// <para>
/// Bounds: each round fetches at least one new range, and fetched ranges are kept for the whole
/// operation, so a lookup needs as many rounds as blocks on its path that are not cached (filter,
/// index, partition, data per table visited); past <see cref="MaxAsyncReadRounds"/> the last round
/// reads synchronously. Cancellation is honoured while a round's reads are awaited. Dispose: the
/// pinned read state keeps the tables and the block cache alive (<see cref="NativeLifetime"/>), a
/// read in flight holds its file open, and an operation that resumes after Dispose throws
/// <see cref="ObjectDisposedException"/> instead of starting another round.
/// </para>
/// Thread-safety: as the synchronous reads; any number of operations at once.
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>Rounds after which a lookup stops deferring and reads synchronously (a safety net: real lookups need a few).</summary>
    internal const int MaxAsyncReadRounds = 64;

    private IBlockReadEngine ReadEngine => _options.BlockReadEngine ?? BlockReadEngines.Shared;

    /// <summary>The asynchronous <see cref="TryGet"/>: appends the value to <paramref name="value"/> (only once the lookup has decided).</summary>
    public ValueTask<bool> TryGetAsync(ColumnFamilyData cfd, ReadOnlyMemory<byte> key, IBufferWriter<byte> value, ReadOptions options, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<bool>(cancellationToken);
        }
        if (IsDisposed)
        {
            return ValueTask.FromException<bool>(new ObjectDisposedException(typeof(KvDb).FullName));
        }
        AsyncPointReadContext ctx = AsyncPointReadContext.Rent();
        try
        {
            ValueTask<bool> read = PointReadAsync(ctx, cfd, key, value, options, returnContext: true, cancellationToken, out bool continued);
            if (!continued)
            {
                ctx.Return(); // decided in the first round (the continuation returns it otherwise)
            }
            return read;
        }
        catch (Exception e)
        {
            ctx.Return();
            return ValueTask.FromException<bool>(e);
        }
    }

    /// <summary>The asynchronous Get: the value as a new array, or null.</summary>
    public ValueTask<byte[]?> GetAsync(ColumnFamilyData cfd, ReadOnlyMemory<byte> key, ReadOptions options, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<byte[]?>(cancellationToken);
        }
        if (IsDisposed)
        {
            return ValueTask.FromException<byte[]?>(new ObjectDisposedException(typeof(KvDb).FullName));
        }
        AsyncPointReadContext ctx = AsyncPointReadContext.Rent();
        try
        {
            ValueTask<bool> read = PointReadAsync(ctx, cfd, key, ctx.Value, options, returnContext: false, cancellationToken, out _);
            if (read.IsCompleted)
            {
                byte[]? result = read.Result ? ctx.Value.WrittenSpan.ToArray() : null;
                ctx.Return();
                return new ValueTask<byte[]?>(result);
            }
            return ValueAfterAsync(read, ctx);
        }
        catch (Exception e)
        {
            ctx.Return();
            return ValueTask.FromException<byte[]?>(e);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<byte[]?> ValueAfterAsync(ValueTask<bool> read, AsyncPointReadContext ctx)
    {
        try
        {
            return await read.ConfigureAwait(false) ? ctx.Value.WrittenSpan.ToArray() : null;
        }
        finally
        {
            ctx.Return();
        }
    }

    /// <summary>
    /// The first round, synchronously; a lookup that deferred continues in
    /// <see cref="ContinuePointReadAsync"/> (<paramref name="continued"/>), which returns
    /// <paramref name="ctx"/> when it ends if <paramref name="returnContext"/>; otherwise the
    /// caller returns it.
    /// </summary>
    private ValueTask<bool> PointReadAsync(AsyncPointReadContext ctx, ColumnFamilyData cfd, ReadOnlyMemory<byte> key, IBufferWriter<byte> value, ReadOptions options,
        bool returnContext, CancellationToken cancellationToken, out bool continued)
    {
        continued = false;
        ReadState state = cfd.AcquireReadState(); // the state, then the sequence (see TryGet)
        _stats?.Record(Ticker.NumberKeysRead);
        bool handedOff = false;
        try
        {
            ulong sequence = ReadSequence(options);
            if (TryRound(ctx.Reads, cfd, state, key.Span, sequence, value, options, out bool found))
            {
                return new ValueTask<bool>(found);
            }
            handedOff = true;
            continued = true;
            return ContinuePointReadAsync(ctx, cfd, state, key, sequence, value, options, returnContext, cancellationToken);
        }
        finally
        {
            if (!handedOff)
            {
                state.Unref();
            }
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> ContinuePointReadAsync(AsyncPointReadContext ctx, ColumnFamilyData cfd, ReadState state, ReadOnlyMemory<byte> key, ulong sequence,
        IBufferWriter<byte> value, ReadOptions options, bool returnContext, CancellationToken cancellationToken)
    {
        try
        {
            IBlockReadEngine engine = ReadEngine;
            for (int round = 1; ; round++)
            {
                await ctx.Reads.FetchAsync(engine, cancellationToken).ConfigureAwait(false);
                ThrowIfDisposed();
                if (round >= MaxAsyncReadRounds)
                {
                    return _pointReader.TryGet(cfd, state, key.Span, sequence, value, options);
                }
                if (TryRound(ctx.Reads, cfd, state, key.Span, sequence, value, options, out bool found))
                {
                    return found;
                }
            }
        }
        finally
        {
            state.Unref();
            if (returnContext)
            {
                ctx.Return();
            }
        }
    }

    /// <summary>One attempt of a point lookup: true when it decided (<paramref name="found"/>), false when it deferred a read.</summary>
    private bool TryRound(DeferredBlockReads reads, ColumnFamilyData cfd, ReadState state, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value,
        ReadOptions options, out bool found)
    {
        DeferredBlockReads? previous = reads.Enter();
        try
        {
            found = _pointReader.TryGet(cfd, state, key, sequence, value, options);
            return true;
        }
        catch (BlockReadDeferredException e) when (ReferenceEquals(e, reads.Signal))
        {
            found = false;
            return false;
        }
        finally
        {
            DeferredBlockReads.Exit(previous);
        }
    }

    /// <summary>
    /// The asynchronous <see cref="MultiGet"/>: first the batched lookup (<see cref="MultiGetReader"/>)
    /// as one round, which finishes when every block it needs is cached; otherwise every key is
    /// looked up on its own at the same state and sequence, round by round, each round's deferred
    /// reads (every unfinished key's next block) in one engine batch.
    /// </summary>
    public ValueTask MultiGetAsync(ColumnFamilyData cfd, ReadOnlyMemory<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions options,
        CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        if (IsDisposed)
        {
            return ValueTask.FromException(new ObjectDisposedException(typeof(KvDb).FullName));
        }
        results.Reset(keys.Length);
        if (keys.Length == 0)
        {
            return default;
        }
        AsyncPointReadContext ctx = AsyncPointReadContext.Rent();
        ReadState state;
        try
        {
            state = cfd.AcquireReadState(); // the state, then the sequence (see TryGet)
        }
        catch (Exception e)
        {
            ctx.Return();
            return ValueTask.FromException(e);
        }
        bool handedOff = false;
        try
        {
            ulong sequence = ReadSequence(options);
            DeferredBlockReads? previous = ctx.Reads.Enter();
            try
            {
                _multiGetReader.MultiGet(cfd, state, sequence, keys.Span, results, options);
                return default;
            }
            catch (BlockReadDeferredException e) when (ReferenceEquals(e, ctx.Reads.Signal))
            {
                // some block is not cached: key by key from here
            }
            finally
            {
                DeferredBlockReads.Exit(previous);
            }
            results.Reset(keys.Length);
            int remaining = LookUpKeysRound(ctx, cfd, state, keys.Span, sequence, results, options, ctx.StartKeys(keys.Length), defer: true);
            if (remaining == 0)
            {
                RecordMultiGet(results, keys.Length);
                return default;
            }
            handedOff = true;
            return ContinueMultiGetAsync(ctx, cfd, state, keys, sequence, results, options, remaining, cancellationToken);
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
        finally
        {
            if (!handedOff)
            {
                state.Unref();
                ctx.Return();
            }
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask ContinueMultiGetAsync(AsyncPointReadContext ctx, ColumnFamilyData cfd, ReadState state, ReadOnlyMemory<ReadOnlyMemory<byte>> keys,
        ulong sequence, MultiGetResults results, ReadOptions options, int remaining, CancellationToken cancellationToken)
    {
        try
        {
            IBlockReadEngine engine = ReadEngine;
            for (int round = 1; remaining > 0; round++)
            {
                await ctx.Reads.FetchAsync(engine, cancellationToken).ConfigureAwait(false);
                ThrowIfDisposed();
                remaining = LookUpKeysRound(ctx, cfd, state, keys.Span, sequence, results, options, remaining, defer: round < MaxAsyncReadRounds);
            }
            RecordMultiGet(results, keys.Length);
        }
        finally
        {
            state.Unref();
            ctx.Return();
        }
    }

    /// <summary>
    /// One round of a batch: looks up each unfinished key (<see cref="AsyncPointReadContext.Keys"/>[0..<paramref name="count"/>));
    /// returns how many deferred (compacted to the front of the list). Without <paramref name="defer"/> every key finishes.
    /// </summary>
    private int LookUpKeysRound(AsyncPointReadContext ctx, ColumnFamilyData cfd, ReadState state, ReadOnlySpan<ReadOnlyMemory<byte>> keys, ulong sequence,
        MultiGetResults results, ReadOptions options, int count, bool defer)
    {
        int[] unfinished = ctx.Keys;
        int remaining = 0;
        for (int j = 0; j < count; j++)
        {
            int i = unfinished[j];
            int start = results.Begin();
            bool found;
            if (!defer)
            {
                found = _pointReader.TryGet(cfd, state, keys[i].Span, sequence, results.Writer, options);
            }
            else if (!TryRound(ctx.Reads, cfd, state, keys[i].Span, sequence, results.Writer, options, out found))
            {
                results.Complete(i, found: false, start);
                unfinished[remaining++] = i;
                continue;
            }
            results.Complete(i, found, start);
        }
        return remaining;
    }

    // The batch's tickers, as MultiGetReader records them.
    private void RecordMultiGet(MultiGetResults results, int keyCount)
    {
        if (_stats is { } stats)
        {
            int found = 0;
            for (int i = 0; i < keyCount; i++)
            {
                found += results.IsFound(i) ? 1 : 0;
            }
            stats.Record(Ticker.NumberMultiGetCalls);
            stats.Record(Ticker.NumberMultiGetKeysRead, keyCount);
            stats.Record(Ticker.NumberMultiGetKeysFound, found);
        }
    }
}
