using System.Buffers.Binary;
using System.IO.Hashing;
using System.Text;

namespace KvEngine.Replication.Snapshots;

// archive  := magic "KVRSNAP1" (8 bytes)  index: fixed64  term: fixed64  fileCount: fixed32
//             file[fileCount]  endMagic "KVRSEND1" (8 bytes)
// file     := nameLength: fixed16  name: UTF-8[nameLength]  size: fixed64  contents: uint8[size]
//             crc: fixed32 (CRC-32/IEEE of nameLength, name, size and contents, as stored)
// All integers little-endian. Names are plain file names (no directory separators, not "." or
// ".."), at most 255 bytes, unique. See docs/formats/raft_snapshot.md.

/// <summary>
/// The framed archive a checkpoint travels in as a Raft snapshot: its writer (to any stream) and
/// its reader (from a file, extracting into a directory). Stateless and thread-safe; every
/// malformed archive is refused with <see cref="KvCorruptionException"/>.
/// </summary>
internal static class SnapshotArchive
{
    internal static ReadOnlySpan<byte> Magic => "KVRSNAP1"u8;

    internal static ReadOnlySpan<byte> EndMagic => "KVRSEND1"u8;

    internal const int HeaderSize = 8 + 8 + 8 + 4;

    internal const int MaxNameLength = 255;

    private const int CopyBufferSize = 64 * 1024;

    /// <summary>Bytes the archive of <paramref name="files"/> takes (known before it is written).</summary>
    internal static long GetLength(IReadOnlyList<(string Name, long Size)> files)
    {
        long length = HeaderSize + EndMagic.Length;
        foreach ((string name, long size) in files)
        {
            length += 2 + Encoding.UTF8.GetByteCount(name) + 8 + size + 4;
        }
        return length;
    }

