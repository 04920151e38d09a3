namespace KvEngine.Tool;

/// <summary>
/// A parsed command line in ldb's shape: <c>--name=value</c> options, <c>--flag</c> flags and
/// positional tokens (the command words, then its parameters) in any order. Options that take a
/// value (<see cref="ValueOptions"/>) also accept it as the next token (<c>--db PATH</c>), which
/// ldb does not; a flag given a value, an unknown option or one the command does not take is a
/// usage error. Option names accept '-' for '_' (<c>--max-keys</c>). Not thread-safe.
/// </summary>
internal sealed class ToolArgs
{
    /// <summary>Every option that takes a value.</summary>
    public static readonly HashSet<string> ValueOptions = new(StringComparer.Ordinal)
    {
        "db", "from", "to", "max_keys", "column_family", "walfile", "file", "command",
        "checkpoint_dir", "read_num", "path", "backup_dir", "backup_id",
    };

    /// <summary>Every flag (option without a value).</summary>
    public static readonly HashSet<string> Flags = new(StringComparer.Ordinal)
    {
        "hex", "key_hex", "value_hex", "no_value", "json", "print_value", "header", "show_properties",
        "create_if_missing", "verbose", "output_hex", "progress", "no_progress", "help", "verify_checksum",
        "try_load_options", "ignore_options", "input_key_hex",
    };

    private readonly Dictionary<string, string> _options = new(StringComparer.Ordinal);
    private readonly HashSet<string> _flags = new(StringComparer.Ordinal);
    private readonly List<string> _positionals = [];

    private ToolArgs()
    {
    }

    /// <summary>The command words and parameters, in order.</summary>
    public IReadOnlyList<string> Positionals => _positionals;

    /// <summary>Parses <paramref name="args"/>; throws <see cref="ToolUsageException"/> on a malformed option.</summary>
    public static ToolArgs Parse(IReadOnlyList<string> args)
    {
        var result = new ToolArgs();
        bool onlyPositionals = false;
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            if (onlyPositionals || !arg.StartsWith("--", StringComparison.Ordinal) || arg.Length == 2)
            {
                if (arg == "--" && !onlyPositionals)
                {
                    onlyPositionals = true;
                    continue;
                }
                result._positionals.Add(arg);
                continue;
            }
            int eq = arg.IndexOf('=', StringComparison.Ordinal);
            string name = (eq < 0 ? arg[2..] : arg[2..eq]).Replace('-', '_');
            if (ValueOptions.Contains(name))
            {
                string value;
                if (eq >= 0)
                {
                    value = arg[(eq + 1)..];
                }
                else if (i + 1 < args.Count)
                {
                    value = args[++i];
                }
                else
                {
                    throw new ToolUsageException($"--{name} needs a value (--{name}=VALUE).");
                }
                result._options[name] = value;
            }
            else if (Flags.Contains(name))
            {
                if (eq >= 0)
                {
                    throw new ToolUsageException($"--{name} is a flag and takes no value.");
                }
                result._flags.Add(name);
            }
            else
            {
                throw new ToolUsageException($"Unknown option --{name}.");
            }
        }
        return result;
    }

    /// <summary>Fails with a usage error when an option or flag outside <paramref name="allowed"/> (and the global ones) was given.</summary>
    public void Allow(string command, params string[] allowed)
    {
        foreach (string name in _options.Keys.Concat(_flags))
        {
            if (name is not ("json" or "help" or "progress" or "no_progress") && Array.IndexOf(allowed, name) < 0)
            {
                throw new ToolUsageException($"{command} does not take --{name}.");
            }
        }
    }

    /// <summary>Whether <c>--<paramref name="name"/></c> was given.</summary>
    public bool Has(string name) => _flags.Contains(name);

    /// <summary>The value of <c>--<paramref name="name"/>=</c>, or null.</summary>
    public string? Get(string name) => _options.TryGetValue(name, out string? value) ? value : null;

    /// <summary>The value of a required option.</summary>
    public string Require(string name, string command) =>
        Get(name) ?? throw new ToolUsageException($"{command} needs --{name}=...");

    /// <summary>An integer option, or <paramref name="fallback"/> when absent.</summary>
    public long GetInt64(string name, long fallback)
    {
        string? text = Get(name);
        if (text == null)
        {
            return fallback;
        }
        if (!long.TryParse(text, System.Globalization.NumberStyles.Integer, System.Globalization.CultureInfo.InvariantCulture, out long value))
        {
            throw new ToolUsageException($"--{name}={text} is not an integer.");
        }
        return value;
    }

    /// <summary>Exactly <paramref name="count"/> parameters after the <paramref name="words"/> command words.</summary>
    public IReadOnlyList<string> Parameters(int words, int count, string usage)
    {
        if (_positionals.Count - words != count)
        {
            throw new ToolUsageException($"Usage: kvtool {usage}");
        }
        return _positionals.GetRange(words, count);
    }
}
