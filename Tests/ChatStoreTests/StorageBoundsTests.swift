import ChatModel
@testable import ChatStore
import Foundation
import SQLite
import TestSupport
import Testing

/// The change log stays bounded, a full disk is its own error and passes, a group commit can be
/// cut by time, and a checkpoint leaves the main file whole.
@Suite struct StorageBoundsTests {
    static func posts(_ count: Int, from start: Int, chats: Int = 3, text: String = "hi") -> [ChatEvent] {
        (start..<(start + count)).map { message("m\($0)", in: "c\($0 % chats)", text, at: Int64(1000 + $0)) }
    }

    static func setUp(_ store: ChatDatabase, chats: Int = 3) throws {
        for index in 0..<chats { try store.apply(.createChat(id: "c\(index)", title: "C", createdAt: 0)) }
    }

    @Test func theLogKeepsTheRetentionAndPrunesTheRest() throws {
        let test = try TestStore(options: StoreOptions(changeLogRetention: 10))
        try Self.setUp(test.store)
        for result in try test.store.apply(Self.posts(200, from: 0)) { _ = try result.get() }
        let bounds = try test.store.changeLogBounds()
        #expect(bounds.latest == 203)
        #expect(bounds.prunedThrough == 193 && bounds.entries == 10, "\(bounds)")
        // Below the retention plus its slack nothing more is pruned, so pruning comes in chunks.
        for result in try test.store.apply(Self.posts(5, from: 200)) { _ = try result.get() }
        #expect(try test.store.changeLogBounds().prunedThrough == 193)
        // Changes after the pruned part still read; before it, a gap.
        #expect(try test.store.changes(after: 193).changes.count == 3)
        #expect(throws: ChatStoreError.changeLogGap(after: 100, prunedThrough: 193)) {
            try test.store.changes(after: 100)
        }
    }

    @Test func aLiveReaderHoldsPruningBackAndADeadOneDoesNot() throws {
        let test = try TestStore(options: StoreOptions(changeLogRetention: 10, readerTimeoutMilliseconds: 400))
        try Self.setUp(test.store)
        let reader = try ChatDatabase(path: test.path, options: StoreOptions(readerTimeoutMilliseconds: 400))
        try reader.registerReader("daemon-1", at: 3)
        for result in try test.store.apply(Self.posts(100, from: 0)) { _ = try result.get() }
        // The reader has read up to 3: everything after it stays.
        #expect(try test.store.changeLogBounds().prunedThrough == 3)
        #expect(try reader.changes(after: 3).latestSequence == 103)
        // It moves on; its position is written at its next sign of life that is due.
        try reader.readerReached(50)
        usleep(150_000)
        try reader.readerReached(60)
        for result in try test.store.apply(Self.posts(30, from: 100)) { _ = try result.get() }
        #expect(try test.store.changeLogBounds().prunedThrough == 60)
        // It stops showing signs of life: past the timeout it no longer counts.
        usleep(500_000)
        for result in try test.store.apply(Self.posts(30, from: 130)) { _ = try result.get() }
        let bounds = try test.store.changeLogBounds()
        #expect(bounds.prunedThrough == bounds.latest - 10, "\(bounds)")
        #expect(throws: ChatStoreError.changeLogGap(after: 60, prunedThrough: bounds.prunedThrough)) {
            try reader.changes(after: 60)
        }
        // Unregistering removes its row: it never holds anything back again.
        try reader.unregisterReader()
    }

    @Test func aFullDiskIsStorageFullAndFreeingSpaceBringsWritesBack() throws {
        let test = try TestStore(options: StoreOptions(maxDatabaseBytes: 256 << 10))
        try Self.setUp(test.store, chats: 2)
        let text = String(repeating: "x", count: 2000)
        var posted = 0
        var failure: (any Error)?
        while failure == nil && posted < 2000 {
            do {
                for result in try test.store.apply(Self.posts(10, from: posted, chats: 1, text: text)) { _ = try result.get() }
                posted += 10
            } catch {
                failure = error
            }
        }
        guard case .storageFull(let path, _) = failure as? ChatStoreError else {
            Issue.record("expected storage full, got \(failure.map { "\($0)" } ?? "no error after \(posted) posts")")
            return
        }
        #expect(path == test.path)
        #expect("\(failure!)".hasPrefix("storage full:"))
        #expect(posted > 0)
        // The failed group left nothing: every post before it is there, none of it.
        #expect(try test.store.stats().messages == posted)
        #expect(try test.store.chat(id: "c0")?.unread == Int64(posted))
        // Single writes fill what is left, then fail the same way.
        var singleFailure: (any Error)?
        for index in 0..<500 where singleFailure == nil {
            do {
                try test.store.apply(message("single-\(index)", in: "c0", text, at: 99_999))
            } catch {
                singleFailure = error
            }
        }
        guard case .storageFull = singleFailure as? ChatStoreError else {
            Issue.record("expected storage full for a single write, got \(singleFailure.map { "\($0)" } ?? "none")")
            return
        }
        // Removing a chat frees its pages: writes come back.
        try test.store.apply(.removeChat(id: "c0"))
        for result in try test.store.apply(Self.posts(20, from: 10_000, chats: 1, text: text).map {
            guard case .postMessage(var message) = $0 else { return $0 }
            message.chat = "c1"
            return .postMessage(message)
        }) { _ = try result.get() }
        #expect(try test.store.chat(id: "c1")?.unread == 20)
    }

    @Test func aLockLimitCommitsAPrefixOfTheGroup() throws {
        let test = try TestStore()
        try Self.setUp(test.store)
        let events = Self.posts(5, from: 0) + [.renameChat(id: "missing", title: "x")] + Self.posts(5, from: 5)
        // A limit already used up: one event per transaction.
        var done = 0
        var transactions = 0
        while done < events.count {
            let results = try test.store.apply(Array(events[done...]), lockLimit: .zero)
            #expect(results.count == 1)
            done += results.count
            transactions += 1
        }
        #expect(transactions == events.count)
        #expect(try test.store.stats().messages == 10)
        // A generous limit takes the whole group.
        #expect(try test.store.apply(Self.posts(50, from: 100), lockLimit: .seconds(60)).count == 50)
    }

    /// A log that grew far past its usual largest size (here while a reader held every
    /// checkpoint back) is emptied by the next write once nothing holds it, not kept at its size.
    @Test func aLogFarPastItsUsualSizeIsEmptiedByTheNextWrite() throws {
        // The bound: four times the larger of the checkpoint point and the 64 MiB the file is
        // left at, so that a command's store does not empty a daemon's log; off with checkpoints.
        #expect(try TestStore().store.escapedLogBytes == 4 * ChatDatabase.maxWriteAheadLogBytes)
        #expect(try TestStore(options: StoreOptions(autoCheckpointPages: 100_000)).store.escapedLogBytes
            == 4 * 100_000 * (Int64(ChatDatabase.newFilePageSize) + 24))
        #expect(try TestStore(options: StoreOptions(autoCheckpointPages: 0)).store.escapedLogBytes == nil)
        // A bound of a small log, so that the test writes little.
        let test = try TestStore(options: StoreOptions(durability: .normal, autoCheckpointPages: 32))
        let bound: Int64 = 4 * 32 * (Int64(ChatDatabase.newFilePageSize) + 24)
        test.store.escapedLogBytes = bound
        try Self.setUp(test.store)
        func walSize() throws -> Int64 { Int64(try fileSize(test.path + "-wal")) }
        let reader = try Database(path: test.path)
        try reader.execute("BEGIN")
        #expect(try reader.cachedStatement("SELECT COUNT(*) FROM message").fetchValue(Int.self) == 0)
        let text = String(repeating: "x", count: 2000)
        var posted = 0
        while try walSize() <= 2 * bound {
            for result in try test.store.apply(Self.posts(20, from: posted, text: text)) { _ = try result.get() }
            posted += 20
        }
        // Held back by the reader, the log stays as it is.
        for result in try test.store.apply(Self.posts(1, from: posted, text: text)) { _ = try result.get() }
        #expect(try walSize() > 2 * bound)
        try reader.execute("COMMIT")
        for result in try test.store.apply(Self.posts(1, from: posted + 1)) { _ = try result.get() }
        #expect(try walSize() < bound)
        #expect(try test.store.stats().messages == posted + 2)
    }

    @Test func aTruncatingCheckpointLeavesEverythingInTheMainFile() throws {
        let test = try TestStore()
        try Self.setUp(test.store)
        for result in try test.store.apply(Self.posts(500, from: 0)) { _ = try result.get() }
        #expect(try test.store.checkpoint(truncate: true))
        let walSize = (try FileManager.default.attributesOfItem(atPath: test.path + "-wal")[.size] as? Int) ?? -1
        #expect(walSize == 0)
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: test.path, toPath: copy.path("copy.sqlite"))
        let copied = try ChatDatabase(path: copy.path("copy.sqlite"), options: StoreOptions(readOnly: true))
        #expect(try copied.stats().messages == 500)
        #expect(try copied.allChats().chats == test.store.allChats().chats)
    }

    @Test func quickCheckFindsADamagedFile() throws {
        let test = try TestStore()
        for result in try test.store.apply((0..<3000).map { .createChat(id: "chat-\($0)", title: "Chat \($0)", createdAt: Int64($0)) }) {
            _ = try result.get()
        }
        try test.store.checkIntegrity()
        #expect(try test.store.checkpoint(truncate: true))
        // Scribble over a page in the middle of the file.
        try scribbleOverPage(6, ofFile: test.path)
        let reopened = try ChatDatabase(path: test.path)
        #expect {
            try reopened.checkIntegrity()
        } throws: { error in
            guard case .damaged(let path, _) = error as? ChatStoreError else { return false }
            return path == test.path && "\(error)".contains("is damaged")
        }
    }
}

