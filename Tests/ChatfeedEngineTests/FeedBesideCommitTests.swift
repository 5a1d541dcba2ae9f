import ChatfeedEngine
import ChatModel
import ChatStore
import Foundation
import JSONCodec
import Synchronization
import Testing
import TestSupport

/// A group's feed work beside the next group's statements (docs/DECISIONS.md): random
/// multi-user writes sent in bursts (one input each, groups of at most three writes, so that
/// the groups of a burst commit one after another, each beside the feed work of the one
/// before), subscribers that ack as notifications (the batches their acks release are made
/// beside the next group too), windows whose entering rows read their content (on the second
/// connection, beside), every batch applied in `UIKitBatchModel`, and at each checkpoint every
/// mirror equal to its user's list in the database. The same streams with the feed work on the
/// engine thread give the same lists; with it beside, the engine takes that path.
@Suite(.serialized) struct FeedBesideCommitTests {
    /// Counts the feed work that ran beside a group's statements.
    final class BesideCounter: EngineObserver, Sendable {
        private let count = Atomic<Int>(0)
        var ran: Int { count.load(ordering: .relaxed) }
        func groupCommitted(writes: Int, duration: Duration) {}
        func feedWorkRanBeside(duration: Duration) { count.add(1, ordering: .relaxed) }
    }

    /// An engine on `path` whose groups hold at most three writes, with every group's feed work
    /// beside its statements (`beside`) or all of it on the engine thread, and the counter of the
    /// feed work that ran beside.
    static func engine(_ path: String, durability: StoreOptions.Durability, beside: Bool) throws -> (ChatEngine, BesideCounter) {
        var options = EngineOptions(databasePath: path, store: StoreOptions(durability: durability), groupCommitMaxEvents: 3)
        options.feedWorkBesideMinimumWrites = beside ? 1 : nil
        let engine = try ChatEngine(options: options)
        let counter = BesideCounter()
        engine.observer = counter
        return (engine, counter)
    }

    @Test(arguments: [(3 as UInt64, StoreOptions.Durability.normal), (41, .full), (1999, .full)], [true, false])
    func burstsReachEveryListAsOnOneThread(run: (seed: UInt64, durability: StoreOptions.Durability), beside: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("beside.sqlite")
        let (engine, counter) = try Self.engine(path, durability: run.durability, beside: beside)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        for user in MultiUserFeedTests.users where user != "me" {
            _ = try await backend.result("user.create", ["user": .string(user)])
        }
        var writes = MultiUserFeedTests.Writes(random: SeededGenerator(seed: run.seed))
        for chat in MultiUserFeedTests.chats.prefix(4) {
            _ = try await backend.call("chat.create", [
                "chat": .string(chat), "title": "T", "createdAt": 10,
                "members": .array(writes.someUsers().map(JSONValue.string)),
            ])
        }
        // (user, view, limit, maxInFlight, ackEvery, acks as notifications)
        let subscriptions: [(String, ChatListView, Int?, Int, Int, Bool)] = [
            ("ann", .main, 2, 1, 1, true), ("ann", ChatListView(list: .archive), nil, 1, 1, true),
            ("bob", ChatListView(list: .main, unreadOnly: true), nil, 1, 2, true), ("bob", .main, 3, 0, 1, false),
            ("zoë", ChatListView(list: .archive), nil, 2, 1, true), ("me", .main, nil, 1, 3, false),
        ]
        var mirrors: [MultiUserFeedTests.Mirror] = []
        for (user, view, limit, maxInFlight, ackEvery, notifying) in subscriptions {
            let mirror = MultiUserFeedTests.Mirror(
                SessionClient(engine.openInProcessSession()), user: user, view: view, limit: limit,
                maxInFlight: maxInFlight, ackEvery: ackEvery)
            mirror.acksAsNotifications = notifying
            try await mirror.subscribe()
            mirrors.append(mirror)
        }
        let reader = try ChatDatabase(path: path, options: StoreOptions(readOnly: true))
        var random = SeededGenerator(seed: run.seed &+ 7)
        var refused = 0
        for burst in 1...60 {
            let requests = (0..<Int.random(in: 4...16, using: &random)).map { _ in writes.next() }
            for response in try await backend.callAll(requests.map { (method: $0.0, params: $0.1) }) {
                guard let error = response["error"] else { continue }
                refused += 1
                #expect(error["code"] != .integer(-32603), "\(error)")
            }
            // Some mirrors read (and ack) between bursts, the others let batches wait.
            for mirror in mirrors where Bool.random(using: &random) { try await mirror.sync() }
            guard burst % 15 == 0 else { continue }
            // Every ack sent is taken (those sent as notifications too, kept as feed work).
            let stats = try await backend.result("server.stats")
            let acked = Dictionary(uniqueKeysWithValues: (stats["subscriptions"]?.arrayValue ?? []).map {
                ($0["subscription"]?.stringValue ?? "", $0["lastAckedSeq"]?.int64Value ?? -1)
            })
            for mirror in mirrors {
                #expect(acked[mirror.subscription] == mirror.lastAcked, "\(mirror.description) after burst \(burst)")
            }
            for mirror in mirrors {
                try await mirror.settle()
                let expected = try MultiUserFeedTests.expected(reader, user: mirror.user, view: mirror.view, limit: mirror.limit)
                #expect(mirror.rows == expected.rows, "\(mirror.description) after burst \(burst): \(mirror.rows.map(\.id)) vs \(expected.rows.map(\.id))")
                #expect(mirror.total == expected.total, "\(mirror.description) total after burst \(burst)")
                #expect(mirror.unread == expected.unread, "\(mirror.description) unread after burst \(burst)")
            }
        }
        #expect(refused < 400)
        #expect(mirrors.map(\.notifications).reduce(0, +) > 100)
        if beside {
            #expect(counter.ran > 50, "the feed work ran beside a group's statements \(counter.ran) times")
        } else {
            #expect(counter.ran == 0)
        }
    }

