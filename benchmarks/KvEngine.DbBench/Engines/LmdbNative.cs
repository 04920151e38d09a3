using System.Reflection;
using System.Runtime.InteropServices;
using LightningDB;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// Where <c>-engine=lmdb</c> loads liblmdb from. LightningDB 0.24.0 binds the library named
/// <c>lmdb</c> and ships its own <c>liblmdb.so</c>, built against glibc 2.38; on an older glibc
/// (Debian 12 has 2.36) that file cannot load. A DllImport resolver on LightningDB's assembly
/// therefore loads the system's LMDB (<c>liblmdb.so.0</c>, Debian's <c>liblmdb0</c> package) first
/// and leaves the bundled one as the fallback where no system library is installed. The functions
/// LightningDB calls for kvbench's workloads (environment, transactions, get/put/del, cursors,
/// stats) are LMDB 0.9's API. Installed once per process; thread-safe.
/// </summary>
internal static class LmdbNative
{
    /// <summary>The system library's soname, tried first.</summary>
    public const string SystemLibrary = "liblmdb.so.0";

    private static readonly Lock s_gate = new();
    private static bool s_installed;

    /// <summary>Which library the resolver loaded: the system path, or "bundled" when it fell back.</summary>
    public static string Loaded { get; private set; } = "bundled";

    /// <summary>Installs the resolver (idempotent); call before LightningDB's first native call.</summary>
    public static void Install()
    {
        lock (s_gate)
        {
            if (s_installed)
            {
                return;
            }
            NativeLibrary.SetDllImportResolver(typeof(LightningEnvironment).Assembly, Resolve);
            s_installed = true;
        }
    }

    private static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? searchPath)
    {
        if (name != "lmdb" || !OperatingSystem.IsLinux())
        {
            return IntPtr.Zero;
        }
        if (NativeLibrary.TryLoad(SystemLibrary, out IntPtr handle))
        {
            Loaded = SystemLibrary;
            return handle;
        }
        return IntPtr.Zero; // the default probing: LightningDB's bundled runtimes/<rid>/native/liblmdb.so
    }
}
