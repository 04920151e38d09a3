using System.Net;
using System.Net.Sockets;

namespace KvEngine.CacheService.Tests;

/// <summary>Loopback TCP ports the OS reports free (bound together, then released). Thread-safe.</summary>
internal static class LoopbackPorts
{
    public static int[] Free(int count)
    {
        var listeners = Enumerable.Range(0, count).Select(_ => new TcpListener(IPAddress.Loopback, 0)).ToArray();
        foreach (TcpListener l in listeners)
        {
            l.Start();
        }
        int[] ports = [.. listeners.Select(l => ((IPEndPoint)l.LocalEndpoint).Port)];
        foreach (TcpListener l in listeners)
        {
            l.Stop();
        }
        return ports;
    }
}
