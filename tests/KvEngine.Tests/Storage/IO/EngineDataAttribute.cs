using System.Reflection;
using Xunit.Sdk;

namespace KvEngine.Tests.Storage.IO;

/// <summary>
/// One theory row naming an engine ("io_uring" or "threadpool"); the io_uring row is skipped,
/// naming the errno, where the kernel refuses io_uring (never passed silently).
/// </summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
public sealed class EngineDataAttribute : DataAttribute
{
    private readonly string _kind;

    public EngineDataAttribute(string kind)
    {
        _kind = kind;
        if (kind == "io_uring" && IoUringAvailability.Unavailable is { } why)
        {
            Skip = why;
        }
    }

    public override IEnumerable<object[]> GetData(MethodInfo testMethod) => [[_kind]];
}