    /// Posts to chats a window's user never saw: each group of posts is caught up on from its
    /// writes, which reads each posted chat's title from the store (the lists hold no content
    /// of chats not shown) — beside the next group's statements, on the second connection. The
    /// window's rows come whole.
    @Test(arguments: [true, false])
    func aWindowsEnteringRowsReadTheirContentBeside(beside: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("window.sqlite")
        let (engine, counter) = try Self.engine(path, durability: .full, beside: beside)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        for user in ["ann", "bob"] { _ = try await backend.result("user.create", ["user": .string(user)]) }
        let chats = (0..<60).map { "c\($0)" }
        _ = try await backend.callAll(chats.enumerated().map { offset, chat in
            (method: "chat.create", params: [
                "chat": .string(chat), "title": .string("title of \(chat)"), "createdAt": .integer(Int64(offset)),
                "members": ["ann", "bob"],
            ])
        })
        let window = MultiUserFeedTests.Mirror(
            SessionClient(engine.openInProcessSession()), user: "ann", view: .main, limit: 3, maxInFlight: 1, ackEvery: 1)
        window.acksAsNotifications = true
        try await window.subscribe()
        let reader = try ChatDatabase(path: path, options: StoreOptions(readOnly: true))
        var random = SeededGenerator(seed: 60)
        var message = 0
        for burst in 1...40 {
            let posts = (0..<Int.random(in: 4...12, using: &random)).map { _ -> (method: String, params: JSONObject) in
                message += 1
                return ("message.post", [
                    "chat": .string(chats[Int.random(in: 0..<chats.count, using: &random)]), "id": .string("m\(message)"),
                    "sender": .string(Bool.random(using: &random) ? "ann" : "bob"), "text": "hi", "sentAt": .integer(Int64(1000 + message)),
                ])
            }
            for response in try await backend.callAll(posts) { #expect(response["result"] != nil, "\(response)") }
            try await window.sync()
            guard burst % 10 == 0 else { continue }
            try await window.settle()
            let expected = try MultiUserFeedTests.expected(reader, user: "ann", view: .main, limit: 3)
            #expect(window.rows == expected.rows, "after burst \(burst): \(window.rows) vs \(expected.rows)")
            #expect(window.unread == expected.unread)
        }
        #expect(window.notifications > 20)
        #expect(beside ? counter.ran > 40 : counter.ran == 0, "the feed work ran beside \(counter.ran) times")
    }
}
