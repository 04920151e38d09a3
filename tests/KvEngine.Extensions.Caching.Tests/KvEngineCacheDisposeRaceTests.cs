using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Xunit.Abstractions;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// Disposing the cache while tasks call Set, SetAsync, Get, GetAsync, Refresh and Remove on it
/// (small memtables, so switches and flushes happen meanwhile): every call returns normally or
/// throws ObjectDisposedException (or KvException), a value read is one that was written, every
/// task ends; a use after free in the engine kills the test host. Randomized delays create the
/// race; nothing is asserted about timing. Long form:
/// <c>KVENGINE_DISPOSE_RACE_TRIALS=2000 dotnet test --filter KvEngineCacheDisposeRaceTests</c>.
/// </summary>
public sealed class KvEngineCacheDisposeRaceTests : IDisposable
{
    private const int CiTrials = 30;
    private const int Keys = 32;

    private readonly TempDirectory _dir = new();
    private readonly ITestOutputHelper _output;

    public KvEngineCacheDisposeRaceTests(ITestOutputHelper output)
    {
        _output = output;
    }

    public void Dispose() => _dir.Dispose();

    [Fact]
    public void CacheCallsFinishOrThrowObjectDisposedWhenDisposeRacesThem()
    {
        int trials = int.TryParse(Environment.GetEnvironmentVariable("KVENGINE_DISPOSE_RACE_TRIALS"), CultureInfo.InvariantCulture, out int n) ? n : CiTrials;
        int seed = Environment.TickCount;
        long succeeded = 0;
        long refused = 0;
        for (int trial = 0; trial < trials; trial++)
        {
            var failures = new ConcurrentQueue<string>();
            string path = Path.Combine(_dir.Path, trial.ToString(CultureInfo.InvariantCulture));
            (long ok, long no) = RunTrial(path, new Random(seed + trial), failures);
            Assert.True(failures.IsEmpty, $"trial {trial} (seed {seed + trial}):{Environment.NewLine}{string.Join(Environment.NewLine, failures)}");
            succeeded += ok;
            refused += no;
            Directory.Delete(path, recursive: true);
        }
        _output.WriteLine($"{trials} trials, seed {seed}: {succeeded} calls succeeded, {refused} refused");
        Assert.True(refused > 0, "no call ever met a disposed cache: the race was not exercised");
    }

    private static (long Succeeded, long Refused) RunTrial(string path, Random rng, ConcurrentQueue<string> failures)
    {
        var cache = new KvEngineCache(Options.Create(new KvEngineCacheOptions
        {
            Path = path,
            ConfigureDatabase = o =>
            {
                o.WriteBufferSize = 32 << 10;
                o.MaxWriteBufferNumber = 3;
            },
        }));
        long succeeded = 0;
        long refused = 0;
        var disposeStarted = 0;
        using var start = new Barrier(5);
        var tasks = new Task[4];
        for (int i = 0; i < tasks.Length; i++)
        {
            int taskSeed = rng.Next();
            tasks[i] = Task.Factory.StartNew(() =>
            {
                var r = new Random(taskSeed);
                start.SignalAndWait();
                int after = 0;
                while (after < 8)
                {
                    if (Volatile.Read(ref disposeStarted) != 0)
                    {
                        after++;
                    }
                    int k = r.Next(Keys);
                    string key = "key" + k.ToString(CultureInfo.InvariantCulture);
                    try
                    {
                        CallOnce(cache, r, key, k, failures);
                        Interlocked.Increment(ref succeeded);
                    }
                    catch (Exception e) when (e is ObjectDisposedException or KvException)
                    {
                        Interlocked.Increment(ref refused);
                        after = Math.Max(after, 4);
                    }
#pragma warning disable CA1031 // the test reports every unexpected exception
                    catch (Exception e)
#pragma warning restore CA1031
                    {
                        failures.Enqueue(e.ToString());
                        return;
                    }
                }
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        }
        start.SignalAndWait();
        Thread.Sleep(rng.Next(1, 8));
        Volatile.Write(ref disposeStarted, 1);
        if (rng.Next(2) == 0)
        {
            cache.Dispose();
        }
        else
        {
            cache.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
        if (!Task.WaitAll(tasks, TimeSpan.FromMinutes(2)))
        {
            failures.Enqueue("a task did not end within 2 minutes of Dispose (hang)");
        }
        return (succeeded, refused);
    }

    private static void CallOnce(KvEngineCache cache, Random r, string key, int k, ConcurrentQueue<string> failures)
    {
        switch (r.Next(8))
        {
            case 0:
            case 1:
                cache.Set(key, Value(k), new DistributedCacheEntryOptions());
                break;
            case 2:
                cache.SetAsync(key, Value(k), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromHours(1) }).GetAwaiter().GetResult();
                break;
            case 3:
            case 4:
                Check(key, k, cache.Get(key), failures);
                break;
            case 5:
                Check(key, k, cache.GetAsync(key).GetAwaiter().GetResult(), failures);
                break;
            case 6:
                cache.Refresh(key);
                break;
            default:
                cache.Remove(key);
                break;
        }
    }

    private static void Check(string key, int k, byte[]? value, ConcurrentQueue<string> failures)
    {
        if (value != null && !value.AsSpan().SequenceEqual(Value(k)))
        {
            failures.Enqueue($"{key}: read a value never written: {Convert.ToHexString(value)}");
        }
    }

    // 300 B to 8 KiB: the small memtables fill and switch within a trial, and a large value's WAL
    // append is long enough for Dispose to land in it.
    private static byte[] Value(int k) => Encoding.ASCII.GetBytes("value" + k.ToString(CultureInfo.InvariantCulture) + new string('x', 300 + (k * 250)));
}
