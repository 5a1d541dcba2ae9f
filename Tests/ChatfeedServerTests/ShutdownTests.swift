import ChatModel
import Foundation
import JSONCodec
import TestSupport
import Testing
import WireProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Each way the daemon ends — end of stdin, SIGTERM, SIGINT, a closed stdout — is graceful:
/// exit status 0, what it accepted committed, the responses of what it committed flushed.
@Suite struct ShutdownTests {
    /// The chats in the database file, read by a fresh daemon (which also checks that start-up
    /// loads the list from the store).
    static func chatsInStore(_ directory: TemporaryDirectory) throws -> (ids: [String], stats: JSONValue) {
        let fresh = try Daemon(directory: directory)
        let list = try fresh.call("chats.list", ["limit": 10_000])
        let stats = try fresh.call("server.stats")
        #expect(try fresh.shutDown() == .exited(0))
        return ((list["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }, stats)
    }

    /// A burst of `count` chat creations (with a message each) as one write; returns the ids of
    /// the requests by chat.
    static func sendBurst(_ daemon: Daemon, prefix: String, count: Int) -> [(chat: String, create: JSONValue, post: JSONValue)] {
        var bytes: [UInt8] = []
        var sent: [(String, JSONValue, JSONValue)] = []
        for index in 0..<count {
            let chat = "\(prefix)\(index)"
            let create = daemon.makeID()
            let post = daemon.makeID()
            bytes += Daemon.line(id: create, method: "chat.create", params: ["chat": .string(chat), "title": "T", "createdAt": .integer(index)])
            bytes += Daemon.line(id: post, method: "message.post", params: [
                "chat": .string(chat), "id": .string("m-\(chat)"), "sender": "ann", "text": "hi", "sentAt": .integer(10_000 + index),
            ])
            sent.append((chat, create, post))
        }
        daemon.send(raw: bytes)
        return sent
    }

    @Test func endOfInputCommitsWhatWasSentJustBefore() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "first", "title": "First", "createdAt": 1])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
        // 2,400 writes in one go: more than one group commit (at most 1,000 writes each).
        let sent = Self.sendBurst(daemon, prefix: "eof", count: 1_200)
        // The last line has no newline: end of input ends it.
        daemon.send(raw: Array(#"{"jsonrpc":"2.0","id":"last","method":"chat.create","params":{"chat":"zlast","title":"L","createdAt":2}}"#.utf8))
        daemon.closeStdin()
        #expect(try daemon.waitForExit() == .exited(0))
        try daemon.waitForEndOfOutput()
        // Every write was answered, successfully, before the exit.
        for write in sent {
            #expect(try daemon.reply(to: write.create, timeout: 1).failure == nil)
            #expect(try daemon.reply(to: write.post, timeout: 1).result == ["duplicate": false])
        }
        #expect(try daemon.reply(to: "last", timeout: 1).result?["id"] == "zlast")
        // The subscriber saw all of it.
        try mirror.catchUp(daemon)
        #expect(mirror.rows.count == 1_202)

        // The CLI finds everything in the file.
        let outcome = try BuiltExecutable.run("chatfeed", ["stats", "--json", "--database", daemon.databasePath])
        #expect(outcome.status == .exited(0), "\(outcome.stderr)")
        let stats = try JSONValue(parsing: outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(stats["chats"] == 1_202 && stats["messages"] == 1_200, "\(stats)")
        let (ids, _) = try Self.chatsInStore(daemon.directory)
        #expect(ids == mirror.rows.map(\.id))
        #expect(daemon.malformed.isEmpty)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalShutsDownGracefully(signal: Int32) throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "first", "title": "First", "createdAt": 1])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
        let sent = Self.sendBurst(daemon, prefix: "sig", count: 400)
        daemon.signal(signal)
        #expect(try daemon.waitForExit() == .exited(0), "after signal \(signal)")
        try daemon.waitForEndOfOutput()

        // What was answered is committed; what is committed was answered; and it is a prefix of
        // what was sent (nothing skipped).
        let answered = Set(sent.compactMap { write -> String? in
            guard let reply = try? daemon.reply(to: write.create, timeout: 0.01), reply.failure == nil else { return nil }
            return write.chat
        })
        for response in daemon.responses {
            #expect(response["error"] == nil, "an error response during shutdown: \(response)")
        }
        let (ids, stats) = try Self.chatsInStore(daemon.directory)
        let stored = Set(ids).subtracting(["first"])
        #expect(stored == answered, "signal \(signal): \(stored.count) chats stored, \(answered.count) creations answered")
        let prefix = Set(sent.prefix(stored.count).map(\.chat))
        #expect(stored == prefix, "signal \(signal): the stored chats are not the first \(stored.count) sent")
        // A chat and its message travel together unless the shutdown fell between them.
        #expect(abs((stats["messages"]?.int64Value ?? -1) - Int64(stored.count)) <= 1, "\(stats)")
        try mirror.catchUp(daemon)
        #expect(mirror.rows.map(\.id) == ids, "the subscriber saw every committed write before the exit")
        #expect(daemon.malformed.isEmpty)
    }

    /// A client that stops reading stdout fills the pipe and blocks the daemon's writes; a
    /// SIGTERM then still ends it gracefully — everything it took answered, exit 0 — once the
    /// client reads again. (The pauses only make the scenario likely; nothing is timed.)
    @Test func aSignalWhileStdoutIsBlockedEndsGracefullyOnceTheClientReads() throws {
        let daemon = try Daemon()
        let title = String(repeating: "x", count: 2_000)
        try daemon.call("chat.create", ["chat": "a", "title": .string(title), "createdAt": 1])
        daemon.setReadingPaused(true)
        var reads: [JSONValue] = []
        for _ in 0..<200 { reads.append(daemon.post("chats.list")) }  // ~400 KB of responses
        let writes = (0..<50).map { index in
            (chat: "w\(index)", id: daemon.post("chat.create", ["chat": .string("w\(index)"), "title": "W", "createdAt": .integer(10 + index)]))
        }
        usleep(300_000)
        daemon.signal(SIGTERM)
        usleep(300_000)
        daemon.setReadingPaused(false)
        #expect(try daemon.waitForExit() == .exited(0))
        try daemon.waitForEndOfOutput()
        for id in reads {
            if let reply = try? daemon.reply(to: id, timeout: 0.01) {
                #expect(reply.result?["items"]?.arrayValue?.first?["title"] == .string(title))
            }
        }
        let answered = Set(writes.compactMap { write in
            (try? daemon.reply(to: write.id, timeout: 0.01))?.result != nil ? write.chat : nil
        })
        let (ids, _) = try Self.chatsInStore(daemon.directory)
        #expect(Set(ids).subtracting(["a"]) == answered, "what is stored was answered, and the reverse")
        #expect(daemon.malformed.isEmpty)
    }

    /// A client that never reads again cannot hold the daemon: after a SIGTERM it gives the
    /// reader a short grace, then exits 0 — with every write it had read committed, in order.
    @Test func aSignalWhileTheClientNeverReadsAgainStillEndsTheDaemon() throws {
        let daemon = try Daemon()
        daemon.setReadingPaused(true)
        // ~300 KB of requests: they fit in the pipe and the daemon's input queue, so this test never
        // blocks on its own writes, while the ~1 KB responses fill the unread stdout pipe.
        let title = String(repeating: "y", count: 1_000)
        for index in 0..<300 {
            _ = daemon.post("chat.create", ["chat": .string("n\(index)"), "title": .string(title), "createdAt": .integer(Int64(index))])
        }
        usleep(500_000)
        daemon.signal(SIGTERM)
        #expect(try daemon.waitForExit() == .exited(0))
        let (ids, _) = try Self.chatsInStore(daemon.directory)
        #expect(Set(ids) == Set((0..<300).map { "n\($0)" }), "every write it read is committed")
    }

    /// An idle daemon notices a closed stdout on its own, without a request to answer.
    @Test func aClosedStdoutEndsAnIdleDaemon() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "kept", "title": "T", "createdAt": 1])
        daemon.closeStdout()
        #expect(try daemon.waitForExit() == .exited(0))
        #expect(try Self.chatsInStore(daemon.directory).ids == ["kept"])
    }

