namespace KvEngine.Tool;

/// <summary>The kvtool executable: <see cref="Tool.Run"/> on the process's stdout and stderr.</summary>
internal static class Program
{
    public static int Main(string[] args)
    {
        using Stream stdout = Console.OpenStandardOutput();
        return Tool.Run(args, stdout, Console.Error, errorIsTerminal: !Console.IsErrorRedirected);
    }
}
