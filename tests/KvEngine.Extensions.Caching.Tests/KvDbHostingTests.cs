using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>AddKvDb: a plain KvDb singleton opened at host start, flushed and closed at stop.</summary>
public sealed class KvDbHostingTests : IDisposable
{
    private readonly TempDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    private static IHost BuildHost(Action<IServiceCollection> configure)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        configure(builder.Services);
        return builder.Build();
    }

    [Fact]
    public async Task The_database_opens_at_start_and_is_flushed_and_closed_at_stop()
    {
        int configured = 0;
        using IHost host = BuildHost(s => s.AddKvDb(_dir.Path, o =>
        {
            configured++;
            o.WriteBufferSize = 1 << 20;
        }));
        await host.StartAsync();
        Assert.Equal(1, configured);
        Assert.ThrowsAny<KvException>(() => KvDb.Open(_dir.Path)); // opened by the host: LOCK held
        KvDb db = host.Services.GetRequiredService<KvDb>();
        Assert.Same(db, host.Services.GetRequiredService<KvDb>());
        db.Put("k"u8, "v"u8);
        await host.StopAsync();
        Assert.Throws<ObjectDisposedException>(() => db.Put("k2"u8, "v"u8));
        Assert.NotEmpty(Directory.GetFiles(_dir.Path, "*.sst"));
        using KvDb reopened = KvDb.Open(_dir.Path);
        Assert.Equal("v"u8.ToArray(), reopened.Get("k"u8));
    }

    [Fact]
    public async Task A_bad_path_fails_the_host_start_and_a_second_registration_is_refused()
    {
        string file = Path.Combine(_dir.Path, "file");
        await File.WriteAllTextAsync(file, "x");
        using IHost host = BuildHost(s => s.AddKvDb(file, new KvOptions()));
        Exception e = await Assert.ThrowsAnyAsync<Exception>(() => host.StartAsync());
        Assert.True(e is KvException or IOException, e.ToString());
        Assert.Contains(file, e.Message, StringComparison.Ordinal);

        var services = new ServiceCollection();
        services.AddKvDb(_dir.Path);
        Assert.Throws<InvalidOperationException>(() => services.AddKvDb(_dir.Path));
    }

    [Fact]
    public async Task A_host_disposed_without_a_stop_still_closes_the_database()
    {
        IHost host = BuildHost(s => s.AddKvDb(_dir.Path));
        await host.StartAsync(); // opened by the host; nothing resolves the KvDb service itself
        Assert.ThrowsAny<KvException>(() => KvDb.Open(_dir.Path));
        host.Dispose();
        using KvDb reopened = KvDb.Open(_dir.Path); // the LOCK was released
    }
}
