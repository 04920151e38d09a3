using KvEngine.Db;
using KvEngine.Manifest;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Fuzz.Targets;

/// <summary>
/// MANIFEST target: the input is a whole MANIFEST file, read as <see cref="VersionSet"/> recovers
/// one — records through <see cref="LogReader.ForManifest"/>, each decoded by
/// <see cref="VersionEditDecoder"/>, column families tracked, the default family's edits applied
/// to a <see cref="VersionBuilder"/> — and the resulting version built. Each decoded edit is also
/// encoded again and decoded once more (the encoder must accept whatever the decoder produced).
/// A second pass reads the records without verifying their CRCs, so mutations reach the edit
/// decoder and the version builder instead of stopping at the checksum. Thread-safe.
/// </summary>
internal static class ManifestTarget
{
    private const string Name = "MANIFEST-000005";
    private const string Path = "/fuzz/" + Name;

    public static void Run(ReadOnlySpan<byte> input)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/fuzz");
        fs.WriteAllBytes(Path, input);
        try
        {
            using ISequentialFile file = fs.OpenSequential(Path);
            Recover(LogReader.ForManifest(file, Path));
        }
        catch (KvException)
        {
            // Rejected as recovery would reject it; the unverified pass still runs.
        }
        using ISequentialFile unverified = fs.OpenSequential(Path);
        Recover(new LogReader(unverified, WalRecoveryMode.TolerateCorruptedTailRecords, reporter: null, logNumber: 0, verifyChecksums: false, Path));
    }

    private static void Recover(LogReader reader)
    {
        var builder = new VersionBuilder(Db.Version.Empty(null));
        var families = new ColumnFamilyTracker();
        using var scratch = new ByteBuffer(1024);
        using var encoded = new ByteBuffer(1024);
        while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            VersionEdit edit = VersionEdit.Decode(record);
            encoded.Clear();
            edit.EncodeTo(encoded);
            VersionEdit.Decode(encoded.WrittenSpan);
            if (families.Apply(edit, Name))
            {
                builder.Apply(edit);
            }
        }
        families.ThrowIfOthersLive(Name);
        builder.Build(owner: null);
    }
}
