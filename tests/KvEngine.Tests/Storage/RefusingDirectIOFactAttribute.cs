namespace KvEngine.Tests.Storage;

/// <summary>A fact that needs a file system refusing O_DIRECT (<see cref="DirectIORefusingMount"/>); skipped, with the reason, without one.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class RefusingDirectIOFactAttribute : FactAttribute
{
    public RefusingDirectIOFactAttribute()
    {
        if (DirectIORefusingMount.Directory == null)
        {
            Skip = "No mounted file system here refuses O_DIRECT (tmpfs accepts it since Linux 6.6; mount a ramfs to run this test).";
        }
    }
}
