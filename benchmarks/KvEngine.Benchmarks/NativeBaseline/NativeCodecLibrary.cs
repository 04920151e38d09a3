using System.Runtime.InteropServices;

namespace KvEngine.Benchmarks.NativeBaseline;

/// <summary>
/// Benchmark baseline only (CodecBenchmarks): the native codec path KvEngine used before it moved to
/// managed packages, kept to measure the managed codecs against. Never part of the library.
///
/// Loads a codec's shared library and its exports by name, turning a missing library or symbol
/// into a <see cref="KvException"/> that names the Debian package to install. Stateless and
/// thread-safe; the handles it returns stay loaded for the life of the process.
/// </summary>
internal static class NativeCodecLibrary
{
    public static nint Load(string codec, string package, params string[] candidateNames)
    {
        foreach (string name in candidateNames)
        {
            if (NativeLibrary.TryLoad(name, out nint handle))
            {
                return handle;
            }
        }
        throw new KvException(
            $"{codec} compression needs the native library {candidateNames[0]}, which could not be loaded; " +
            $"install it with `apt-get install -y {package}`.");
    }

    public static nint Export(nint library, string codec, string package, string symbol)
    {
        if (NativeLibrary.TryGetExport(library, symbol, out nint address))
        {
            return address;
        }
        throw new KvException(
            $"{codec}: the loaded native library lacks {symbol}; install a current `{package}` package.");
    }
}
