using System.Globalization;
using System.Text;

/// <summary>Keys and values of the crash test, shared with the parent test (linked source).</summary>
internal static class CrashKeys
{
    public static byte[] Key(long i) => Encoding.ASCII.GetBytes("key" + i.ToString("D10", CultureInfo.InvariantCulture));

    public static byte[] Value(long i)
    {
        var v = new byte[(int)(i * 37 % 700) + 1];
        for (int j = 0; j < v.Length; j++)
        {
            v[j] = (byte)(i * 131 + j);
        }
        return v;
    }
}
