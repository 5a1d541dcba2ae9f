import ChatModel
import ChatStore
import Foundation
import SQLite
import Synchronization
import TestSupport
import Testing

/// The background checkpointer and the writer's automatic checkpoint: what reaches the database
/// file, observed by its size (the log's pages land there only through a checkpoint).
@Suite struct CheckpointTests {
    /// A WAL database written by `writer`, which never checkpoints on its own (its automatic
    /// checkpoint off), with `rows` rows of 3,000 bytes: about one page each in the log.
    static func writeRows(_ rows: Range<Int>, to writer: Database) throws {
        try writer.execute("BEGIN")
        for row in rows {
            try writer.execute("INSERT INTO filler (body) VALUES (randomblob(3000)) -- \(row)")
        }
        try writer.execute("COMMIT")
    }

    static func makeWriter(at path: String) throws -> Database {
        let writer = try Database(path: path)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB)")
        return writer
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    /// SQLite before 3.41 checkpoints nothing on a connection that has not read yet, and says
    /// it succeeded: the background checkpointer's connection is one (it only checkpoints).
    @Test func aCheckpointOnAConnectionThatHasNotReadCopiesTheLog() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let writer = try Self.makeWriter(at: path)
        try Self.writeRows(0..<50, to: writer)
        let before = Self.fileSize(path)

        let checkpointer = try Database(path: path, mode: .init(create: false))
        let progress = try #require(try checkpointer.checkpoint(.passive))
        #expect(progress.logFrames >= 50)
        #expect(progress.isComplete)
        #expect(Self.fileSize(path) >= before + 50 * 3000)
        // The database is not in WAL mode: no log to checkpoint.
        let rollback = try Database(path: directory.path("rollback.sqlite"))
        try rollback.execute("CREATE TABLE t (x)")
        #expect(try rollback.checkpoint(.passive) == nil)
    }

    @Test func theBackgroundCheckpointerCopiesTheLogAfterACommit() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let writer = try Self.makeWriter(at: path)
        let checkpointer = try BackgroundCheckpointer(path: path, busyTimeoutMilliseconds: 1000, interval: 0.02)
        defer { checkpointer.stop() }
        let before = Self.fileSize(path)
        try Self.writeRows(0..<50, to: writer)
        #expect(Self.fileSize(path) == before)
        checkpointer.commitHappened()
        #expect(Self.eventually { Self.fileSize(path) >= before + 50 * 3000 })
    }

    /// Past `earlyPages` the checkpointer does not wait for its interval (a minute here); below
    /// it, it does.
    @Test func aLogPastTheEarlyPointIsCopiedAtOnce() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let writer = try Self.makeWriter(at: path)
        let checkpointer = try BackgroundCheckpointer(
            path: path, busyTimeoutMilliseconds: 1000, interval: 60, earlyPages: 40)
        defer { checkpointer.stop() }
        let reported = Mutex<[Int]>([])
        writer.checkpointAutomatically(atPages: 0) { frames in
            reported.withLock { $0.append(frames) }
            checkpointer.logSizeAfterCommit(frames)
        }
        let before = Self.fileSize(path)
        try Self.writeRows(0..<10, to: writer)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(Self.fileSize(path) == before, "below the early point the interval holds")
        try Self.writeRows(10..<60, to: writer)
        #expect(Self.eventually { Self.fileSize(path) >= before + 60 * 3000 })
        let frames = reported.withLock { $0 }
        #expect(frames.count == 2 && frames[0] >= 10 && frames[1] >= 60, "\(frames)")
    }

    /// The hook keeps the automatic checkpoint where it was set, and hears every commit.
    @Test func theWritersAutomaticCheckpointStaysAtItsPointWithTheHook() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let writer = try Self.makeWriter(at: path)
        let reported = Mutex<[Int]>([])
        writer.checkpointAutomatically(atPages: 30) { frames in reported.withLock { $0.append(frames) } }
        let before = Self.fileSize(path)
        try Self.writeRows(0..<10, to: writer)
        #expect(Self.fileSize(path) == before)
        try Self.writeRows(10..<40, to: writer)
        #expect(Self.fileSize(path) >= before + 40 * 3000, "the commit past 30 pages checkpointed")
        // The log started over: the next commit reports a small log.
        try Self.writeRows(40..<41, to: writer)
        let frames = reported.withLock { $0 }
        #expect(frames.count == 3 && frames[1] >= 40 && frames[2] < 10, "\(frames)")
    }

    /// A store reports its log's size after each commit, and keeps the automatic checkpoint it
    /// was opened with.
    @Test func aStoreReportsItsLogSizeAfterEachCommit() throws {
        let test = try TestStore(options: StoreOptions(durability: .normal, autoCheckpointPages: 5_000))
        #expect(test.store.autoCheckpointPages == 5_000)
        let reported = Mutex<[Int]>([])
        test.store.reportLogSize { frames in reported.withLock { $0.append(frames) } }
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try test.store.apply(message("m1", in: "a", at: 1))
        let frames = reported.withLock { $0 }
        #expect(frames.count == 2 && frames[0] > 0 && frames[1] > frames[0], "\(frames)")
        #expect(test.store.autoCheckpointPages == 5_000)
    }
}
