using System.Text;
using System.Text.Json;

namespace KvEngine.Tool;

/// <summary>
/// Where a command writes: <see cref="Out"/> takes raw bytes (keys and values are printed as their
/// bytes unless hex is asked for, as ldb prints them), <see cref="Error"/> takes diagnostics and
/// progress. <see cref="Json"/> output is one JSON object per line (JSON Lines) written through
/// <see cref="WriteJson"/>. Not thread-safe: a command writes from one thread.
/// </summary>
internal sealed class ToolContext
{
    private static readonly byte[] s_newLine = [(byte)'\n'];
    private readonly Utf8JsonWriter _json;

    public ToolContext(Stream output, TextWriter error, bool json, bool progress)
    {
        Out = output;
        Error = error;
        Json = json;
        ShowProgress = progress;
        _json = new Utf8JsonWriter(output, new JsonWriterOptions { Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
    }

    public Stream Out { get; }

    public TextWriter Error { get; }

    /// <summary>--json: JSON Lines on <see cref="Out"/> instead of ldb's text.</summary>
    public bool Json { get; }

    /// <summary>Progress lines on <see cref="Error"/> for long commands.</summary>
    public bool ShowProgress { get; }

    public void Write(ReadOnlySpan<byte> bytes) => Out.Write(bytes);

    public void Write(string text)
    {
        int max = Encoding.UTF8.GetMaxByteCount(text.Length);
        byte[] buffer = System.Buffers.ArrayPool<byte>.Shared.Rent(max);
        int n = Encoding.UTF8.GetBytes(text, buffer);
        Out.Write(buffer, 0, n);
        System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
    }

    public void WriteLine(string text)
    {
        Write(text);
        Out.Write(s_newLine);
    }

    public void WriteLine() => Out.Write(s_newLine);

    /// <summary>Writes one JSON object (built by <paramref name="body"/>) and a newline.</summary>
    public void WriteJson(Action<Utf8JsonWriter> body)
    {
        _json.Reset(Out);
        _json.WriteStartObject();
        body(_json);
        _json.WriteEndObject();
        _json.Flush();
        Out.Write(s_newLine);
    }

    /// <summary>ldb's success line: "OK" (or {"status":"OK"} with --json); returns <see cref="ExitCodes.Ok"/>.</summary>
    public int WriteOk()
    {
        if (Json)
        {
            WriteJson(w => w.WriteString("status", "OK"));
        }
        else
        {
            WriteLine("OK");
        }
        return ExitCodes.Ok;
    }

    /// <summary>A 0x-prefixed upper-case hex string of <paramref name="bytes"/> (ldb's StringToHex).</summary>
    public static string Hex(ReadOnlySpan<byte> bytes) => "0x" + Convert.ToHexString(bytes);

    /// <summary><paramref name="bytes"/> as ldb prints them: hex (0x-prefixed unless <paramref name="prefix"/> is false) with <paramref name="hex"/>, else the bytes themselves.</summary>
    public void WriteBytes(ReadOnlySpan<byte> bytes, bool hex, bool prefix = true)
    {
        if (hex)
        {
            Write(prefix ? Hex(bytes) : Convert.ToHexString(bytes));
        }
        else
        {
            Out.Write(bytes);
        }
    }
}
