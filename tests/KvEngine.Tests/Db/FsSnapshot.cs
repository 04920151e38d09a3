using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// The bytes of every file of one directory of a <see cref="FaultInjectionFileSystem"/>, so a test
/// can damage a database, try to open it, and put the original back for the next attempt.
/// Immutable after <see cref="Take"/>.
/// </summary>
internal sealed class FsSnapshot
{
    private readonly string _dir;
    private readonly Dictionary<string, byte[]> _files;

    private FsSnapshot(string dir, Dictionary<string, byte[]> files)
    {
        _dir = dir;
        _files = files;
    }

    public static FsSnapshot Take(FaultInjectionFileSystem fs, string dir)
    {
        var files = new Dictionary<string, byte[]>(StringComparer.Ordinal);
        foreach (string name in fs.GetChildren(dir))
        {
            files[name] = fs.ReadAllBytes(Path.Combine(dir, name));
        }
        return new FsSnapshot(dir, files);
    }

    public byte[] Bytes(string name) => _files[name];

    /// <summary>Makes the directory hold exactly the snapshot's files again, durably.</summary>
    public void Restore(FaultInjectionFileSystem fs)
    {
        foreach (string name in fs.GetChildren(_dir))
        {
            if (!_files.ContainsKey(name))
            {
                fs.DeleteFile(Path.Combine(_dir, name));
            }
        }
        foreach (KeyValuePair<string, byte[]> e in _files)
        {
            fs.WriteAllBytes(Path.Combine(_dir, e.Key), e.Value);
        }
        fs.SyncDirectory(_dir); // the deletions too survive a simulated power loss
    }
}
