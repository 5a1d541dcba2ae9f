import ChatStore
import Foundation
import JSONCodec
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The database file under an operator's hands while the daemon runs (issue 22).
@Suite struct DatabaseFileTests {
    enum Fault: String, CaseIterable {
        case deleted, replaced, movedAway
    }

    static func apply(_ fault: Fault, to path: String, in directory: TemporaryDirectory) throws {
        switch fault {
        case .deleted:
            try FileManager.default.removeItem(atPath: path)
        case .replaced:
            let other = directory.path("other.sqlite")
            let store = try ChatDatabase(path: other)
            try store.apply(.createChat(id: "other", title: "O", createdAt: 0))
            try store.checkpoint(truncate: true)
            #expect(rename(other, path) == 0)
        case .movedAway:
            #expect(rename(path, directory.path("moved.sqlite")) == 0)
        }
    }

    @Test(arguments: Fault.allCases)
    func writesStopWithAClearErrorAndTheExitStatusSaysSo(fault: Fault) throws {
        let daemon = try Daemon()
        for index in 0..<3 {
            try daemon.call("chat.create", ["chat": .string("c\(index)"), "title": "C", "createdAt": .integer(Int64(index))])
        }
        try Self.apply(fault, to: daemon.databasePath, in: daemon.directory)
        for index in 0..<3 {
            let refused = try daemon.request("chat.create", ["chat": .string("after\(index)"), "title": "A"]).failure
            #expect(refused?.code == -32006, "\(String(describing: refused))")
            #expect(refused?.message.contains("was removed while open") == true, "\(String(describing: refused))")
        }
        // Reads are still served, from what was acknowledged.
        #expect(try daemon.call("chats.list")["total"] == 3)
        #expect(try daemon.shutDown() == .exited(1))
        let stderr = daemon.stderr
        #expect(stderr.contains("the database file is gone"), "\(stderr)")
        #expect(stderr.contains("chatfeedd: error: database '\(daemon.databasePath)' was removed while open"), "\(stderr)")
        #expect(daemon.malformed.isEmpty)
    }

