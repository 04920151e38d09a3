using KvEngine.Db;
using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Fuzz.Targets;

/// <summary>
/// MANIFEST target: the input is a whole MANIFEST file, read as <see cref="VersionSet"/> recovers
/// one (<see cref="ManifestReader"/>: records through <see cref="LogReader.ForManifest"/>, each
/// decoded by <see cref="VersionEditDecoder"/>, column families and atomic groups followed, each
/// family's edits applied to its <see cref="VersionBuilder"/>) and every family's version built. A
/// second pass reads the records without verifying their CRCs, so mutations reach the edit decoder
/// and the version builder instead of stopping at the checksum; each decoded edit is also encoded
/// again and decoded once more (the encoder must accept whatever the decoder produced). Thread-safe.
/// </summary>
internal static class ManifestTarget
{
    private const string Path = "/fuzz/MANIFEST-000005";

    public static void Run(ReadOnlySpan<byte> input)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/fuzz");
        fs.WriteAllBytes(Path, input);
        fs.WriteAllBytes("/fuzz/CURRENT", "MANIFEST-000005\n"u8);
        try
        {
            RecoveredManifest m = ManifestReader.Read(fs, "/fuzz", bestEfforts: false, new WalTracker());
            foreach (RecoveredFamily f in m.Families.Values)
            {
                f.Builder.Build(owner: null);
            }
        }
        catch (KvException)
        {
            // Rejected as recovery would reject it; the unverified pass still runs.
        }
        using ISequentialFile unverified = fs.OpenSequential(Path);
        ReadUnverified(new LogReader(unverified, WalRecoveryMode.TolerateCorruptedTailRecords, reporter: null, logNumber: 0, verifyChecksums: false, Path));
    }

    private static void ReadUnverified(LogReader reader)
    {
        var builders = new Dictionary<uint, VersionBuilder>();
        using var scratch = new ByteBuffer(1024);
        using var encoded = new ByteBuffer(1024);
        try
        {
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                VersionEdit edit = VersionEdit.Decode(record);
                encoded.Clear();
                edit.EncodeTo(encoded);
                VersionEdit.Decode(encoded.WrittenSpan);
                if (!builders.TryGetValue(edit.ColumnFamily, out VersionBuilder? builder))
                {
                    builders[edit.ColumnFamily] = builder = new VersionBuilder(Versions.Version.Empty(null));
                }
                builder.Apply(edit);
            }
        }
        catch (KvException)
        {
            // A damaged edit or an inconsistent one: what recovery would refuse.
        }
        foreach (VersionBuilder b in builders.Values)
        {
            b.Build(owner: null);
        }
    }
}
