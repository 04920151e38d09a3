using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace KvEngine.Db.State;

/// <summary>
/// The database mutex (RocksDB's DBImpl::mutex_ and its InstrumentedMutex::AssertHeld): one per
/// open database, it guards the writer queue, the families' memtable lists and the family table,
/// background scheduling, the pending outputs and the background error (each collaborator's comment
/// says which of its members). A <see cref="Monitor"/> underneath, so it is re-entrant and is also
/// the condition variable (<see cref="Wait(string)"/>, <see cref="PulseAll"/>).
/// <para>
/// Checked lock rules: a member that must run with the mutex held calls <see cref="AssertHeld"/>
/// first, one that must not (it waits, or does I/O another thread's hold would stall) calls
/// <see cref="AssertNotHeld"/>. Both throw <see cref="InvalidOperationException"/> naming the caller
/// when <see cref="AssertionsEnabled"/> is set (Debug builds, and the test assembly sets it for
/// the whole run); otherwise they cost one static read.
/// </para>
/// <para>
/// Thread-safety: every member may be called from any thread. The monitor is this object itself,
/// so a <c>lock</c> statement on it would take the same lock as <see cref="Lock"/>; use
/// <see cref="Lock"/> (a scope struct, no allocation).
/// </para>
/// </summary>
internal sealed class DbMutex
{
    /// <summary>
    /// True when <see cref="AssertHeld"/> and <see cref="AssertNotHeld"/> check (Debug builds; the
    /// tests set it at module load). Set it before a database opens.
    /// </summary>
    public static bool AssertionsEnabled
    {
        get => s_assertionsEnabled;
        set => s_assertionsEnabled = value;
    }

#if DEBUG
    private static bool s_assertionsEnabled = true;
#else
    private static bool s_assertionsEnabled;
#endif

    /// <summary>Takes the mutex; dispose the scope (a <c>using</c>) to release it.</summary>
    public Scope Lock()
    {
        Monitor.Enter(this);
        return new Scope(this);
    }

    /// <summary>Takes the mutex; pair with <see cref="Exit"/> (prefer <see cref="Lock"/>).</summary>
    public void Enter() => Monitor.Enter(this);

    /// <summary>Releases the mutex taken by <see cref="Enter"/>.</summary>
    public void Exit() => Monitor.Exit(this);

    /// <summary>True when the calling thread holds the mutex.</summary>
    public bool IsHeld => Monitor.IsEntered(this);

    /// <summary>Holds the mutex: releases it until <see cref="PulseAll"/> (or a spurious wake-up), then takes it again.</summary>
    public void Wait([CallerMemberName] string caller = "")
    {
        AssertHeld(caller);
        Monitor.Wait(this);
    }

    /// <summary>As <see cref="Wait(string)"/>, for at most <paramref name="millisecondsTimeout"/>; false when the time ran out.</summary>
    public bool Wait(int millisecondsTimeout, [CallerMemberName] string caller = "")
    {
        AssertHeld(caller);
        return Monitor.Wait(this, millisecondsTimeout);
    }

    /// <summary>As <see cref="Wait(string)"/>, for at most <paramref name="timeout"/>; false when the time ran out.</summary>
    public bool Wait(TimeSpan timeout, [CallerMemberName] string caller = "")
    {
        AssertHeld(caller);
        return Monitor.Wait(this, timeout);
    }

    /// <summary>Holds the mutex: wakes every thread waiting in <see cref="Wait(string)"/>.</summary>
    public void PulseAll([CallerMemberName] string caller = "")
    {
        AssertHeld(caller);
        Monitor.PulseAll(this);
    }

    /// <summary>Throws when checks are on and the calling thread does not hold the mutex.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void AssertHeld([CallerMemberName] string caller = "")
    {
        if (s_assertionsEnabled && !Monitor.IsEntered(this))
        {
            ThrowNotHeld(caller);
        }
    }

    /// <summary>Throws when checks are on and the calling thread holds the mutex.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void AssertNotHeld([CallerMemberName] string caller = "")
    {
        if (s_assertionsEnabled && Monitor.IsEntered(this))
        {
            ThrowHeld(caller);
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowNotHeld(string caller) =>
        throw new InvalidOperationException($"{caller} must run with the database mutex held.");

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowHeld(string caller) =>
        throw new InvalidOperationException($"{caller} must run without the database mutex.");

    /// <summary>A hold of the mutex; <see cref="Dispose"/> releases it (once).</summary>
    public readonly struct Scope : IDisposable
    {
        private readonly DbMutex _mutex;

        internal Scope(DbMutex mutex) => _mutex = mutex;

        /// <summary>Releases the mutex.</summary>
        public void Dispose() => Monitor.Exit(_mutex);
    }
}
