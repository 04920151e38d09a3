namespace KvEngine.Storage;

/// <summary>The operations <see cref="FaultInjectionFileSystem"/> can fail on request.</summary>
internal enum FileOperation
{
    Create,
    OpenRead,
    Append,
    Flush,
    Sync,
    Read,
    Delete,
    Rename,
    SyncDirectory,
    CreateDirectory,
    List,
    Lock,
    Link,
    DeleteDirectory,
    RenameDirectory,
    WriteAt,
    Truncate,
}
