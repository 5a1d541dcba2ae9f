import Foundation
import SQLite

#if canImport(Glibc)
import Glibc
#endif

extension ChatDatabase {
    /// The largest the `-wal` file is left after a checkpoint empties it (`PRAGMA
    /// journal_size_limit`), and the most a store with `maxDatabaseBytes` lets it keep.
    public static let maxWriteAheadLogBytes: Int64 = 64 << 20

    /// Free space below which a write first copies the write-ahead log into the database file and
    /// empties it, beyond the log's own size: a checkpoint needs room in the database file for
    /// the pages it copies, so it must run while that room is still there (issue 22: a full
    /// 8 MiB disk held a 6.25 MB log beside a 4 KiB database, and freeing 2 MiB brought nothing back).
    static let lowSpaceReserveBytes: Int64 = 1 << 20

    /// Sizes that bound the write-ahead log: `journal_size_limit`, and with `maxDatabaseBytes`
    /// an automatic checkpoint at a quarter of the limit.
    static func configureLogBounds(_ db: Database, options: StoreOptions) throws {
        var logLimit = maxWriteAheadLogBytes
        if let bytes = options.maxDatabaseBytes { logLimit = min(logLimit, max(bytes / 4, 64 << 10)) }
        try db.execute("PRAGMA journal_size_limit = \(logLimit)")
        if options.maxDatabaseBytes != nil {
            let pages = max(Int(logLimit / max(try pageSize(db), 512)), 16)
            try db.execute("PRAGMA wal_autocheckpoint = \(min(options.autoCheckpointPages ?? 1000, pages))")
        }
    }

    /// The page size of a new database file. A post writes one random page of a large store
    /// (its chat's memberships: schema version 13), and a checkpoint writes a page smaller than
    /// the file system's 4 KiB block as a whole block: 2 KiB pages took the bytes a post writes to
    /// storage at 1,000,000 chats from 8.6 to 6.5 KB, and raw posts/s up by a third
    /// (Benchmarks/Results/daemon.md, 2026-12-06). 1 KiB would write less again, but doubles the
    /// pages a quick check reads. A file keeps the page size it was made with (a `VACUUM` outside
    /// WAL mode changes it: docs/DECISIONS.md, "A post writes one random page").
    public static let newFilePageSize = 2048

    /// The connection's page size in bytes (`PRAGMA page_size`).
    static func pageSize(_ db: Database) throws -> Int64 {
        try db.cachedStatement("PRAGMA page_size").fetchValue(Int64.self) ?? 4096
    }

    /// The connection's automatic checkpoint point (`PRAGMA wal_autocheckpoint`), 0 for none.
    static func autoCheckpointPages(_ db: Database) throws -> Int {
        Int(try db.cachedStatement("PRAGMA wal_autocheckpoint").fetchValue(Int64.self) ?? 0)
    }

    /// Has every commit of the store call `afterEachCommit` with the number of frames its
    /// write-ahead log holds then (its automatic checkpoint stays at the same point): a background
    /// checkpointer uses it to copy the log before the committing thread would have to. Kept
    /// when the store opens its file again; nothing for a read-only store.
    public func reportLogSize(afterEachCommit: @escaping (_ logFrames: Int) -> Void) {
        logSizeReport = afterEachCommit
        installLogSizeReport()
    }

    /// The write-ahead log of the store's connection, whose `sync()` makes the commits so far
    /// durable (`StoreOptions.callerSyncsCommits`); nil for a read-only store, or one whose
    /// connection has no log open. Valid until the store opens its file again
    /// (`reopenForWritingIfSpaceFreed()`) or closes: take it after each commit.
    public func writeAheadLog() -> WriteAheadLogFile? {
        guard !openedOnFullDisk, !options.readOnly else { return nil }
        return db.writeAheadLogFile()
    }

    func installLogSizeReport() {
        guard let logSizeReport, !openedOnFullDisk, !options.readOnly else { return }
        db.checkpointAutomatically(atPages: autoCheckpointPages, afterEachCommit: logSizeReport)
    }

    /// How many times its usual largest size a `-wal` file may grow before a write empties the
    /// log (`escapedLogBytes`).
    static let escapedLogFactor: Int64 = 4

    /// `escapedLogFactor` times the larger of the connection's automatic checkpoint point, in
    /// bytes of log (`PRAGMA wal_autocheckpoint` pages, each with its frame header), and
    /// `maxWriteAheadLogBytes`, the size every store leaves the file at: a `chatfeed` command's
    /// store (1,000 pages) must not take the log of a daemon that checkpoints at 14,336 for an
    /// escaped one. Nil when automatic checkpoints are off.
    static func escapedLogBytes(_ db: Database) throws -> Int64? {
        let pages = Int64(try autoCheckpointPages(db))
        guard pages > 0 else { return nil }
        return escapedLogFactor * max(pages * (try pageSize(db) + 24), maxWriteAheadLogBytes)
    }

    /// Before a write: empties the write-ahead log into the database file when the disk runs low
    /// (free space below the log's size and a reserve), when the database and its log together
    /// pass `maxDatabaseBytes`, or when the `-wal` file is past `escapedLogBytes`: it grows that
    /// large only while the log holds that much, which the automatic checkpoints are there to
    /// prevent (a log of 230 MB–1 GB was seen under heavy load, `Benchmarks/Results/daemon.md`).
    /// Two `stat` calls when nothing is due.
    func keepLogWithinSpace() {
        guard fileIdentity != nil, !options.readOnly else { return }
        var info = stat()
        guard stat(path + "-wal", &info) == 0, info.st_size > 0 else { return }
        let logBytes = Int64(info.st_size)
        var due = false
        if let limit = options.maxDatabaseBytes, stat(path, &info) == 0, Int64(info.st_size) + logBytes > limit {
            due = true
        }
        if !due, let free = Self.freeBytes(at: path), free < logBytes + Self.lowSpaceReserveBytes {
            due = true
        }
        if !due, let bound = escapedLogBytes, logBytes > bound { due = true }
        // When it cannot complete (no room even for that, readers), the write goes ahead and
        // fails as storage full if it must. It does not wait for readers: the next write retries.
        guard due else { return }
        db.setBusyTimeout(milliseconds: 0)
        _ = try? checkpoint(truncate: true)
        db.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
    }

    /// The bytes an unprivileged writer may still use on the file system holding `path`.
    static func freeBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}
