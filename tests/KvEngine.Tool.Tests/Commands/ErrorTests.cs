namespace KvEngine.Tool.Tests.Commands;

/// <summary>User errors end with a non-zero exit code and one line on stderr, never a stack trace.</summary>
public sealed class ErrorTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("kvtool-errors-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Theory]
    [InlineData("scan")]
    [InlineData("get", "k")]
    [InlineData("put", "k", "v")]
    [InlineData("list_column_families")]
    public void MissingDatabase_FailsWithExitCode1(params string[] command)
    {
        string missing = Path.Combine(_root, "nothing");
        string line = KvTool.Run([.. command, $"--db={missing}"]).AssertOneLineFailure(ExitCodes.Failed);
        Assert.Contains(missing, line, StringComparison.Ordinal);
        Assert.False(Directory.Exists(missing));
    }

    [Fact]
    public void HeldLock_FailsWithExitCode4()
    {
        string dir = Path.Combine(_root, "locked");
        using KvDb db = KvDb.Open(dir);
        db.Put("k"u8, "v"u8);
        string line = KvTool.Run("put", $"--db={dir}", "k2", "v2").AssertOneLineFailure(ExitCodes.Busy);
        Assert.Contains("LOCK", line, StringComparison.OrdinalIgnoreCase);
    }

    [Theory]
    [InlineData("frobnicate")]
    [InlineData("scan", "--db")]
    [InlineData("scan", "--db=x", "--bogus")]
    [InlineData("scan", "--db=x", "--walfile=y")]
    [InlineData("get", "--db=x")]
    [InlineData("get", "--db=x", "--hex", "0xZZ")]
    [InlineData("scan", "--db=x", "--max_keys=ten")]
    public void BadCommandLine_FailsWithExitCode2(params string[] args) =>
        KvTool.Run(args).AssertOneLineFailure(ExitCodes.Usage);
}
