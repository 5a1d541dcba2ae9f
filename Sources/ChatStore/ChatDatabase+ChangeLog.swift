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
    /// then in a small transaction of its own, run inside `around`: the engine marks it as its
    /// own write for its database watcher), so calling it after every catch-up is cheap.
    public func readerReached(
        _ sequence: Int64, around: (() throws -> Void) throws -> Void = { try $0() }
    ) throws {
        guard var current = reader else { return }
        current.position = max(current.position, sequence)
        reader = current
        guard isReaderRowDue() else { return }
        try around {
            try mappingStorageErrors {
                try db.inTransaction(.immediate) { try writeReaderRow() }
            }
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

    /// Every membership changed after `sequence`, as its user sees the chat now, for the users
    /// `wanted` accepts: each user's changes in the order of their latest entry (as
    /// `changes(after:user:)` gives them, less the chats the user neither holds nor left), the
    /// users in the order of their first change; and the highest sequence read — all from one
    /// read transaction, where one `changes(after:user:)` per user reads the log once each.
    ///
    /// A log entry naming a user is that membership's; an entry of a chat's shared fields (a
    /// post, a rename) is every current member's. Such a chat's row is read and decoded once,
    /// and each wanted member's own fields (unread, revision, list, pin, mute) come from one
    /// walk of the chat's memberships on their primary key: a post to a chat of 1,000 live
    /// members is one chat row and 1,000 small membership rows, where a join per member read
    /// and decoded the chat 1,000 times, behind a sort of every (member, chat) named (28% of the
    /// engine thread in `DaemonLoad fanout --members 1000`; Results/gateway.md, 2026-11-25 07:05).
    ///
    /// - Throws: `ChatStoreError.changeLogGap` when changes after `sequence` were pruned.
    /// - Complexity: O(entries after `sequence` + members of the chats whose shared fields they
    ///   name + r log r) for the r changes returned, whatever the number of users.
    public func changesByUser(
        after sequence: Int64, wanted: (String) -> Bool
    ) throws -> (changes: [(user: String, changes: [ChatChange])], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            let pruned = try prunedThrough()
            if pruned > sequence { throw ChatStoreError.changeLogGap(after: sequence, prunedThrough: pruned) }
            // The latest entry of each wanted membership named, and of each chat's shared fields.
            var named: [MembershipChange: Int64] = [:]
            var shared: [(chat: String, sequence: Int64)] = []
            var sharedSlot: [String: Int] = [:]
            try db.cachedStatement(
                "SELECT sequence, chat_id, user_id FROM change_log WHERE sequence > ?1 ORDER BY sequence"
            ).forEachRow(sequence) { row in
                let entry: Int64 = row[0]
                let chat: String = row[1]
                if row.isNull(2) {
                    if let slot = sharedSlot[chat] {
                        shared[slot].sequence = entry
                    } else {
                        sharedSlot[chat] = shared.count
                        shared.append((chat, entry))
                    }
                } else {
                    let user: String = row[2]
                    if wanted(user) { named[MembershipChange(user: user, chat: chat)] = entry }
                }
            }
            // Each change at its latest entry, and the order it was found in.
            var found: [(sequence: Int64, order: Int, user: String, change: ChatChange)] = []
            let members = try db.cachedStatement(
                "SELECT user_id, unread, revision, list, pin_order, muted FROM membership WHERE chat_id = ?1")
            for (chatID, entry) in shared {
                // A removed chat's members have entries of their own (`removeChat` logs them).
                guard let chat = try fetchShared(id: chatID) else { continue }
                try members.forEachRow(chatID) { row in
                    let user: String = row[0]
                    guard wanted(user) else { return }
                    let own = named.isEmpty ? entry : named.removeValue(forKey: MembershipChange(user: user, chat: chatID)) ?? entry
                    let seen = chat.seen(
                        unread: row[1], revision: row[2], list: row[3], pinOrder: row[4],
                        muted: row[5])
                    found.append((max(entry, own), found.count, user, ChatChange(chatID: chatID, chat: seen)))
                }
            }
            // Memberships named alone: as the user sees the chat now, nil when no longer a member.
            for (membership, entry) in named {
                let chat = try fetchChat(id: membership.chat, user: membership.user)
                found.append((entry, found.count, membership.user, ChatChange(chatID: membership.chat, chat: chat)))
            }
            // One entry's members are one walk, in key order: ordering by entry, then by the
            // order found, orders them by (entry, user) as the log would.
            if zip(found, found.dropFirst()).contains(where: { $0.sequence > $1.sequence }) {
                found.sort { $0.sequence != $1.sequence ? $0.sequence < $1.sequence : $0.order < $1.order }
            }
            var changes: [(user: String, changes: [ChatChange])] = []
            var slot: [String: Int] = [:]
            for change in found {
                if let index = slot[change.user] {
                    changes[index].changes.append(change.change)
                } else {
                    slot[change.user] = changes.count
                    changes.append((change.user, [change.change]))
                }
            }
            return (changes, try latestChangeSequence())
        }
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
            try db.cachedStatement("PRAGMA quick_check(5)").forEachRow { findings.append($0[0]) }
        } catch let error as SQLiteError where [.corrupt, .notADatabase].contains(error.resultCode) {
            throw ChatStoreError.damaged(path: path, detail: error.message)
        }
        if findings != ["ok"] {
            let detail = findings.joined(separator: "; ").split(whereSeparator: \.isNewline).joined(separator: " ")
            throw ChatStoreError.damaged(path: path, detail: detail)
        }
    }
}
