using System.Text;

namespace KvEngine.Tool.Tests;

/// <summary>The outcome of one kvtool or RocksDB tool run.</summary>
internal sealed record ToolResult(int ExitCode, byte[] Output, string Error)
{
    public string Text => Encoding.UTF8.GetString(Output);

    /// <summary>Asserts a failure: a non-zero <paramref name="code"/> and exactly one line on stderr, with no stack trace.</summary>
    public string AssertOneLineFailure(int code)
    {
        Assert.Equal(code, ExitCode);
        string[] lines = Error.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.True(lines.Length == 1, $"expected one line on stderr, got: {Error}");
        Assert.StartsWith("kvtool: ", lines[0], StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", Error, StringComparison.Ordinal);
        return lines[0];
    }
}
