using KvEngine.Versions;

namespace KvEngine.Db.State;

/// <summary>
/// The live snapshots of one database, a doubly linked list in creation (hence sequence) order, so
/// the oldest is the head. Thread-safe: every operation takes the list's own lock (never held
/// across I/O).
/// </summary>
internal sealed class SnapshotList
{
    private readonly object _gate = new();
    private Snapshot? _head;
    private Snapshot? _tail;
    private int _count;

    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _count;
            }
        }
    }

    /// <summary>A snapshot at the versions' last sequence, read under this list's lock.</summary>
    public Snapshot CreateAtLatest(VersionSet versions)
    {
        lock (_gate)
        {
            return Create(versions.LastSequence);
        }
    }

    public Snapshot Create(ulong sequence)
    {
        var s = new Snapshot(this, sequence);
        lock (_gate)
        {
            s.Previous = _tail;
            if (_tail != null)
            {
                _tail.Next = s;
            }
            else
            {
                _head = s;
            }
            _tail = s;
            _count++;
        }
        return s;
    }

    public void Remove(Snapshot s)
    {
        lock (_gate)
        {
            if (s.Previous != null)
            {
                s.Previous.Next = s.Next;
            }
            else
            {
                _head = s.Next;
            }
            if (s.Next != null)
            {
                s.Next.Previous = s.Previous;
            }
            else
            {
                _tail = s.Previous;
            }
            s.Previous = null;
            s.Next = null;
            _count--;
        }
    }

    /// <summary>Sequence numbers of all live snapshots, ascending.</summary>
    public ulong[] GetSequences()
    {
        lock (_gate)
        {
            var result = new ulong[_count];
            int i = 0;
            for (Snapshot? s = _head; s != null; s = s.Next)
            {
                result[i++] = s.Sequence;
            }
            return result;
        }
    }
}