    @Test func aClosedStdoutEndsTheDaemonCleanly() throws {
        let daemon = try Daemon()
        for index in 0..<5 {
            try daemon.call("chat.create", ["chat": .string("before\(index)"), "title": "T", "createdAt": .integer(index)])
        }
        _ = try FeedMirror(daemon: daemon, maxInFlight: 0)
        daemon.closeStdout()
        // The daemon learns that stdout is gone when it next writes: send it more requests.
        var sent: [String] = []
        for index in 0..<200 {
            let chat = "after\(index)"
            guard daemon.send(line: #"{"jsonrpc":"2.0","id":\#(index),"method":"chat.create","params":{"chat":"\#(chat)","title":"T","createdAt":\#(100 + index)}}"#) else { break }
            sent.append(chat)
            if !daemon.isRunning { break }
            if index % 20 == 19 { usleep(5_000) }
        }
        #expect(try daemon.waitForExit() == .exited(0))
        let (ids, _) = try Self.chatsInStore(daemon.directory)
        let stored = Set(ids)
        #expect(stored.isSuperset(of: (0..<5).map { "before\($0)" }), "accepted before the close: \(ids)")
        let after = stored.filter { $0.hasPrefix("after") }
        #expect(!after.isEmpty, "the first request after the close was read and committed")
        #expect(after == Set(sent.prefix(after.count)), "the committed requests are a prefix of those sent")
        #expect(daemon.stderr.contains("stdout closed"), "\(daemon.stderr)")
    }
}

extension ShutdownTests {
    /// With nothing more on stdin, a feed batch caused by another process's write is what finds
    /// the closed stdout: the daemon still ends cleanly.
    @Test func aClosedStdoutFoundByAFeedBatchEndsTheDaemon() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 1])
        _ = try FeedMirror(daemon: daemon, maxInFlight: 0)
        daemon.closeStdout()
        let outcome = try BuiltExecutable.run("chatfeed", ["chat", "create", "b", "--title", "B", "--at", "2", "--database", daemon.databasePath])
        #expect(outcome.status == .exited(0), "\(outcome.stderr)")
        #expect(try daemon.waitForExit() == .exited(0))
        let (ids, _) = try Self.chatsInStore(daemon.directory)
        #expect(ids == ["b", "a"])
    }
}

