namespace KvEngine.Extensions.Caching.Tests;

/// <summary>A fresh directory under the temp folder, deleted on dispose. Not thread-safe.</summary>
internal sealed class TempDirectory : IDisposable
{
    public TempDirectory() => System.IO.Directory.CreateDirectory(Path);

    public string Path { get; } = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "kvcache-test-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (System.IO.Directory.Exists(Path))
        {
            System.IO.Directory.Delete(Path, recursive: true);
        }
    }
}
