using Microsoft.Extensions.Logging;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// An <see cref="ILoggerFactory"/> keeping every event logged at or above <see cref="MinLevel"/>
/// with its category, id, structured fields and exception. Thread-safe.
/// </summary>
internal sealed class TestLoggerFactory : ILoggerFactory
{
    private readonly List<LogEntry> _entries = new();

    public LogLevel MinLevel { get; init; } = LogLevel.Trace;

    public IReadOnlyList<LogEntry> Entries
    {
        get
        {
            lock (_entries)
            {
                return _entries.ToArray();
            }
        }
    }

    public IReadOnlyList<LogEntry> Events(string name) => Entries.Where(e => e.EventId.Name == name).ToArray();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void AddProvider(ILoggerProvider provider) => throw new NotSupportedException();

    public void Dispose()
    {
    }

    internal sealed record LogEntry(string Category, LogLevel Level, EventId EventId, string Message,
        IReadOnlyDictionary<string, object?> Fields, Exception? Exception);

    private sealed class Logger(TestLoggerFactory owner, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= owner.MinLevel;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
            {
                return;
            }
            var fields = new Dictionary<string, object?>();
            if (state is IReadOnlyList<KeyValuePair<string, object?>> list)
            {
                foreach (KeyValuePair<string, object?> kv in list)
                {
                    fields[kv.Key] = kv.Value;
                }
            }
            lock (owner._entries)
            {
                owner._entries.Add(new LogEntry(category, logLevel, eventId, formatter(state, exception), fields, exception));
            }
        }
    }
}
