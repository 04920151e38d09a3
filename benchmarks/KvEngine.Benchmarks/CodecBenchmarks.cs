using BenchmarkDotNet.Attributes;
using KvEngine.Benchmarks.NativeBaseline;
using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Table;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Benchmarks;

/// <summary>
/// Block codecs: compressing and decompressing one 4 KiB data block as a table builder and
/// reader do (16-byte keys, 100-byte db_bench values that compress to half their size, restart
/// interval 16), with the managed codecs KvEngine uses (Snappier, K4os.Compression.LZ4,
/// ZstdSharp.Port) against the native libraries it called before (libsnappy, liblz4, libzstd,
/// the baseline). Throughput in MB/s of uncompressed block = 4096 B / mean time. Run with
/// <c>--filter '*Codec*'</c>. Public and unsealed for BenchmarkDotNet; single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 10)]
public class CodecBenchmarks
{
    private const int EntriesPerBlock = 32;

    private byte[] _block = [];
    private byte[] _output = [];
    private byte[] _snappy = [];
    private byte[] _lz4 = [];
    private byte[] _zstd = [];

    [Params("Snappy", "LZ4", "ZSTD")]
    public string Codec { get; set; } = "LZ4";

    [GlobalSetup]
    public void GlobalSetup()
    {
        byte[][] userKeys = BenchData.SortedRandomKeys(EntriesPerBlock, seed: 11);
        byte[] values = HalfCompressibleValues(EntriesPerBlock * BenchData.ValueSize, seed: 301);
        using var builder = new BlockBuilder(16);
        for (int i = 0; i < EntriesPerBlock; i++)
        {
            byte[] key = InternalKeys.Create(userKeys[i], (ulong)i + 1, ValueType.Value);
            builder.Add(key, values.AsSpan(i * BenchData.ValueSize, BenchData.ValueSize));
        }
        _block = builder.Finish().ToArray();
        int n = _block.Length;
        _output = new byte[Math.Max(ZstdCodec.CompressBound(n), Math.Max(Lz4Codec.CompressBound(n), SnappyCodec.MaxCompressedLength(n)))];
        _snappy = _output.AsSpan(0, SnappyCodec.Compress(_block, _output)).ToArray();
        _lz4 = _output.AsSpan(0, Lz4Codec.Compress(_block, _output, 1)).ToArray();
        _zstd = _output.AsSpan(0, ZstdCodec.Compress(_block, _output, ZstdCodec.DefaultLevel)).ToArray();
    }

    /// <summary>db_bench's values: 50-byte random printable strings, each repeated to 100 bytes.</summary>
    private static byte[] HalfCompressibleValues(int length, int seed)
    {
        var rnd = new Random(seed);
        var data = new byte[length];
        for (int piece = 0; piece < length; piece += 100)
        {
            for (int i = 0; i < 50 && piece + i < length; i++)
            {
                data[piece + i] = (byte)(' ' + rnd.Next(95));
            }
            for (int i = 50; i < 100 && piece + i < length; i++)
            {
                data[piece + i] = data[piece + i - 50];
            }
        }
        return data;
    }

    [Benchmark(Baseline = true)]
    public int CompressNative() => Codec switch
    {
        "Snappy" => (int)NativeSnappyCodec.Compress(_block, _output),
        "LZ4" => NativeLz4Codec.Compress(_block, _output, 1),
        _ => (int)NativeZstdCodec.Compress(_block, _output, ZstdCodec.DefaultLevel),
    };

    [Benchmark]
    public int CompressManaged() => Codec switch
    {
        "Snappy" => SnappyCodec.Compress(_block, _output),
        "LZ4" => Lz4Codec.Compress(_block, _output, 1),
        _ => ZstdCodec.Compress(_block, _output, ZstdCodec.DefaultLevel),
    };

    [Benchmark]
    public int DecompressNative() => Codec switch
    {
        "Snappy" => (int)NativeSnappyCodec.Decompress(_snappy, _output.AsSpan(0, _block.Length)),
        "LZ4" => NativeLz4Codec.Decompress(_lz4, _output.AsSpan(0, _block.Length)),
        _ => (int)NativeZstdCodec.Decompress(_zstd, _output.AsSpan(0, _block.Length)),
    };

    [Benchmark]
    public int DecompressManaged() => Codec switch
    {
        "Snappy" => SnappyCodec.Decompress(_snappy, _output.AsSpan(0, _block.Length)),
        "LZ4" => Lz4Codec.Decompress(_lz4, _output.AsSpan(0, _block.Length)),
        _ => ZstdCodec.Decompress(_zstd, _output.AsSpan(0, _block.Length)),
    };
}
