namespace KvEngine.Storage.IO;

/// <summary>
/// One io_uring instance set up through the raw system calls: the SQ ring, the CQ ring (one mapping
/// when the kernel offers IORING_FEAT_SINGLE_MMAP) and the SQE array mapped into this process.
/// <para>
/// Memory ordering, as the kernel's protocol requires: the SQ head and the CQ tail are written by
/// the kernel and read here with acquire loads (Volatile.Read); the SQ tail
/// and the CQ head are written here with release stores (Volatile.Write)
/// after the SQEs they publish are filled, or after the CQEs they free are read.
/// </para>
/// <para>
/// Thread-safety: none of its own. Submission (<see cref="TryGetSqe"/>, <see cref="Publish"/>,
/// <see cref="Submit"/>) must be serialised by the caller; completion (<see cref="Reap"/>) must
/// have one consumer. One submitter and one consumer may run at the same time, and
/// <see cref="WaitForCompletion"/> may block while another thread submits. <see cref="Dispose"/>
/// must come after both have stopped.
/// </para>
/// </summary>
internal sealed unsafe class IoUring : IDisposable
{
    private int _fd;
    private readonly byte* _sqRing;
    private readonly nuint _sqRingSize;
    private readonly byte* _cqRing; // == _sqRing with a single mapping
    private readonly nuint _cqRingSize;
    private readonly IoUringSqe* _sqes;
    private readonly nuint _sqesSize;

    private readonly uint* _sqHead;
    private readonly uint* _sqTail;
    private readonly uint* _sqFlags;
    private readonly uint _sqMask;
    private uint _sqeTail; // SQEs handed out, published or not (ours alone)

    private readonly uint* _cqHead;
    private readonly uint* _cqTail;
    private readonly uint* _cqOverflow;
    private readonly IoUringCqe* _cqes;
    private readonly uint _cqMask;

    private IoUring(int fd, in IoUringParams p, byte* sqRing, nuint sqRingSize, byte* cqRing, nuint cqRingSize, IoUringSqe* sqes, nuint sqesSize)
    {
        _fd = fd;
        _sqRing = sqRing;
        _sqRingSize = sqRingSize;
        _cqRing = cqRing;
        _cqRingSize = cqRingSize;
        _sqes = sqes;
        _sqesSize = sqesSize;
        SqEntries = p.SqEntries;
        CqEntries = p.CqEntries;
        Features = p.Features;
        _sqHead = (uint*)(sqRing + p.SqOff.Head);
        _sqTail = (uint*)(sqRing + p.SqOff.Tail);
        _sqFlags = (uint*)(sqRing + p.SqOff.Flags);
        _sqMask = *(uint*)(sqRing + p.SqOff.RingMask);
        uint* array = (uint*)(sqRing + p.SqOff.Array);
        for (uint i = 0; i < SqEntries; i++)
        {
            array[i] = i; // SQE i always sits in slot i: the array is the identity, set once
        }
        _sqeTail = *_sqTail;
        _cqHead = (uint*)(cqRing + p.CqOff.Head);
        _cqTail = (uint*)(cqRing + p.CqOff.Tail);
        _cqOverflow = (uint*)(cqRing + p.CqOff.Overflow);
        _cqes = (IoUringCqe*)(cqRing + p.CqOff.Cqes);
        _cqMask = *(uint*)(cqRing + p.CqOff.RingMask);
    }

    public uint SqEntries { get; }

    public uint CqEntries { get; }

    /// <summary>IORING_FEAT_* bits the kernel reported.</summary>
    public uint Features { get; }

    /// <summary>CQEs the kernel dropped because the CQ ring was full (stays 0 with IORING_FEAT_NODROP).</summary>
    public uint DroppedCompletions => Volatile.Read(ref *_cqOverflow);

    /// <summary>
    /// Sets up a ring of <paramref name="entries"/> SQEs (the kernel rounds up to a power of two;
    /// the CQ ring gets twice as many). Returns 0 and the ring, or the errno that refused it
    /// (ENOSYS: no io_uring; EPERM: seccomp or io_uring_disabled; ENOMEM: locked-memory limit;
    /// EINVAL: bad size).
    /// </summary>
    public static int TryCreate(uint entries, out IoUring? ring)
    {
        ring = null;
        if (!OperatingSystem.IsLinux())
        {
            return 38; // ENOSYS
        }
        IoUringParams p = default;
        int fd = IoUringNative.Setup(entries, &p);
        if (fd < 0)
        {
            return -fd;
        }
        nuint sqSize = p.SqOff.Array + p.SqEntries * sizeof(uint);
        nuint cqSize = p.CqOff.Cqes + p.CqEntries * (nuint)sizeof(IoUringCqe);
        bool single = (p.Features & IoUringNative.FeatSingleMmap) != 0;
        if (single)
        {
            sqSize = cqSize = Math.Max(sqSize, cqSize);
        }
        byte* sq = Map(fd, sqSize, IoUringNative.OffSqRing, out int errno);
        if (sq == null)
        {
            PosixNative.Close(fd);
            return errno;
        }
        byte* cq = sq;
        if (!single)
        {
            cq = Map(fd, cqSize, IoUringNative.OffCqRing, out errno);
            if (cq == null)
            {
                PosixNative.Munmap((nint)sq, sqSize);
                PosixNative.Close(fd);
                return errno;
            }
        }
        nuint sqesSize = p.SqEntries * (nuint)sizeof(IoUringSqe);
        byte* sqes = Map(fd, sqesSize, IoUringNative.OffSqes, out errno);
        if (sqes == null)
        {
            if (!single)
            {
                PosixNative.Munmap((nint)cq, cqSize);
            }
            PosixNative.Munmap((nint)sq, sqSize);
            PosixNative.Close(fd);
            return errno;
        }
        ring = new IoUring(fd, p, sq, sqSize, cq, single ? 0 : cqSize, (IoUringSqe*)sqes, sqesSize);
        return 0;
    }

