namespace KvEngine.CrashTest;

/// <summary>FUSE cannot be used on this machine (no /dev/fuse, no libfuse3, the mount refused); kvcrashtest exits with <see cref="PowerCutFs.UnavailableExitCode"/>.</summary>
internal sealed class FuseUnavailableException(string message) : Exception(message);
