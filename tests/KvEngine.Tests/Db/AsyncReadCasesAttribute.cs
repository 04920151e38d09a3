using System.Reflection;
using KvEngine.Tests.Storage.IO;
using Xunit.Sdk;

namespace KvEngine.Tests.Db;

/// <summary>
/// The rows of <see cref="AsyncPointReadTests.AsyncReadsEqualSyncReads"/> for one engine: every
/// block-cache mode ("on", "nofill": FillCache false, "tiny": every insert fails) with and without
/// partitioned metadata and direct reads. The io_uring rows are skipped, naming the errno, where the
/// kernel refuses io_uring (never passed silently).
/// </summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
public sealed class AsyncReadCasesAttribute : DataAttribute
{
    private readonly string _engine;

    public AsyncReadCasesAttribute(string engine)
    {
        _engine = engine;
        if (engine == "io_uring" && IoUringAvailability.Unavailable is { } why)
        {
            Skip = why;
        }
    }

    public override IEnumerable<object[]> GetData(MethodInfo testMethod)
    {
        foreach (string cache in new[] { "on", "nofill", "tiny" })
        {
            foreach (bool partitioned in new[] { false, true })
            {
                foreach (bool direct in new[] { false, true })
                {
                    yield return [_engine, cache, partitioned, direct];
                }
            }
        }
    }
}
