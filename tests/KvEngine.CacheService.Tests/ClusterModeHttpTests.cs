using System.Globalization;
using System.Net;
using System.Net.Http.Json;
using DotNext.Net.Cluster;
using DotNext.Net.Cluster.Consensus.Raft;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using KvEngine.CacheService.Cluster;
using KvEngine.Replication;

namespace KvEngine.CacheService.Tests;

/// <summary>
/// The sample service started three times with <c>--cluster</c> in this process, each node on its
/// own loopback HTTP and Raft ports, spoken to over real HTTP with redirects not followed (so the
/// 307s are seen). Every wait is on a condition with a deadline.
/// </summary>
public sealed class ClusterModeHttpTests : IAsyncLifetime
{
    private static readonly TimeSpan s_deadline = TimeSpan.FromSeconds(30);
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kvcache-cluster-" + Guid.NewGuid().ToString("N"));
    private readonly List<WebApplication> _apps = [];
    private readonly HttpClient _http = new(new HttpClientHandler { AllowAutoRedirect = false });
    private string[] _urls = [];

    public async Task InitializeAsync()
    {
        int[] ports = LoopbackPorts.Free(6);
        _urls = [.. ports.Take(3).Select(p => "http://127.0.0.1:" + p.ToString(CultureInfo.InvariantCulture))];
        var members = new List<string>();
        for (int i = 0; i < 3; i++)
        {
            string prefix = "--Cluster:Members:" + i.ToString(CultureInfo.InvariantCulture);
            members.AddRange([prefix + ":Raft", "127.0.0.1:" + ports[3 + i].ToString(CultureInfo.InvariantCulture), prefix + ":Http", _urls[i]]);
        }
        for (int i = 0; i < 3; i++)
        {
            WebApplication app = CacheServiceApp.Build(
            [
                CacheServiceApp.ClusterFlag,
                "--urls", _urls[i],
                "--Cluster:Self", i.ToString(CultureInfo.InvariantCulture),
                "--Cluster:DataDirectory", Path.Combine(_dir, "node" + i.ToString(CultureInfo.InvariantCulture)),
                "--Logging:LogLevel:Default", "Warning",
                // Longer than the default: CI runs other test assemblies beside this one on two cores.
                "--Cluster:LowerElectionTimeout", "1000",
                "--Cluster:UpperElectionTimeout", "2000",
                .. members,
            ]);
            _apps.Add(app);
        }
        using var cts = new CancellationTokenSource(s_deadline);
        await Task.WhenAll(_apps.Select(a => a.StartAsync(cts.Token)));
    }

