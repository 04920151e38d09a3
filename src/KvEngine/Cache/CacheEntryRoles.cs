namespace KvEngine.Cache;

/// <summary>Facts about <see cref="CacheEntryRole"/>. Stateless.</summary>
internal static class CacheEntryRoles
{
    /// <summary>Number of roles (slots in per-role statistics).</summary>
    public const int Count = (int)CacheEntryRole.FilterMeta + 1;
}
