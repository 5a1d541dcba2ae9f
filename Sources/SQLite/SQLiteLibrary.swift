import CSQLite

/// Settings of the SQLite library itself, shared by every connection of the process.
public enum SQLiteLibrary {
    /// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`), which take a global
    /// mutex around every allocation and free SQLite makes: 8–30% of the daemon's CPU per
    /// saturated post (Benchmarks/Results/daemon.md, 2026-11-29). `sqlite3_memory_used()` and
    /// the soft heap limit then no longer work, for every user of SQLite in the process, so only
    /// a process that owns its use of SQLite calls it (`chatfeedd` does), not a library inside
    /// an app.
    ///
    /// Takes effect only before SQLite is first used in the process; returns whether it did.
    @discardableResult
    public static func disableMemoryStatistics() -> Bool {
        chatfeed_sqlite_config_memstatus(0) == SQLITE_OK
    }
}