    public async Task DisposeAsync()
    {
        _http.Dispose();
        foreach (WebApplication app in _apps)
        {
            await app.StopAsync();
            await app.DisposeAsync();
        }
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private async Task<ClusterStatusResponse> StatusAsync(string url) =>
        (await _http.GetFromJsonAsync<ClusterStatusResponse>(url + "/cluster"))!;

    /// <summary>Polls until <paramref name="condition"/> holds; fails past the deadline.</summary>
    private static async Task<T> WaitForAsync<T>(Func<Task<T?>> probe, Func<T?, bool> condition, string what)
    {
        using var cts = new CancellationTokenSource(s_deadline);
        while (true)
        {
            T? value = await probe();
            if (condition(value))
            {
                return value!;
            }
            try
            {
                await Task.Delay(20, cts.Token);
            }
            catch (OperationCanceledException)
            {
                Assert.Fail("Timed out waiting until " + what);
            }
        }
    }

    private async Task<int> LeaderIndexAsync()
    {
        return await WaitForAsync<int?>(async () =>
        {
            for (int i = 0; i < _urls.Length; i++)
            {
                if ((await StatusAsync(_urls[i])).Role == "Leader")
                {
                    return i;
                }
            }
            return null;
        }, i => i.HasValue, "a node leads") ?? -1;
    }

    [Fact]
    public async Task Writes_go_through_the_leader_and_followers_redirect_with_307()
    {
        int leader = await LeaderIndexAsync();
        int follower = (leader + 1) % 3;
        await WaitForAsync(() => StatusAsync(_urls[follower])!, s => s!.LeaderUrl != null, "the follower knows the leader");

        // A write to a follower: 307 to the same path and query on the leader.
        byte[] value = [0, 1, 2, 250, 255];
        using (HttpResponseMessage redirect = await _http.PutAsync(_urls[follower] + "/cache/k1?ttl=3600", new ByteArrayContent(value)))
        {
            Assert.Equal(HttpStatusCode.TemporaryRedirect, redirect.StatusCode);
            Assert.Equal(new Uri(_urls[leader] + "/cache/k1?ttl=3600"), redirect.Headers.Location);
            using HttpResponseMessage put = await _http.PutAsync(redirect.Headers.Location, new ByteArrayContent(value));
            Assert.Equal(HttpStatusCode.NoContent, put.StatusCode);
        }

        // Linearizable GET: served by the leader, redirected by a follower.
        Assert.Equal(value, await _http.GetByteArrayAsync(_urls[leader] + "/cache/k1"));
        using (HttpResponseMessage redirect = await _http.GetAsync(_urls[follower] + "/cache/k1"))
        {
            Assert.Equal(HttpStatusCode.TemporaryRedirect, redirect.StatusCode);
            Assert.Equal(new Uri(_urls[leader] + "/cache/k1"), redirect.Headers.Location);
        }
        // A stale read from any node sees the write once that node applied it.
        for (int i = 0; i < 3; i++)
        {
            string url = _urls[i] + "/cache/k1?consistency=stale";
            await WaitForAsync(async () => (int)(await _http.GetAsync(url)).StatusCode, s => s == 200, "node " + i + " applied the write");
            Assert.Equal(value, await _http.GetByteArrayAsync(url));
        }

        // DELETE through the leader; a follower redirects it too.
        using (HttpResponseMessage redirect = await _http.DeleteAsync(_urls[follower] + "/cache/k1"))
        {
            Assert.Equal(HttpStatusCode.TemporaryRedirect, redirect.StatusCode);
        }
        using (HttpResponseMessage delete = await _http.DeleteAsync(_urls[leader] + "/cache/k1"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        using (HttpResponseMessage miss = await _http.GetAsync(_urls[leader] + "/cache/k1"))
        {
            Assert.Equal(HttpStatusCode.NotFound, miss.StatusCode);
        }
        using (HttpResponseMessage bad = await _http.PutAsync(_urls[leader] + "/cache/k2?ttl=soon", new ByteArrayContent(value)))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        }
    }

    [Fact]
    public async Task Cluster_endpoint_shows_role_term_commit_and_applied_index_and_the_leader()
    {
        int leader = await LeaderIndexAsync();
        for (int i = 0; i < 5; i++)
        {
            using HttpResponseMessage put = await _http.PutAsync(_urls[leader] + "/cache/k" + i, new ByteArrayContent([(byte)i]));
            Assert.Equal(HttpStatusCode.NoContent, put.StatusCode);
        }
        ClusterStatusResponse leaderStatus = await StatusAsync(_urls[leader]);
        Assert.Equal("Leader", leaderStatus.Role);
        Assert.True(leaderStatus.Term >= 1);
        Assert.True(leaderStatus.CommitIndex >= 5, "commit index " + leaderStatus.CommitIndex);
        Assert.True(leaderStatus.AppliedIndex >= 5);
        Assert.Equal(_urls[leader] + "/", leaderStatus.LeaderUrl);
        for (int i = 0; i < 3; i++)
        {
            if (i == leader)
            {
                continue;
            }
            ClusterStatusResponse status = await WaitForAsync(() => StatusAsync(_urls[i])!,
                s => s!.AppliedIndex >= leaderStatus.AppliedIndex && s.LeaderUrl != null, "follower " + i + " caught up");
            Assert.Equal("Follower", status.Role);
            Assert.Equal(leaderStatus.Leader, status.Leader);
            Assert.Equal(_urls[leader] + "/", status.LeaderUrl);
        }
        using HttpResponseMessage health = await _http.GetAsync(_urls[leader] + "/health");
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
    }

    /// <summary>
    /// After the election and before any write, every node's /cluster shows applied == commit
    /// (the leader's no-op counts as applied). Then a linearizable GET on the leader whose read
    /// barrier fails with each of DotNext's leadership and membership exceptions (injected: the
    /// barrier of a leader paused and resumed after the others elected a successor ends in one of
    /// them) answers 503 with Retry-After, since the only leader this node knows is itself: never 500.
    /// </summary>
    [Fact]
    public async Task Applied_equals_commit_without_writes_and_a_failed_read_barrier_answers_503_not_500()
    {
        int leader = await LeaderIndexAsync();
        for (int i = 0; i < 3; i++)
        {
            await WaitForAsync(() => StatusAsync(_urls[i])!, s => s!.CommitIndex >= 1 && s.AppliedIndex == s.CommitIndex,
                "node " + i + " applied every committed entry");
        }

        ReplicatedKvNode node = _apps[leader].Services.GetRequiredService<ClusterNode>().Node!;
        Exception[] errors = [new NotLeaderException(), new QuorumUnreachableException(), new MemberUnavailableException(null!)];
        foreach (Exception error in errors)
        {
            node.ReadBarrier = _ => ValueTask.FromException(error);
            using HttpResponseMessage response = await _http.GetAsync(_urls[leader] + "/cache/k");
            Assert.True(response.StatusCode == HttpStatusCode.ServiceUnavailable, error.GetType().Name + ": " + response.StatusCode);
            Assert.NotNull(response.Headers.RetryAfter);
        }
        node.ReadBarrier = _ => ValueTask.CompletedTask;
        using HttpResponseMessage miss = await _http.GetAsync(_urls[leader] + "/cache/k");
        Assert.Equal(HttpStatusCode.NotFound, miss.StatusCode);
    }
}
