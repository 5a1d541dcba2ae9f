import ChatModel
import Foundation
import SQLite

/// A registered change-log reader: what this store last wrote of its position, and when.
struct ChangeLogReader {
    var name: String
    /// Every change up to this sequence has been read.
    var position: Int64
    var writtenPosition: Int64
    var writtenAt: Int64
}

extension ChatDatabase {
    /// Registers this store as a change-log reader named `name` (unique among the processes on
    /// the file) that has read every change up to `sequence`. While it shows signs of life
    /// (`readerReached(_:)`, its own commits), no process prunes the entries after its position;
    /// after `readerTimeoutMilliseconds` without one it is dead and no longer holds pruning back.
    public func registerReader(_ name: String, at sequence: Int64) throws {
        try checkCanWrite()
        reader = ChangeLogReader(name: name, position: sequence, writtenPosition: sequence, writtenAt: currentMilliseconds())
        try mappingStorageErrors {
            try db.inTransaction(.immediate) { try writeReaderRow() }
        }
    }

    /// Records that the reader has read every change up to `sequence`. Writes the position to
    /// the database only when the last write is older than a quarter of the reader timeout (and
    /// then in a small transaction of its own), so calling it after every catch-up is cheap.
    public func readerReached(_ sequence: Int64) throws {
        guard var current = reader else { return }
        current.position = max(current.position, sequence)
        reader = current
        guard isReaderRowDue() else { return }
        try mappingStorageErrors {
            try db.inTransaction(.immediate) { try writeReaderRow() }
        }
    }

    /// Removes this store's reader row (on a graceful exit).
    public func unregisterReader() throws {
        guard let current = reader else { return }
        reader = nil
        try db.cachedStatement("DELETE FROM change_log_reader WHERE id = ?1").execute(current.name)
    }

    /// The highest pruned sequence (0 when nothing was pruned), the latest sequence and the
    /// number of entries the change log holds.
    public func changeLogBounds() throws -> (prunedThrough: Int64, latest: Int64, entries: Int) {
        try db.inTransaction(.deferred) {
            (try prunedThrough(), try latestChangeSequence(),
             try db.cachedStatement("SELECT COUNT(*) FROM change_log").fetchValue(Int.self) ?? 0)
        }
    }

    func prunedThrough() throws -> Int64 {
        try db.cachedStatement("SELECT sequence FROM change_log_pruned WHERE only = 1").fetchValue(Int64.self) ?? 0
    }

    private func isReaderRowDue() -> Bool {
        guard let reader else { return false }
        return currentMilliseconds() - reader.writtenAt >= Int64(max(options.readerTimeoutMilliseconds / 4, 1))
    }

    private func writeReaderRow() throws {
        guard var current = reader else { return }
        current.writtenAt = currentMilliseconds()
        try db.cachedStatement("""
            INSERT INTO change_log_reader (id, sequence, seen_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (id) DO UPDATE SET sequence = excluded.sequence, seen_at = excluded.seen_at
            """).execute(current.name, current.position, current.writtenAt)
        current.writtenPosition = current.position
        reader = current
    }

    /// Runs inside every write transaction of this store: refreshes the reader row when due and
    /// prunes the change log when it holds `changeLogRetention` entries and a slack (a sixteenth)
    /// beyond what it must keep, so that pruning runs in chunks, not at every commit.
    ///
    /// - Complexity: O(log n) when nothing is due; O(entries pruned + readers) when it prunes.
    func maintainChangeLog() throws {
        let retention = Int64(max(options.changeLogRetention, 1))
        let latest = try latestChangeSequence()
        let pruned = try prunedThrough()
        let pruneDue = latest - pruned > retention + max(retention / 16, 16)
        // When pruning, this store's own reader row holds it back: bring it up to date first.
        if isReaderRowDue() || (pruneDue && reader.map { $0.position != $0.writtenPosition } == true) {
            try writeReaderRow()
        }
        guard pruneDue else { return }
        let now = currentMilliseconds()
        let liveSince = now - Int64(options.readerTimeoutMilliseconds)
        try db.cachedStatement("DELETE FROM change_log_reader WHERE seen_at < ?1").execute(liveSince)
        var bound = latest - retention
        if let oldestReader = try db.cachedStatement("SELECT MIN(sequence) FROM change_log_reader").fetchValue(Int64.self) {
            bound = min(bound, oldestReader)
        }
        guard bound > pruned else { return }
        try db.cachedStatement("DELETE FROM change_log WHERE sequence <= ?1").execute(bound)
        try db.cachedStatement("UPDATE change_log_pruned SET sequence = ?1 WHERE only = 1").execute(bound)
    }

    /// Runs `body`; a full disk (or the `maxDatabaseBytes` limit) becomes
    /// `ChatStoreError.storageFull`, after a try to give the write-ahead log's space back.
    func mappingStorageErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError where error.resultCode == .full {
            // The WAL may have grown up to the failure; truncating it returns that space.
            _ = try? checkpoint(truncate: true)
            throw ChatStoreError.storageFull(path: path, detail: error.message)
        }
    }

    /// Copies the write-ahead log into the database file; with `truncate`, also empties the
    /// `-wal` file. Returns false when readers of other connections kept it from completing.
    @discardableResult
    public func checkpoint(truncate: Bool) throws -> Bool {
        let busy = try db.cachedStatement("PRAGMA wal_checkpoint(\(truncate ? "TRUNCATE" : "PASSIVE"))").fetchValue(Int.self)
        return busy == 0
    }

    /// Checks that this process can write the database: the file, and the directory where SQLite
    /// creates the `-wal` and `-shm` files. Takes the write lock for a moment (waiting up to the
    /// busy timeout) and writes nothing.
    ///
    /// - Throws: `ChatStoreError.notWritable` saying what is read-only.
    public func checkWritable() throws {
        // Writes fail as storage full until space is freed and the store opened again.
        if openedOnFullDisk { return }
        if db.isReadOnly || access(path, W_OK) != 0 {
            throw ChatStoreError.notWritable(path: path, reason: "the file is read-only")
        }
        do throws(SQLiteError) {
            try db.execute("BEGIN IMMEDIATE")
            try db.execute("ROLLBACK")
        } catch {
            if error.isBusy { throw error }
            throw Self.notWritable(path: path, error)
        }
    }

    /// The error for a store that cannot be written, saying whether the file or its directory
    /// is read-only.
    static func notWritable(path: String, _ error: SQLiteError) -> ChatStoreError {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let reason = access(path, W_OK) != 0 ? "the file is read-only"
            : access(directory, W_OK) != 0
            ? "its directory '\(directory)' is read-only (SQLite keeps the -wal and -shm files beside it)"
            : error.message
        return .notWritable(path: path, reason: reason)
    }

    /// `PRAGMA quick_check`: O(size of the file), without the index cross-checks of a full
    /// integrity check.
    ///
    /// - Throws: `ChatStoreError.damaged` with SQLite's first findings.
    public func checkIntegrity() throws {
        var findings: [String] = []
        do {
            try db.cachedStatement("PRAGMA quick_check(5)").forEachRow([]) { findings.append($0[0]) }
        } catch let error as SQLiteError where [.corrupt, .notADatabase].contains(error.resultCode) {
            throw ChatStoreError.damaged(path: path, detail: error.message)
        }
        if findings != ["ok"] {
            let detail = findings.joined(separator: "; ").split(whereSeparator: \.isNewline).joined(separator: " ")
            throw ChatStoreError.damaged(path: path, detail: detail)
        }
    }
}
