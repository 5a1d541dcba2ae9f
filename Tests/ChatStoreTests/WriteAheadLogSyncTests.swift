import ChatModel
import Foundation
import SQLite
import Synchronization
import TestSupport
import Testing

@testable import ChatStore

/// `StoreOptions.callerSyncsCommits`: the store's commits leave the sync to its owner, who syncs
/// the write-ahead log through `writeAheadLog()` (the engine, on a thread of its own).
@Suite struct WriteAheadLogSyncTests {
    private static func synchronous(_ store: ChatDatabase) throws -> Int? {
        try store.db.cachedStatement("PRAGMA synchronous").fetchValue(Int.self)
    }

    @Test func aStoreWhoseCallerSyncsCommitsWithoutSyncingAndSyncsItsLogOnAnotherThread() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        // FULL (2) unless the caller syncs, or durability is normal: NORMAL (1).
        #expect(try Self.synchronous(ChatDatabase(path: path)) == 2)
        #expect(try Self.synchronous(ChatDatabase(path: path, options: StoreOptions(durability: .normal))) == 1)
        let store = try ChatDatabase(path: path, options: StoreOptions(callerSyncsCommits: true))
        #expect(try Self.synchronous(store) == 1)

        try store.apply(.createChat(id: "a", title: "A", createdAt: 1))
        let log = try #require(store.writeAheadLog())
        #expect(log.path == path + "-wal")
        // The handle is the log's (a header and whole frames), not the database file's (pages).
        let logSize = try log.size()
        #expect(logSize > 0 && logSize == CheckpointTests.fileSize(path + "-wal"))
        #expect((logSize - 32) % (Int64(ChatDatabase.newFilePageSize) + 24) == 0, "\(logSize)")
        // From another thread, while the connection goes on reading.
        let synced = Mutex<Result<Void, SQLiteError>?>(nil)
        let thread = Thread { synced.withLock { $0 = Result { try log.sync() }.mapError { $0 as! SQLiteError } } }
        thread.start()
        for _ in 0..<100 { _ = try store.chatCount() }
        #expect(CheckpointTests.eventually { synced.withLock { $0 != nil } })
        #expect(throws: Never.self) { try synced.withLock { $0 }?.get() }
        // What the store wrote is there for another connection.
        #expect(try ChatDatabase(path: path, options: StoreOptions(readOnly: true)).chatCount() == 1)
    }

    @Test func onlyAConnectionWithItsWriteAheadLogOpenHasOne() throws {
        let directory = try TemporaryDirectory()
        let rollback = try Database(path: directory.path("rollback.sqlite"))
        try rollback.execute("CREATE TABLE t (x)")
        #expect(rollback.writeAheadLogFile() == nil)

        let path = directory.path("db.sqlite")
        _ = try ChatDatabase(path: path)
        #expect(try ChatDatabase(path: path, options: StoreOptions(readOnly: true)).writeAheadLog() == nil)
    }
}
