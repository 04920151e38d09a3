using KvEngine.Storage;

namespace KvEngine.Stress;

/// <summary>
/// The <see cref="FaultInjectionFileSystem.ShouldFail"/> hook of the in-process modes: when
/// <see cref="Enabled"/>, fails reads with probability 1/-read_fault_one_in and writes, syncs,
/// creates, renames and deletes with 1/-write_fault_one_in (RocksDB db_stress's
/// read_fault_one_in / write_fault_one_in); when <see cref="PoweredOff"/>, fails everything (the
/// machine is off between the power cut and the reopen, so nothing the old instance does after the
/// cut can reach the disk). Thread-safe: the random source is locked.
/// </summary>
internal sealed class FaultPlan(long seed, int readOneIn, int writeOneIn)
{
    private readonly Random _rng = new((int)(seed ^ (seed >> 32)) ^ 0x5EED);
    private volatile bool _enabled;
    private volatile bool _poweredOff;
    private long _injected;

    public bool Enabled
    {
        get => _enabled;
        set => _enabled = value;
    }

    public bool PoweredOff
    {
        get => _poweredOff;
        set => _poweredOff = value;
    }

    /// <summary>I/O errors injected so far (not counting the powered-off ones).</summary>
    public long Injected => Interlocked.Read(ref _injected);

    public bool ShouldFail(FileOperation op, string path)
    {
        if (_poweredOff)
        {
            return true;
        }
        if (!_enabled)
        {
            return false;
        }
        int oneIn = op switch
        {
            FileOperation.Read or FileOperation.OpenRead => readOneIn,
            FileOperation.Lock or FileOperation.List or FileOperation.CreateDirectory => 0,
            _ => writeOneIn,
        };
        bool fail;
        lock (_rng)
        {
            fail = oneIn > 0 && _rng.Next(oneIn) == 0;
        }
        if (fail)
        {
            Interlocked.Increment(ref _injected);
        }
        return fail;
    }
}
