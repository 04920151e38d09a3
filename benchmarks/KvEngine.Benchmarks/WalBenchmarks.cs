using BenchmarkDotNet.Attributes;
using KvEngine.Storage;
using KvEngine.Wal;

namespace KvEngine.Benchmarks;

/// <summary>
/// <see cref="LogWriter.AddRecord"/> of a 116-byte WriteBatch record (one Put of a 16-byte key and
/// an 85-byte value: 12-byte header + 1 tag + 1 + 16 + 1 + 85) to a real file through
/// <see cref="LocalFileSystem"/>, without flush or sync: what the write path does before it hands the
/// group to the OS. Every iteration writes <see cref="RecordsPerInvoke"/> records to a new file
/// (created and deleted outside the measurement). Public and unsealed for BenchmarkDotNet;
/// single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 5)]
public class WalBenchmarks
{
    private const int RecordLength = 116;
    private const int RecordsPerInvoke = 500_000;

    private TempDirectory? _dir;
    private byte[] _record = [];
    private IWritableFile? _file;
    private LogWriter? _writer;
    private int _fileNumber;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _dir = new TempDirectory();
        using var batch = new WriteBatch();
        batch.Put(BenchData.RandomBytes(BenchData.KeySize, seed: 9), BenchData.RandomBytes(85, seed: 10));
        _record = batch.Data.ToArray();
        if (_record.Length != RecordLength)
        {
            throw new InvalidOperationException($"The batch record is {_record.Length} bytes, not {RecordLength}.");
        }
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        CloseFile();
        _dir?.Dispose();
    }

    [IterationSetup]
    public void OpenFile()
    {
        _file = LocalFileSystem.Instance.CreateWritable(_dir!.Combine($"{++_fileNumber:D6}.log"));
        _writer = new LogWriter(_file);
    }

    [IterationCleanup]
    public void CloseFile()
    {
        if (_file != null)
        {
            _file.Dispose();
            LocalFileSystem.Instance.DeleteFile(_dir!.Combine($"{_fileNumber:D6}.log"));
            _file = null;
            _writer = null;
        }
    }

    [Benchmark(OperationsPerInvoke = RecordsPerInvoke)]
    public long AddRecord()
    {
        LogWriter writer = _writer!;
        ReadOnlySpan<byte> record = _record;
        for (int i = 0; i < RecordsPerInvoke; i++)
        {
            writer.AddRecord(record);
        }
        return writer.File.Size;
    }
}
