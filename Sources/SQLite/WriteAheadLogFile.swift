import CSQLite

/// A connection's write-ahead log as SQLite holds it open (`Database.writeAheadLogFile()`): its
/// `sync()` makes every commit written to it so far durable, as `PRAGMA synchronous = FULL`
/// would have at each commit.
///
/// With `synchronous = NORMAL` a commit in WAL mode writes its frames and publishes them without
/// an `fsync`; calling `sync()` after it, before the commit is reported, gives the durability of
/// `FULL` (SQLite's consistency after a power loss is that of `NORMAL` either way), and lets the
/// sync run on another thread while the connection reads. It goes through SQLite's own handle
/// (the VFS's `xSync`: `fdatasync` on Linux, and the directory's sync once after the log was
/// created, which `NORMAL` leaves to the first sync).
///
/// It is valid while its connection stays open in WAL mode. `sync()` may run on any thread while
/// the connection runs statements that neither sync the log themselves (a checkpoint) nor close
/// it: the caller keeps commits, checkpoints and the close out of the time a sync runs.
public struct WriteAheadLogFile: @unchecked Sendable {
    private let file: UnsafeMutablePointer<sqlite3_file>
    /// The log's path, for messages.
    public let path: String

    init(file: UnsafeMutablePointer<sqlite3_file>, path: String) {
        self.file = file
        self.path = path
    }

    /// The log's size in bytes, as its handle sees it (the VFS's `xFileSize`).
    public func size() throws(SQLiteError) -> Int64 {
        var size: sqlite3_int64 = 0
        guard let fileSize = file.pointee.pMethods?.pointee.xFileSize else {
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: SQLITE_MISUSE), message: "'\(path)' is not open")
        }
        let code = fileSize(file, &size)
        guard code == SQLITE_OK else {
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: code), message: "cannot read the size of '\(path)'")
        }
        return Int64(size)
    }

    /// Flushes everything written to the log to storage.
    public func sync() throws(SQLiteError) {
        guard let sync = file.pointee.pMethods?.pointee.xSync else {
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: SQLITE_MISUSE), message: "'\(path)' is not open")
        }
        let code = sync(file, SQLITE_SYNC_NORMAL)
        guard code == SQLITE_OK else {
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: code), message: "cannot sync '\(path)'")
        }
    }
}
