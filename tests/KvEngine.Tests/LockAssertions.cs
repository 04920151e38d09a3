using System.Runtime.CompilerServices;
using KvEngine.Db.State;

namespace KvEngine.Tests;

/// <summary>
/// Turns on the database mutex's lock checks (<see cref="DbMutex.AssertHeld"/>) for the whole test
/// run, Release builds included: a member that must hold the mutex and is reached without it
/// throws, so every test doubles as a check of the lock rules.
/// </summary>
internal static class LockAssertions
{
    [ModuleInitializer]
    internal static void Enable() => DbMutex.AssertionsEnabled = true;
}
