/// A database that this chatfeed cannot use as it is.
public enum ChatStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file was written by a newer chatfeed.
    case schemaTooNew(path: String, version: Int, supported: Int)
    /// A read-only store found a schema that needs migrating first.
    case schemaOutdated(path: String, version: Int, required: Int)
    /// The disk (or the `maxDatabaseBytes` limit) is full: the write was not made. Writes work
    /// again once space is freed.
    case storageFull(path: String, detail: String)
    /// The change log no longer holds the changes after `after`: they were pruned (up to
    /// `prunedThrough`) while this reader was not alive. Reload the whole list.
    case changeLogGap(after: Int64, prunedThrough: Int64)
    /// This process cannot write the database.
    case notWritable(path: String, reason: String)
    /// `PRAGMA quick_check` found damage.
    case damaged(path: String, detail: String)
    /// `path` names no file that processes can share (`""`, `:memory:`, a `file:` URI).
    case unusablePath(path: String, reason: String)
    /// The database could not be opened, for `reason` (a full disk, a lock held too long…).
    case cannotOpen(path: String, reason: String)
    /// The database file was deleted, moved or replaced while the store had it open: writes
    /// are refused, since they would go into a file that is no longer at `path`.
    case fileGone(path: String, reason: String)
    /// The disk failed to make a commit durable (`fsync` of the write-ahead log): the last
    /// commit may or may not be on it, and the kernel may have dropped what it could not write,
    /// so no later write is trusted either.
    case syncFailed(path: String, detail: String)

    public var description: String {
        switch self {
        case .schemaTooNew(let path, let version, let supported):
            "database '\(path)' has schema version \(version), newer than this chatfeed supports (\(supported)); upgrade chatfeed"
        case .schemaOutdated(let path, let version, let required):
            "database '\(path)' has schema version \(version) but version \(required) is required; open it once read-write to migrate it"
        case .storageFull(let path, let detail):
            "storage full: the disk holding '\(path)' (or its maxDatabaseBytes limit) has no room for this write (\(detail)); nothing was written, free some space and retry"
        case .changeLogGap(let after, let prunedThrough):
            "the change log was pruned up to \(prunedThrough) while this reader was at \(after)"
        case .notWritable(let path, let reason):
            "database '\(path)' is not writable: \(reason); fix the permissions or start read-only (--read-only)"
        case .damaged(let path, let detail):
            "database '\(path)' is damaged (quick_check: \(detail)); restore it from a backup (quickCheckAtStart: false skips this check)"
        case .unusablePath(let path, let reason):
            "cannot use '\(path)' as the database: \(reason)"
        case .cannotOpen(let path, let reason):
            "cannot open the database '\(path)': \(reason)"
        case .fileGone(let path, let reason):
            "database '\(path)' was removed while open (\(reason)); writes are refused because they would not reach the file at that path; restart to open the file there"
        case .syncFailed(let path, let detail):
            "the disk failed to sync the database '\(path)' (\(detail)): the last writes may not be on it, and writes are refused from now on; check the disk (its kernel log), then restart"
        }
    }
}
