using System.Globalization;
using KvEngine;

// Usage: KvEngine.CrashChild <db path> <first index>
// Writes batches { Put(key i), for i % 10 == 0 Delete(key i-5), and for i % 50 == 25
// DeleteRange(key i-20, key i-15) (keys i-20 .. i-16) } with Sync=true, printing
// "ack i" after each acknowledged write, until killed. Small memtables make flushes (and so table
// and MANIFEST writes) happen while it may be killed.
if (args.Length != 2)
{
    Console.Error.WriteLine("usage: KvEngine.CrashChild <db path> <first index>");
    return 2;
}
string path = args[0];
long first = long.Parse(args[1], CultureInfo.InvariantCulture);
var options = new KvOptions { WriteBufferSize = 64 << 10 };
using KvDb db = KvDb.Open(path, options);
Console.Out.WriteLine("ready");
Console.Out.Flush();
var sync = new WriteOptions { Sync = true };
for (long i = first; ; i++)
{
    using var batch = new WriteBatch();
    batch.Put(CrashKeys.Key(i), CrashKeys.Value(i));
    if (i % 10 == 0)
    {
        batch.Delete(CrashKeys.Key(i - 5));
    }
    if (i % 50 == 25)
    {
        batch.DeleteRange(CrashKeys.Key(i - 20), CrashKeys.Key(i - 15));
    }
    db.Write(batch, sync);
    Console.Out.WriteLine("ack " + i.ToString(CultureInfo.InvariantCulture));
    Console.Out.Flush();
}