    private static byte* Map(int fd, nuint size, long offset, out int errno)
    {
        nint p = PosixNative.Mmap(0, size, PosixNative.ProtRead | PosixNative.ProtWrite, PosixNative.MapShared | IoUringNative.MapPopulate, fd, offset);
        if (p == PosixNative.MapFailed)
        {
            errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
            return null;
        }
        errno = 0;
        return (byte*)p;
    }

    /// <summary>SQEs handed out and not yet consumed by the kernel.</summary>
    public uint Unsubmitted => _sqeTail - Volatile.Read(ref *_sqHead);

    /// <summary>
    /// The next free SQE, zeroed, or null when the SQ ring is full (submit, then retry). It becomes
    /// visible to the kernel at the next <see cref="Publish"/>.
    /// </summary>
    public IoUringSqe* TryGetSqe()
    {
        uint head = Volatile.Read(ref *_sqHead); // acquire: the kernel has finished with SQEs before head
        if (_sqeTail - head >= SqEntries)
        {
            return null;
        }
        IoUringSqe* sqe = &_sqes[_sqeTail & _sqMask];
        *sqe = default;
        _sqeTail++;
        return sqe;
    }

    /// <summary>Publishes every SQE handed out (release store of the SQ tail) and returns how many the kernel has yet to consume.</summary>
    public uint Publish()
    {
        Volatile.Write(ref *_sqTail, _sqeTail); // release: the SQE contents are visible before the tail
        return Unsubmitted;
    }

    /// <summary>Publishes and submits the pending SQEs; returns how many the kernel consumed, or -errno.</summary>
    public int Submit()
    {
        uint pending = Publish();
        if (pending == 0)
        {
            return 0;
        }
        int r;
        do
        {
            r = IoUringNative.Enter(_fd, pending, 0, 0);
        }
        while (r == -IoUringNative.EIntr);
        return r;
    }

    /// <summary>
    /// Blocks until at least one CQE is ready (this also flushes CQEs the kernel kept back after a
    /// CQ overflow). Returns 0 or -errno (EINTR is retried).
    /// </summary>
    public int WaitForCompletion()
    {
        int r;
        do
        {
            r = IoUringNative.Enter(_fd, 0, 1, IoUringNative.EnterGetEvents);
        }
        while (r == -IoUringNative.EIntr);
        return r < 0 ? r : 0;
    }

    /// <summary>True when the kernel holds CQEs back because the CQ ring overflowed (IORING_SQ_CQ_OVERFLOW).</summary>
    public bool CqOverflowed => (Volatile.Read(ref *_sqFlags) & IoUringNative.SqCqOverflow) != 0;

    /// <summary>
    /// Copies up to <paramref name="userData"/>.Length ready CQEs out and frees their slots (release
    /// store of the CQ head). Returns how many. Single consumer.
    /// </summary>
    public int Reap(Span<ulong> userData, Span<int> results)
    {
        uint head = *_cqHead;
        uint tail = Volatile.Read(ref *_cqTail); // acquire: the CQEs before tail are fully written
        int n = 0;
        while (head != tail && n < userData.Length)
        {
            IoUringCqe* cqe = &_cqes[head & _cqMask];
            userData[n] = cqe->UserData;
            results[n] = cqe->Result;
            n++;
            head++;
        }
        Volatile.Write(ref *_cqHead, head); // release: the slots are free only after they are read
        return n;
    }

    public void Dispose()
    {
        if (_fd < 0)
        {
            return;
        }
        PosixNative.Munmap((nint)_sqes, _sqesSize);
        if (_cqRingSize != 0)
        {
            PosixNative.Munmap((nint)_cqRing, _cqRingSize);
        }
        PosixNative.Munmap((nint)_sqRing, _sqRingSize);
        PosixNative.Close(_fd);
        _fd = -1;
    }
}
