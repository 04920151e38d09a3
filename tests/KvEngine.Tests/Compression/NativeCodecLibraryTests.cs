using KvEngine.Compression;

namespace KvEngine.Tests.Compression;

public class NativeCodecLibraryTests
{
    [Fact]
    public void MissingLibraryNamesThePackageToInstall()
    {
        var ex = Assert.Throws<KvException>(() =>
            NativeCodecLibrary.Load("LZ4", "liblz4-1", "libkvengine-no-such-library.so.9"));
        Assert.Contains("apt-get install -y liblz4-1", ex.Message);
        Assert.Contains("libkvengine-no-such-library.so.9", ex.Message);
    }

    [Fact]
    public void SystemCodecsLoad()
    {
        Lz4Codec.EnsureAvailable();
        ZstdCodec.EnsureAvailable();
        Assert.True(Lz4Codec.CompressBound(1000) >= 1000);
        Assert.True(ZstdCodec.CompressBound(1000) >= 1000);
    }
}
