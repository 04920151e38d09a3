using System.Runtime.InteropServices;

namespace KvEngine.Storage;

/// <summary>
/// The one Win32 call .NET does not expose that the engine needs: hard links (checkpoints and
/// ingestion link tables instead of copying them). Stateless and thread-safe.
/// </summary>
internal static class WindowsNative
{
    [DllImport("kernel32", EntryPoint = "CreateHardLinkW", CharSet = CharSet.Unicode, SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static extern bool CreateHardLink(string newFileName, string existingFileName, IntPtr securityAttributes);
}
