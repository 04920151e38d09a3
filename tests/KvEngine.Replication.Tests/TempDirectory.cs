namespace KvEngine.Replication.Tests;

/// <summary>A fresh directory under the temp folder, deleted on dispose. Not thread-safe.</summary>
internal sealed class TempDirectory : IDisposable
{
    public TempDirectory() => System.IO.Directory.CreateDirectory(Path);

    public string Path { get; } = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "kvrepl-test-" + Guid.NewGuid().ToString("N"));

    public string Sub(string name) => System.IO.Path.Combine(Path, name);

    public void Dispose()
    {
        if (System.IO.Directory.Exists(Path))
        {
            System.IO.Directory.Delete(Path, recursive: true);
        }
    }
}