    @Test func aFileDeletedWithoutALaterWriteStillEndsWithAnError() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "c", "title": "C", "createdAt": 0])
        try FileManager.default.removeItem(atPath: daemon.databasePath)
        #expect(try daemon.shutDown() == .exited(1))
        #expect(daemon.stderr.contains("deleted or moved away"), "\(daemon.stderr)")
    }

    @Test func theDaemonTurnsOffSQLitesMemoryStatisticsBeforeItsFirstUse() throws {
        let daemon = try Daemon(extraArguments: ["--log-level", "debug"])
        try daemon.call("chat.create", ["chat": "c", "title": "C", "createdAt": 0])
        #expect(try daemon.shutDown() == .exited(0))
        #expect(daemon.stderr.contains("SQLite's memory statistics are off"), "\(daemon.stderr)")
    }

    @Test func aDaemonWhoseFileStaysEndsWithStatusZero() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "c", "title": "C", "createdAt": 0])
        #expect(try daemon.shutDown() == .exited(0))
        #expect(!daemon.stderr.contains("gone"))
    }

    /// A configuration whose change-log reader row is due every 50 ms (a quarter of the timeout).
    static let shortReaderTimeout = #"{"changeLogReaderTimeoutMilliseconds": 200}"#

    /// A figure of the daemon's closing log line (`watcherWakes`, `watcherThreadWakes`).
    static func closingFigure(_ key: String, in stderr: String) -> Int? {
        guard let range = stderr.range(of: #"\b"# + key + #"=\d+"#, options: .regularExpression) else { return nil }
        return Int(stderr[range].dropFirst(key.count + 1))
    }

    /// Nothing the daemon does to its files wakes it: its commits, its change-log reader row
    /// (written every 50 ms here, a quarter of the reader timeout), its checkpoints, and the
    /// start-up's quick check, whose connection closes the files after the watcher started (a
    /// file of 3,000 chats without a clean-stop record, so that the check runs and takes a
    /// while). Before 2026-12-06 each start here was woken twice.
    @Test func theDaemonIsNeverWokenByItsOwnWrites() throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try ChatDatabase(path: directory.path("chatfeed.sqlite"))
            _ = try store.apply((0..<3_000).map { .createChat(id: "c\($0)", title: "C", createdAt: Int64($0)) })
            try store.checkpoint(truncate: true)
        }
        let config = try directory.write("chatfeed.json", Self.shortReaderTimeout)
        for start in 0..<5 {
            try? FileManager.default.removeItem(atPath: directory.path("chatfeed.sqlite-cleanstop"))
            let daemon = try Daemon(directory: directory, extraArguments: ["--config", config])
            let mirror = try FeedMirror(daemon: daemon, limit: 20, maxInFlight: 1)
            for index in 0..<30 {
                try daemon.call("message.post", [
                    "chat": .string("c\(index * 97 % 3_000)"), "id": .string("s\(start)m\(index)"), "sender": "ann",
                    "text": "hi", "sentAt": .integer(Int64(10_000 + index)),
                ])
                usleep(20_000)  // 0.6 s of posts: the reader row is written about ten times
            }
            _ = try FeedMirror.settle([mirror], daemon: daemon)
            // The background checkpointer (every second by default) copies the log meanwhile.
            Thread.sleep(forTimeInterval: 1.2)
            #expect(try daemon.shutDown() == .exited(0))
            let wakes = Self.closingFigure("watcherWakes", in: daemon.stderr)
            #expect(wakes == 0, "start \(start): watcherWakes \(wakes.map(String.init) ?? "not logged")")
        }
    }

    /// A process that keeps its connection open (another server on the file, not the CLI, whose
    /// close is an event of its own): each of its commits reaches the subscriber at once, not at
    /// the engine's poll a second later (the last write of a commit, its frames, comes before the
    /// commit shows: the watcher looks at the header again), and wakes the daemon once. After
    /// each, the daemon writes its change-log reader row (the reader timeout is short): that
    /// write wakes nothing. Before 2026-12-06: 0.9 s for every commit but the first, and 26–30
    /// wakes for 8 commits.
    @Test func anotherConnectionsCommitsReachTheSubscriberAtOnceAndWakeTheDaemonOnceEach() throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("chatfeed.json", Self.shortReaderTimeout)
        let daemon = try Daemon(directory: directory, extraArguments: ["--config", config])
        try daemon.call("chat.create", ["chat": "c", "title": "C", "createdAt": 0])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
        let other = try ChatDatabase(path: daemon.databasePath)
        let commits = 8
        var slowest = 0.0
        for index in 0..<commits {
            let before = daemon.notificationCount
            try other.apply(.createChat(id: "other\(index)", title: "O", createdAt: Int64(1_000 + index)))
            let committed = Date()
            try daemon.waitForNotifications(beyond: before)
            slowest = max(slowest, Date().timeIntervalSince(committed))
            usleep(100_000)  // past a quarter of the reader timeout: the next catch-up writes the row
        }
        #expect(slowest < 0.5, "a commit reached the subscriber \(Int(slowest * 1000)) ms after it ended")
        // A burst: commits faster than the daemon reacts. The last one's frames may wake the
        // watcher while the daemon has not yet looked at the one before; it still shows at once.
        let burst = 3
        let beforeBurst = daemon.notificationCount
        for index in 0..<burst {
            try other.apply(.createChat(id: "burst\(index)", title: "B", createdAt: Int64(2_000 + index)))
        }
        let lastCommitted = Date()
        // The whole burst is shown once a notification counts every chat.
        func shown() -> Bool {
            daemon.notifications(from: beforeBurst).contains { $0["params"]?["total"]?.int64Value == Int64(1 + commits + burst) }
        }
        while !shown() && Date().timeIntervalSince(lastCommitted) < 5 { usleep(1_000) }
        let burstDelay = Date().timeIntervalSince(lastCommitted)
        #expect(burstDelay < 0.5, "the burst's last commit reached the subscriber \(Int(burstDelay * 1000)) ms after it ended")
        _ = try FeedMirror.settle([mirror], daemon: daemon)
        #expect(mirror.rows.count == commits + burst + 1)
        #expect(try daemon.shutDown() == .exited(0))
        let wakes = Self.closingFigure("watcherWakes", in: daemon.stderr)
        #expect(wakes.map { (commits + 1...commits + burst + 2).contains($0) } == true, "watcherWakes \(wakes.map(String.init) ?? "not logged") for \(commits) commits and a burst of \(burst)")
    }

    @Test func theDaemonIsNotWokenByItsOwnWritesButIsByAnotherProcesss() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "c", "title": "C", "createdAt": 0])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
        // One commit per write: each one writes the -wal file that the watcher sees.
        for index in 0..<60 {
            try daemon.call("message.post", [
                "chat": "c", "id": .string("m\(index)"), "sender": "ann", "text": "hi", "sentAt": .integer(Int64(index)),
            ])
        }
        _ = try FeedMirror.settle([mirror], daemon: daemon)
        // Another process's write (another connection) reaches the subscriber with no request
        // to the daemon in between: only the watcher can have woken it.
        let before = daemon.notificationCount
        try ChatDatabase(path: daemon.databasePath).apply(.createChat(id: "other", title: "O", createdAt: 1_000))
        try daemon.waitForNotifications(beyond: before)
        _ = try FeedMirror.settle([mirror], daemon: daemon)
        #expect(mirror.rows.first?.id == "other")
        #expect(try daemon.shutDown() == .exited(0))
        let wakes = Self.closingFigure("watcherWakes", in: daemon.stderr)
        // The foreign commit (its writes may reach the watcher in two reads), nothing of the
        // daemon's own.
        #expect(wakes.map { (1...2).contains($0) } == true, "watcherWakes \(wakes.map(String.init) ?? "not logged")")
        // The 60 commits and their checkpoints are not even watched: the watcher's thread woke
        // for the other process's write and the daemon's start and stop, not once a commit.
        let threadWakes = Self.closingFigure("watcherThreadWakes", in: daemon.stderr)
        #expect(threadWakes.map { (1...12).contains($0) } == true, "watcherThreadWakes \(threadWakes.map(String.init) ?? "not logged")")
    }
}