    /// <summary>
    /// Writes the archive of the files of <paramref name="directory"/> named in
    /// <paramref name="files"/> (with the sizes given: the files must not change meanwhile) through
    /// <paramref name="write"/>, which must consume each block before its task completes.
    /// </summary>
    internal static async ValueTask WriteAsync(Func<ReadOnlyMemory<byte>, CancellationToken, ValueTask> write, string directory,
        long index, long term, IReadOnlyList<(string Name, long Size)> files, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[CopyBufferSize];
        Magic.CopyTo(buffer);
        BinaryPrimitives.WriteInt64LittleEndian(buffer.AsSpan(8), index);
        BinaryPrimitives.WriteInt64LittleEndian(buffer.AsSpan(16), term);
        BinaryPrimitives.WriteInt32LittleEndian(buffer.AsSpan(24), files.Count);
        await write(buffer.AsMemory(0, HeaderSize), cancellationToken).ConfigureAwait(false);
        var crc = new Crc32();
        foreach ((string name, long size) in files)
        {
            int nameLength = Encoding.UTF8.GetBytes(name, buffer.AsSpan(2));
            BinaryPrimitives.WriteUInt16LittleEndian(buffer, (ushort)nameLength);
            BinaryPrimitives.WriteInt64LittleEndian(buffer.AsSpan(2 + nameLength), size);
            await write(buffer.AsMemory(0, 2 + nameLength + 8), cancellationToken).ConfigureAwait(false);
            crc.Reset();
            crc.Append(buffer.AsSpan(0, 2 + nameLength + 8));
            var source = new FileStream(Path.Combine(directory, name), FileMode.Open, FileAccess.Read, FileShare.Read, 1, useAsync: false);
            await using (source.ConfigureAwait(false))
            {
                long remaining = size;
                while (remaining > 0)
                {
                    int read = await source.ReadAsync(buffer.AsMemory(0, (int)Math.Min(buffer.Length, remaining)), cancellationToken).ConfigureAwait(false);
                    if (read == 0)
                    {
                        throw new KvException($"Snapshot file '{name}' is shorter than the {size} bytes it had when the snapshot was taken.",
                            KvStatusCode.IOError, KvStatusSubCode.None, null);
                    }
                    crc.Append(buffer.AsSpan(0, read));
                    await write(buffer.AsMemory(0, read), cancellationToken).ConfigureAwait(false);
                    remaining -= read;
                }
            }
            BinaryPrimitives.WriteUInt32LittleEndian(buffer, crc.GetCurrentHashAsUInt32());
            await write(buffer.AsMemory(0, 4), cancellationToken).ConfigureAwait(false);
        }
        EndMagic.CopyTo(buffer);
        await write(buffer.AsMemory(0, EndMagic.Length), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Extracts the archive in <paramref name="archivePath"/> into <paramref name="directory"/>
    /// (which must exist and be empty), checking every frame and checksum.
    /// </summary>
    /// <returns>The index and term the archive's header names.</returns>
    /// <exception cref="KvCorruptionException">The archive is malformed or a checksum fails.</exception>
    internal static async ValueTask<(long Index, long Term)> ExtractAsync(string archivePath, string directory, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[CopyBufferSize];
        var input = new FileStream(archivePath, FileMode.Open, FileAccess.Read, FileShare.Read, 1, useAsync: false);
        await using (input.ConfigureAwait(false))
        {
            await ReadExactlyAsync(input, buffer.AsMemory(0, HeaderSize), "header", cancellationToken).ConfigureAwait(false);
            if (!buffer.AsSpan(0, 8).SequenceEqual(Magic))
            {
                throw new KvCorruptionException("Not a KvEngine Raft snapshot archive (bad magic).");
            }
            long index = BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan(8));
            long term = BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan(16));
            int count = BinaryPrimitives.ReadInt32LittleEndian(buffer.AsSpan(24));
            if (index < 0 || term < 0 || count < 0)
            {
                throw new KvCorruptionException($"Snapshot archive header is invalid (index {index}, term {term}, {count} files).");
            }
            var names = new HashSet<string>(StringComparer.Ordinal);
            var crc = new Crc32();
            for (int i = 0; i < count; i++)
            {
                await ReadExactlyAsync(input, buffer.AsMemory(0, 2), "file name length", cancellationToken).ConfigureAwait(false);
                int nameLength = BinaryPrimitives.ReadUInt16LittleEndian(buffer);
                if (nameLength is 0 or > MaxNameLength)
                {
                    throw new KvCorruptionException($"Snapshot archive file {i} has a name of {nameLength} bytes.");
                }
                await ReadExactlyAsync(input, buffer.AsMemory(2, nameLength + 8), "file name and size", cancellationToken).ConfigureAwait(false);
                crc.Reset();
                crc.Append(buffer.AsSpan(0, 2 + nameLength + 8));
                string name = DecodeName(buffer.AsSpan(2, nameLength));
                if (!names.Add(name))
                {
                    throw new KvCorruptionException($"Snapshot archive names '{name}' twice.");
                }
                long size = BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan(2 + nameLength));
                if (size < 0 || size > input.Length - input.Position)
                {
                    throw new KvCorruptionException($"Snapshot archive file '{name}' claims {size} bytes; the archive is shorter.");
                }
                var output = new FileStream(Path.Combine(directory, name), FileMode.CreateNew, FileAccess.Write, FileShare.None, 1, useAsync: false);
                await using (output.ConfigureAwait(false))
                {
                    long remaining = size;
                    while (remaining > 0)
                    {
                        int chunk = (int)Math.Min(buffer.Length, remaining);
                        await ReadExactlyAsync(input, buffer.AsMemory(0, chunk), name, cancellationToken).ConfigureAwait(false);
                        crc.Append(buffer.AsSpan(0, chunk));
                        await output.WriteAsync(buffer.AsMemory(0, chunk), cancellationToken).ConfigureAwait(false);
                        remaining -= chunk;
                    }
                    output.Flush(flushToDisk: true);
                }
                await ReadExactlyAsync(input, buffer.AsMemory(0, 4), "file checksum", cancellationToken).ConfigureAwait(false);
                uint expected = BinaryPrimitives.ReadUInt32LittleEndian(buffer);
                if (expected != crc.GetCurrentHashAsUInt32())
                {
                    throw new KvCorruptionException($"Snapshot archive file '{name}' fails its checksum.");
                }
            }
            await ReadExactlyAsync(input, buffer.AsMemory(0, 8), "end marker", cancellationToken).ConfigureAwait(false);
            if (!buffer.AsSpan(0, 8).SequenceEqual(EndMagic) || input.Position != input.Length)
            {
                throw new KvCorruptionException("Snapshot archive does not end with its end marker.");
            }
            return (index, term);
        }
    }

    private static string DecodeName(ReadOnlySpan<byte> bytes)
    {
        string name;
        try
        {
            name = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(bytes);
        }
        catch (DecoderFallbackException e)
        {
            throw new KvCorruptionException("Snapshot archive holds a file name that is not UTF-8.", e);
        }
        if (name is "." or ".." || name.Contains('/', StringComparison.Ordinal) || name.Contains('\\', StringComparison.Ordinal)
            || name.Contains('\0', StringComparison.Ordinal))
        {
            throw new KvCorruptionException($"Snapshot archive holds an unsafe file name '{name}'.");
        }
        return name;
    }

    private static async ValueTask ReadExactlyAsync(Stream input, Memory<byte> buffer, string what, CancellationToken cancellationToken)
    {
        try
        {
            await input.ReadExactlyAsync(buffer, cancellationToken).ConfigureAwait(false);
        }
        catch (EndOfStreamException e)
        {
            throw new KvCorruptionException($"Snapshot archive ends inside its {what}.", e);
        }
    }
}