/// Writes by another process (the CLI) on the same database file reach subscribers.
@Suite struct OtherWriterTests {
    /// Catches the mirrors up (acking) until `condition` holds, within `timeout`.
    static func waitUntil(
        _ mirrors: [FeedMirror], daemon: Daemon, timeout: TimeInterval = 20, _ what: String, _ condition: () -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let seen = daemon.notificationCount
            for mirror in mirrors {
                try mirror.catchUp(daemon)
                if mirror.maxInFlight > 0, mirror.lastSeq > mirror.lastAcked { mirror.ack(daemon, upTo: mirror.lastSeq, asRequest: false) }
            }
            if condition() { return }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw HarnessError("timed out after \(timeout) s waiting until \(what)") }
            try? daemon.waitForNotifications(beyond: seen, timeout: min(left, 0.5))
        }
    }

    @Test func aCLIWriteReachesASubscriber() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 1_000])
        try daemon.call("chat.create", ["chat": "b", "title": "B", "createdAt": 2_000])
        let full = try FeedMirror(daemon: daemon, maxInFlight: 1)
        let window = try FeedMirror(daemon: daemon, limit: 1, maxInFlight: 0)
        let database = ["--database", daemon.databasePath]

        let created = try BuiltExecutable.run("chatfeed", ["chat", "create", "cli", "--title", "From the CLI", "--at", "1500"] + database)
        #expect(created.status == .exited(0), "\(created.stderr)")
        try Self.waitUntil([full, window], daemon: daemon, "the CLI's chat arrives") { full.rows.map(\.id) == ["b", "cli", "a"] }

        let sent = try BuiltExecutable.run("chatfeed", ["send", "a", "--from", "bob", "hello from the CLI", "--id", "cli-1", "--at", "3000"] + database)
        #expect(sent.status == .exited(0), "\(sent.stderr)")
        try Self.waitUntil([full, window], daemon: daemon, "the CLI's message moves a to the top") {
            full.rows.first?.lastMessage?.text == "hello from the CLI" && window.rows.first?.id == "a"
        }
        #expect(full.rows.map(\.id) == ["a", "b", "cli"])

        // The daemon's own writes and the CLI's interleave in one order.
        try daemon.call("chat.rename", ["chat": "cli", "title": "Renamed by the daemon"])
        let read = try BuiltExecutable.run("chatfeed", ["chat", "read", "a"] + database)
        #expect(read.status == .exited(0), "\(read.stderr)")
        try Self.waitUntil([full, window], daemon: daemon, "the CLI's read and the daemon's rename arrive") {
            full.rows.first?.unread == 0 && full.rows.last?.title == "Renamed by the daemon"
        }
        _ = try FeedMirror.settle([full, window], daemon: daemon)
        let items = try (daemon.call("chats.list")["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
        #expect(full.rows == items && window.rows == Array(items.prefix(1)))
        #expect(try daemon.shutDown() == .exited(0))
    }
}

