using System.Text;

namespace KvEngine.Tool.Tests;

/// <summary>Runs kvtool in-process (<see cref="Tool.Run"/>) and captures its exit code, stdout bytes and stderr.</summary>
internal static class KvTool
{
    public static ToolResult Run(params string[] args)
    {
        using var stdout = new MemoryStream();
        using var stderr = new StringWriter();
        int code = Tool.Run(args, stdout, stderr);
        return new ToolResult(code, stdout.ToArray(), stderr.ToString());
    }

    /// <summary>Runs kvtool and asserts it exited 0.</summary>
    public static ToolResult RunOk(params string[] args)
    {
        ToolResult result = Run(args);
        Assert.True(result.ExitCode == 0, $"kvtool {string.Join(' ', args)} exited {result.ExitCode}: {result.Error}");
        return result;
    }
}
