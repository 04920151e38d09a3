namespace KvEngine.Tool;

/// <summary>kvtool's exit codes (docs/admin.md lists them).</summary>
internal static class ExitCodes
{
    /// <summary>The command succeeded.</summary>
    public const int Ok = 0;

    /// <summary>
    /// The command failed: a key not found, a missing database or file, an I/O error, an operation
    /// the database refused. ldb exits 1 for all of these.
    /// </summary>
    public const int Failed = 1;

    /// <summary>The command line is wrong.</summary>
    public const int Usage = 2;

    /// <summary>Corruption: a checksum mismatch, a truncated or malformed table, log or MANIFEST.</summary>
    public const int Corruption = 3;

    /// <summary>The database is in use: another process holds its LOCK.</summary>
    public const int Busy = 4;
}
