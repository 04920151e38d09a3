namespace KvEngine.Tests.Storage.IO;

/// <summary>A fact that needs io_uring: skipped, naming the errno, where the kernel refuses it.</summary>
public sealed class IoUringFactAttribute : FactAttribute
{
    public IoUringFactAttribute()
    {
        if (IoUringAvailability.Unavailable is { } why)
        {
            Skip = why;
        }
    }
}
