using System.Runtime.InteropServices;
using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Tests.Storage.IO;

/// <summary>A temporary directory with a file of random bytes, FIFOs and the engines under test.</summary>
internal sealed class BlockReadTestFiles : IDisposable
{
    public BlockReadTestFiles(int length = 300_001)
    {
        Directory = Path.Combine(Path.GetTempPath(), "kvengine-io-" + Guid.NewGuid().ToString("N"));
        System.IO.Directory.CreateDirectory(Directory);
        Bytes = new byte[length];
        new Random(length).NextBytes(Bytes);
        FilePath = Path.Combine(Directory, "data");
        File.WriteAllBytes(FilePath, Bytes);
    }

    public string Directory { get; }

    public string FilePath { get; }

    public byte[] Bytes { get; }

    public SafeFileHandle OpenRead() => File.OpenHandle(FilePath, FileMode.Open, FileAccess.Read);

    /// <summary>A FIFO opened read-write (so the open does not wait for a writer): a read of it stays in flight until bytes are written.</summary>
    public SafeFileHandle OpenFifo(string name)
    {
        string path = Path.Combine(Directory, name);
        Assert.Equal(0, MkFifo(path, Convert.ToInt32("600", 8)));
        return File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite);
    }

    public static IBlockReadEngine Create(string kind, uint ringEntries = 128) => BlockReadEngines.Create(new BlockReadEngineOptions
    {
        Kind = kind == "io_uring" ? BlockReadEngineKind.IoUring : BlockReadEngineKind.ThreadPool,
        RingEntries = ringEntries,
    });

    /// <summary>Writes <paramref name="bytes"/> into a FIFO (write(2): RandomAccess refuses unseekable handles).</summary>
    public static unsafe void WriteFifo(SafeFileHandle fifo, ReadOnlySpan<byte> bytes)
    {
        fixed (byte* p = bytes)
        {
            Assert.Equal(bytes.Length, (int)Write((int)fifo.DangerousGetHandle(), p, (nuint)bytes.Length));
        }
    }

    [DllImport("libc", EntryPoint = "write", SetLastError = true)]
    private static extern unsafe nint Write(int fd, byte* buffer, nuint count);

    [DllImport("libc", EntryPoint = "mkfifo", SetLastError = true)]
    private static extern int MkFifo([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int mode);

    public void Dispose()
    {
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
