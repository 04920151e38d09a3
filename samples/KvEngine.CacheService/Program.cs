// The sample cache service's entry point; everything else is in CacheServiceApp.
using KvEngine.CacheService;

await CacheServiceApp.Build(args).RunAsync();
