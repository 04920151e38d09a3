using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage.IO;

/// <summary>One read of a batch given to <see cref="IBlockReadEngine.ReadBatch"/>: <see cref="Destination"/>.Length bytes of <see cref="File"/> at <see cref="Offset"/>.</summary>
internal readonly record struct BlockRead(SafeFileHandle File, Memory<byte> Destination, long Offset);
