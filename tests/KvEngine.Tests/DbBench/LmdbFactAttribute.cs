using System.Runtime.InteropServices;

namespace KvEngine.Tests.DbBench;

/// <summary>
/// A fact that runs kvbench's <c>-engine=lmdb</c>: skipped, saying why, where the system's LMDB
/// (<c>liblmdb.so.0</c>, Debian's <c>liblmdb0</c>; .ci/run installs it) cannot be loaded. LightningDB's
/// own bundled liblmdb needs glibc 2.38 and is not what kvbench loads on these machines.
/// </summary>
public sealed class LmdbFactAttribute : FactAttribute
{
    public LmdbFactAttribute()
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = "kvbench's -engine=lmdb test loads the system's liblmdb.so.0 (Linux)";
        }
        else if (!NativeLibrary.TryLoad("liblmdb.so.0", out IntPtr handle))
        {
            Skip = "liblmdb.so.0 is not installed (Debian: apt-get install liblmdb0)";
        }
        else
        {
            NativeLibrary.Free(handle);
        }
    }
}
