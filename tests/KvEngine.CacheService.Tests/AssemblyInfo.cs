// The metric tests of CacheServiceHttpTests count every kvcache_* measurement in the process
// (OpenTelemetry listens to every meter of a name): no other test class may run beside them.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