/// The connection's settings and the file it writes.
@Suite struct ConnectionSettingsTests {
    @Test func savepointJournalsStayInMemory() throws {
        let test = try TestStore()
        // 2 = MEMORY: a savepoint's sub-journal never spills to a temporary file (issue 18).
        #expect(try test.store.db.makeStatement("PRAGMA temp_store").fetchValue(Int.self) == 2)
        let readOnly = try ChatDatabase(path: test.path, options: StoreOptions(readOnly: true))
        #expect(try readOnly.db.makeStatement("PRAGMA temp_store").fetchValue(Int.self) == 2)
    }

    @Test func memoryStatisticsCannotBeTurnedOffOnceSQLiteIsInUse() throws {
        _ = try TestStore()
        // SQLite refuses the setting after its first use: nothing changes, and the caller is told.
        #expect(!SQLiteLibrary.disableMemoryStatistics())
    }

    @Test func writesStopWhenTheFileIsDeletedOrReplaced() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try FileManager.default.removeItem(atPath: test.path)
        #expect(throws: ChatStoreError.fileGone(path: test.path, reason: "it was deleted or moved away")) {
            try test.store.apply(.createChat(id: "b", title: "B", createdAt: 0))
        }
        _ = try ChatDatabase(path: test.path)
        #expect(throws: ChatStoreError.fileGone(path: test.path, reason: "another file was put in its place")) {
            try test.store.apply([.createChat(id: "b", title: "B", createdAt: 0)])
        }
    }

    @Test func aFileDeletedDuringATransactionRollsItBack() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let path = test.path
        test.store.beforeCommit = { try FileManager.default.removeItem(atPath: path) }
        #expect(throws: ChatStoreError.fileGone(path: test.path, reason: "it was deleted or moved away")) {
            try test.store.apply([.createChat(id: "b", title: "B", createdAt: 0)])
        }
        test.store.beforeCommit = nil
        // Rolled back, not committed into the unlinked file: the store still has the one chat.
        #expect(try test.store.chatCount() == 1)
    }
}
