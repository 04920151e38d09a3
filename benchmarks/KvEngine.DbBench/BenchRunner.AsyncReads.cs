using System.Buffers;
using System.Diagnostics;
using KvEngine.DbBench.Engines;

namespace KvEngine.DbBench;

/// <summary>
/// The read paths of <see cref="BenchRunner{TEngine, TIterator, TBatch}"/> beyond one synchronous
/// Get at a time: multireadrandom's batch (<see cref="IssueMultiGet"/>) or per-key lookups
/// (<see cref="GetEach"/>), and readrandom with -inflight requests outstanding per thread
/// (<see cref="ReadRandomInFlight"/>).
/// </summary>
internal sealed partial class BenchRunner<TEngine, TIterator, TBatch>
{
    /// <summary>
    /// The one place multireadrandom issues a batched lookup (-multiread_batched). With -async_io,
    /// KvEngine's engine takes its asynchronous MultiGet (MultiGetAsync: the batch's block reads
    /// submitted at once) and waits for it on this thread.
    /// </summary>
    private void IssueMultiGet(ReadOnlyMemory<byte>[] keys, MultiGetResults results) => _engine.MultiGet(0, keys, results);

    /// <summary>multireadrandom without -multiread_batched: one point lookup per key, as db_bench's vector MultiGet.</summary>
    private void GetEach(ThreadState s, byte[][] keys, ArrayBufferWriter<byte> value)
    {
        foreach (byte[] key in keys)
        {
            value.ResetWrittenCount();
            if (_engine.TryGet(0, key, value))
            {
                s.Found++;
                s.Bytes += _f.KeySize + value.WrittenCount;
            }
        }
    }

    /// <summary>
    /// readrandom with -inflight=N: N workers on this thread's behalf, each issuing its next GetAsync
    /// as soon as its previous one completes, so N requests stay outstanding; they share the
    /// thread's operation count (or -duration). Each worker has its own key buffer, random keys
    /// (seeded from the thread's generator), counters and histogram, merged into the thread's state
    /// at the end. A Get that completes synchronously (its blocks cached) lets its worker go on at
    /// once, so the requests in flight are the ones that wait for the device.
    /// </summary>
    private void ReadRandomInFlight(ThreadState s)
    {
        var workers = new InFlightWorker[_f.InFlight];
        var tasks = new Task[workers.Length];
        long issued = 0;
        for (int w = 0; w < workers.Length; w++)
        {
            workers[w] = new InFlightWorker(s.Random.Next(), _f.KeySize, _f.ValueSize, s.Histogram != null);
        }
        for (int w = 0; w < workers.Length; w++)
        {
            tasks[w] = RunWorkerAsync(workers[w], s);
        }
        Task.WaitAll(tasks);
        long done = 0;
        foreach (InFlightWorker w in workers)
        {
            done += w.Done;
            s.Found += w.Found;
            s.Bytes += w.Bytes;
            if (w.Histogram != null)
            {
                s.Histogram!.Merge(w.Histogram);
            }
        }
        s.Done = done;
        s.Message = string.Create(s_c, $"({s.Found} of {done} found, {_f.InFlight} in flight)");

        async Task RunWorkerAsync(InFlightWorker w, ThreadState state)
        {
            await Task.Yield(); // every worker starts on the pool: none runs the whole count before the others begin
            while (true)
            {
                long i = Interlocked.Increment(ref issued) - 1;
                if (!KeepGoing(i))
                {
                    return;
                }
                long t0 = w.Histogram != null ? Stopwatch.GetTimestamp() : 0;
                FillKey(w.Key, w.Random.NextInt64(_f.Num));
                w.Value.ResetWrittenCount();
                if (await _engine.TryGetAsync(w.Key, w.Value).ConfigureAwait(false))
                {
                    w.Found++;
                    w.Bytes += _f.KeySize + w.Value.WrittenCount;
                }
                w.Histogram?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
                w.Done++;
                Progress(state, Interlocked.Read(ref issued));
            }
        }
    }
}
