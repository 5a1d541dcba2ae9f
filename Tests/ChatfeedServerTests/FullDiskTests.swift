import ChatStore
import Foundation
import JSONCodec
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A nearly full disk (issue 22): the write-ahead log never takes the room a checkpoint needs,
/// writes come back once some space is freed, and a daemon starts and serves reads on a full disk
/// and writes again, without a restart, once space is freed.
@Suite struct FullDiskTests {
    static func post(_ daemon: Daemon, chat: String, id: String, at sentAt: Int64, text: String) -> JSONValue {
        daemon.post("message.post", [
            "chat": .string(chat), "id": .string(id), "sender": "ann", "text": .string(text), "sentAt": .integer(sentAt),
        ])
    }

    /// Posts large messages until the disk is full; returns how many were accepted.
    static func fill(_ daemon: Daemon, prefix: String) throws -> (posted: Int, failure: RPCFailure?) {
        let text = String(repeating: "x", count: 4000)
        var posted = 0
        var failure: RPCFailure?
        while failure == nil && posted < 4_000 {
            let ids = (0..<50).map { post(daemon, chat: "big", id: "\(prefix)\(posted + $0)", at: Int64(posted + $0), text: text) }
            for id in ids {
                switch try daemon.reply(to: id) {
                case .result: posted += 1
                case .error(let error): failure = failure ?? error
                }
            }
        }
        return (posted, failure)
    }

    @Test(.enabled(if: SmallFileSystem.canMount, "mounts an 8 MiB tmpfs, which needs root (CI runs as root)"), .hangGuard)
    func theLogStaysSmallWritesComeBackAndAFullDiskStillServesReads() throws {
        let disk = try SmallFileSystem(sizeMiB: 8)
        let filler = disk.path("filler")
        try Data(count: 2 << 20).write(to: URL(fileURLWithPath: filler))
        let daemon = try Daemon(directory: disk.directory, database: "fs/chatfeed.sqlite")
        try daemon.call("chat.create", ["chat": "big", "title": "B", "createdAt": 0])
        try daemon.call("chat.create", ["chat": "other", "title": "O", "createdAt": 0])
        let (posted, failure) = try Self.fill(daemon, prefix: "a")
        #expect(failure?.code == -32004 && failure?.message.hasPrefix("storage full") == true, "\(String(describing: failure)) after \(posted) posts")
        // The data went to the database file; the log kept to what the disk could take back.
        let (database, log) = (disk.size("chatfeed.sqlite"), disk.size("chatfeed.sqlite-wal"))
        #expect(log <= 2 << 20 && database >= 3 << 20, "database \(database) B, -wal \(log) B")

        // 2 MiB freed: writes come back.
        try FileManager.default.removeItem(atPath: filler)
        let ids = (0..<200).map { Self.post(daemon, chat: "other", id: "o\($0)", at: Int64($0), text: "short") }
        let accepted = try ids.filter { try daemon.reply(to: $0).failure == nil }.count
        #expect(accepted == ids.count, "\(accepted) of \(ids.count) posts accepted after freeing 2 MiB")

        // Full again, then a restart on the full disk: reads are served, writes are storage full.
        _ = try Self.fill(daemon, prefix: "b")
        #expect(try daemon.shutDown() == .exited(0))
        // The final checkpoint may have freed a little: fill the disk to the last byte.
        disk.fill("filler-at-restart")
        let restarted = try Daemon(directory: disk.directory, database: "fs/chatfeed.sqlite")
        #expect(try restarted.call("chats.list")["total"] == 2)
        let refused = try restarted.request("chat.create", ["chat": "new", "title": "N"]).failure
        #expect(refused?.code == -32004, "\(String(describing: refused))")

        // Space freed: without a restart, another process's write reaches the daemon's
        // subscription, and the daemon writes again.
        _ = try restarted.call("feed.subscribe", [:])
        let seen = restarted.notificationCount
        try disk.resize(sizeMiB: 16)
        let other = try ChatDatabase(path: disk.path("chatfeed.sqlite"))
        _ = try other.apply(.createChat(id: "from-another-process", title: "A", createdAt: 50))
        try restarted.waitForNotifications(beyond: seen, timeout: 30)
        #expect(restarted.notifications(from: seen).contains { "\($0)".contains("from-another-process") })
        var answer: RPCFailure? = nil
        for _ in 0..<50 {
            answer = try restarted.request("chat.create", ["chat": "new", "title": "N"]).failure
            if answer == nil { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(answer == nil, "still refused after freeing the space: \(String(describing: answer))")
        #expect(try restarted.call("chats.list")["total"] == 4)
        #expect(try restarted.shutDown() == .exited(0))
    }

    @Test(.hangGuard)
    func maxDatabaseMiBCountsTheLog() throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("config.json", #"{"maxDatabaseMiB": 4}"#)
        let daemon = try Daemon(directory: directory, extraArguments: ["--config", config])
        try daemon.call("chat.create", ["chat": "big", "title": "B", "createdAt": 0])
        var largest = 0
        var failure: RPCFailure?
        for round in 0..<40 where failure == nil {
            let text = String(repeating: "x", count: 4000)
            let ids = (0..<50).map { Self.post(daemon, chat: "big", id: "m\(round)-\($0)", at: Int64($0), text: text) }
            for id in ids { if let refused = try daemon.reply(to: id).failure { failure = failure ?? refused } }
            let sizes = ["", "-wal"].map {
                (try? FileManager.default.attributesOfItem(atPath: daemon.databasePath + $0)[.size] as? Int) ?? 0
            }
            largest = max(largest, sizes.reduce(0, +))
        }
        #expect(failure?.code == -32004, "\(String(describing: failure))")
        // The limit, the quarter of it that the log keeps between checkpoints, and what one group
        // of writes adds before the sizes are checked again (issue 22 measured 25.8 MB of log).
        #expect(largest <= 6 << 20, "database and -wal reached \(largest) B beside a 4 MiB limit")
        #expect(try daemon.shutDown() == .exited(0))
    }
}