extension OtherWriterTests {
    /// The CLI writes its own chats while stdin carries a random stream: both reach the
    /// subscribers in one order, and at the end the mirrors equal `chats.list`.
    @Test func otherWritersInterleaveWithStdinWrites() throws {
        var random = SeededGenerator(seed: 99)
        let daemon = try Daemon()
        var model = ClientModel()
        for _ in 0..<6 { _ = try daemon.call("chat.create", model.createChat(using: &random).params) }
        let full = try FeedMirror(daemon: daemon, maxInFlight: 1)
        let window = try FeedMirror(daemon: daemon, limit: 5, maxInFlight: 0)

        let base = model.clock
        let database = daemon.databasePath
        let cliDone = LockedBox(false)
        let cliFailures = LockedBox<[String]>([])
        let cliCount = 6
        let writer = Thread {
            for index in 0..<cliCount {
                let chat = "zcli\(index)"
                for arguments in [
                    ["chat", "create", chat, "--title", "CLI \(index)", "--at", "\(base + Int64(index) * 40)"],
                    ["send", chat, "--from", "cli", "from the CLI \(index)", "--id", "cli-m\(index)", "--at", "\(base + Int64(index) * 40 + 20)"],
                ] {
                    do {
                        let outcome = try BuiltExecutable.run("chatfeed", arguments + ["--database", database])
                        if outcome.status != .exited(0) { cliFailures.withLock { $0.append("\(arguments): \(outcome.stderr)") } }
                    } catch {
                        cliFailures.withLock { $0.append("\(arguments): \(error)") }
                    }
                }
            }
            cliDone.withLock { $0 = true }
        }
        writer.start()

        var written = 0
        let deadline = Date(timeIntervalSinceNow: 60)
        while written < 300 || !cliDone.withLock({ $0 }) {
            guard Date() < deadline else { throw HarnessError("the CLI writer did not finish in time") }
            written += try daemon.writeRandomGroup(of: &model, most: 10, using: &random)
            for mirror in [full, window] {
                try mirror.catchUp(daemon)
                if mirror.maxInFlight > 0, mirror.lastSeq > mirror.lastAcked, Bool.random(using: &random) {
                    mirror.ack(daemon, upTo: mirror.lastSeq, asRequest: false)
                }
            }
            if written >= 300 { usleep(10_000) }  // only waiting for the CLI now
        }
        #expect(cliFailures.withLock { $0 }.isEmpty, "\(cliFailures.withLock { $0 })")

        _ = try FeedMirror.settle([full, window], daemon: daemon)
        let items = try (daemon.call("chats.list", ["limit": 10_000])["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
        #expect(full.rows == items)
        #expect(window.rows == Array(items.prefix(5)))
        let fromCLI = items.filter { $0.id.hasPrefix("zcli") }
        #expect(fromCLI.count == cliCount && fromCLI.allSatisfy { $0.lastMessage?.sender == "cli" && $0.unread == 1 })
        var ours = items.filter { !$0.id.hasPrefix("zcli") }
        for index in ours.indices { ours[index].revision = 0 }
        #expect(ours == model.expectedList)
        #expect(try daemon.shutDown() == .exited(0))
    }
}

/// `chats.locate` and `server.stats`.
@Suite struct QueryTests {
    @Test func locateMatchesTheListAndStatsShowTheSubscriptions() throws {
        let daemon = try Daemon()
        // 150 chats: more than one page of chats.list.
        var ids: [JSONValue] = []
        for index in 0..<150 {
            ids.append(daemon.post("chat.create", ["chat": .string("c\(index)"), "title": "T", "createdAt": .integer(index % 37)]))
            if index % 3 == 0 {
                ids.append(daemon.post("message.post", [
                    "chat": .string("c\(index)"), "id": .string("m\(index)"), "sender": "ann", "text": "x", "sentAt": .integer(100 + index % 11),
                ]))
            }
        }
        for id in ids { #expect(try daemon.reply(to: id).failure == nil) }
        var listed: [String] = []
        var offset = 0
        while true {
            let page = try daemon.call("chats.list", ["offset": .integer(offset), "limit": 40])
            let items = page["items"]?.arrayValue ?? []
            #expect(page["total"] == 150)
            if items.isEmpty { break }
            listed += items.compactMap { $0["id"]?.stringValue }
            offset += items.count
        }
        #expect(listed.count == 150 && Set(listed).count == 150)
        #expect(try daemon.call("chats.list")["items"]?.arrayValue?.count == 100, "the default limit is 100")
        let query = listed.reversed() + ["missing", "c7"]
        let located = try daemon.call("chats.locate", ["ids": .array(query.map { .string($0) })])
        #expect(located["total"] == 150)
        for (index, id) in listed.enumerated() {
            #expect(located["indices"]?[id] == .integer(index), "\(id)")
        }
        #expect(located["indices"]?["missing"] == .null)

        let full = try FeedMirror(daemon: daemon, maxInFlight: 3)
        let window = try FeedMirror(daemon: daemon, limit: 10, maxInFlight: 1)
        try daemon.call("message.post", ["chat": "c149", "id": "top", "sender": "bob", "text": "up", "sentAt": 10_000])
        try daemon.call("message.post", ["chat": "c148", "id": "top2", "sender": "bob", "text": "up", "sentAt": 10_001])
        let stats = try daemon.call("server.stats")
        #expect(stats["chats"] == 150 && stats["messages"] == 52, "\(stats)")
        #expect((stats["latestChangeSequence"]?.int64Value ?? 0) > 0)
        let subscriptions = stats["subscriptions"]?.arrayValue ?? []
        #expect(subscriptions.count == 2)
        let byID = Dictionary(subscriptions.compactMap { s in s["subscription"]?.stringValue.map { ($0, s) } }, uniquingKeysWith: { $1 })
        #expect(byID[full.subscription]?["limit"] == .null && byID[full.subscription]?["maxInFlight"] == 3)
        #expect(byID[window.subscription]?["limit"] == 10 && byID[window.subscription]?["maxInFlight"] == 1)
        #expect(byID[window.subscription]?["lastSentSeq"] == 1 && byID[window.subscription]?["lastAckedSeq"] == 0,
                "the window waits for its ack: \(stats)")
        _ = try FeedMirror.settle([full, window], daemon: daemon)
        #expect(try daemon.call("chats.locate", ["ids": ["c148", "c149"]])["indices"] == ["c148": 0, "c149": 1])
        #expect(full.rows.prefix(2).map(\.id) == ["c148", "c149"] && window.rows.prefix(2).map(\.id) == ["c148", "c149"])

        try full.unsubscribe(daemon)
        #expect(try daemon.call("server.stats")["subscriptions"]?.arrayValue?.count == 1)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func messagesListNewestFirstWithPaging() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 0])
        for index in 0..<30 {
            try daemon.call("message.post", [
                "chat": "a", "id": .string("m\(index)"), "sender": "ann", "text": .string("text \(index)"),
                "sentAt": .integer(Int64(1_000 + (index * 7) % 30 * 10)),
            ])
        }
        try daemon.call("message.edit", ["id": "m3", "text": "edited", "editedAt": 99_999])
        try daemon.call("message.delete", ["id": "m4"])
        var seen: [Message] = []
        var cursor: JSONValue?
        repeat {
            var params: JSONObject = ["chat": "a", "limit": 7]
            if let cursor { params.append("cursor", cursor) }
            let result = try daemon.call("messages.list", .object(params))
            seen += try (result["items"]?.arrayValue ?? []).map { try Message(jsonValue: $0) }
            cursor = result["nextCursor"]
        } while cursor != .null
        #expect(seen.count == 29, "every message but the deleted one")
        #expect(seen.map(\.sentAt) == seen.map(\.sentAt).sorted(by: >) && Set(seen.map(\.sentAt)).count == 29)
        #expect(!seen.contains { $0.id == "m4" })
        let edited = seen.first { $0.id == "m3" }
        #expect(edited?.text == "edited" && edited?.editedAt == 99_999 && edited?.chat == "a" && edited?.sender == "ann")
        #expect(seen.first { $0.id == "m5" }?.editedAt == nil)
        #expect(throws: RPCFailure.self) { try daemon.call("messages.list", ["chat": "a", "limit": 0]) }
        #expect(try daemon.shutDown() == .exited(0))
    }
}
