namespace KvEngine.Benchmarks;

/// <summary>
/// A fresh directory under the system temp directory, deleted with everything in it on
/// <see cref="Dispose"/> (idempotent). Not thread-safe.
/// </summary>
internal sealed class TempDirectory : IDisposable
{
    private bool _deleted;

    public TempDirectory()
    {
        Path = Directory.CreateTempSubdirectory("kvengine-bench-").FullName;
    }

    public string Path { get; }

    /// <summary>A path inside the directory.</summary>
    public string Combine(string name) => System.IO.Path.Combine(Path, name);

    public void Dispose()
    {
        if (!_deleted)
        {
            _deleted = true;
            Directory.Delete(Path, recursive: true);
        }
    }
}
