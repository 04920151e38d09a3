namespace KvEngine.Versions;

/// <summary>Kinds of files in a database directory.</summary>
internal enum DbFileType
{
    Current,
    Lock,
    Identity,
    Manifest,
    Log,
    Table,
    Temp,
}
