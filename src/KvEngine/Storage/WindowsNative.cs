using System.Runtime.InteropServices;

namespace KvEngine.Storage;

/// <summary>
/// The one Win32 call .NET does not expose that the engine needs: hard links (checkpoints and
/// ingestion link tables instead of copying them). Stateless and thread-safe.
/// </summary>
internal static partial class WindowsNative
{
    [LibraryImport("kernel32", EntryPoint = "CreateHardLinkW", StringMarshalling = StringMarshalling.Utf16, SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool CreateHardLink(string newFileName, string existingFileName, IntPtr securityAttributes);
}
