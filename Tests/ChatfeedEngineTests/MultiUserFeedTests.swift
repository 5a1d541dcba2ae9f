import ChatfeedEngine
import ChatModel
import ChatStore
import Foundation
import JSONCodec
import ListDiff
import Testing
import TestSupport
import WireProtocol

/// Every user's lists live at once (docs/PROTOCOL.md, Users): random multi-user streams through an
/// in-process engine, with several users subscribed at once (whole lists, windows, unread-only,
/// the archive; acks late or never needed). Every notification applies in `UIKitBatchModel`, and at
/// each checkpoint every mirror equals that user's list read from the database by a connection of
/// the test's own, with counters equal to a recount of those rows. One test at a time: each holds
/// an engine (and its inotify descriptor, which `SessionTests` counts) for a while.
@Suite(.serialized) struct MultiUserFeedTests {
    static let users = ["me", "ann", "bob", "zoë", "Ünal"]
    static let chats = ["a", "b", "c", "d", "e", "f", "g"]

    /// One subscription's copy of its list, kept only from what the engine sends.
    final class Mirror {
        let client: SessionClient
        let user: String
        let view: ChatListView
        let limit: Int?
        let maxInFlight: Int
        /// Acks at most every so many syncs (late acks).
        let ackEvery: Int
        /// Sync's acks are notifications (no answer; `settle` still asks for one).
        var acksAsNotifications = false
        var subscription = ""
        var rows: [Chat] = []
        var lastSeq: Int64 = 0
        var lastAcked: Int64 = 0
        var total = 0
        var unread = UnreadCounters()
        var cursor = 0
        var syncs = 0
        var notifications = 0

        init(_ client: SessionClient, user: String, view: ChatListView, limit: Int?, maxInFlight: Int, ackEvery: Int) {
            self.client = client
            self.user = user
            self.view = view
            self.limit = limit
            self.maxInFlight = maxInFlight
            self.ackEvery = ackEvery
        }

        var description: String { "\(subscription) of \(user) (\(view), limit \(limit.map(String.init) ?? "none"), maxInFlight \(maxInFlight))" }

        /// Subscribes, with `known` when resuming.
        func subscribe(known: [Chat]? = nil) async throws {
            var params: JSONObject = ["user": .string(user), "maxInFlight": .integer(maxInFlight)]
            if let limit { params.append("limit", .integer(limit)) }
            if view.list != .main { params.append("list", .string(view.list.rawValue)) }
            if view.unreadOnly { params.append("unreadOnly", true) }
            if let known {
                params.append("known", .array(known.map { .object(["id": .string($0.id), "revision": .integer($0.revision)]) }))
            }
            let result = try FeedSubscribeResult(jsonValue: try await client.result("feed.subscribe", params))
            cursor = client.notifications.count
            subscription = result.subscription
            switch result.content {
            case .items(let items): rows = items
            case .batches(let batches):
                for batch in batches { rows = try UIKitBatchModel.apply(batch, to: rows) }
            }
            #expect(result.count == rows.count, "\(description)")
            total = result.total
            unread = result.unread
            lastSeq = 0
            lastAcked = 0
        }

        /// Reads what the engine sent up to now (a request of this session answered after it)
        /// and applies it; acks now and then, or always when `ackAll`.
        func sync(ackAll: Bool = false) async throws {
            _ = try await client.result("server.version")
            let pending = client.notifications[cursor...]
            cursor = client.notifications.count
            for message in pending {
                guard let params = message["params"], params["subscription"]?.stringValue == subscription else { continue }
                let notification = try #require(try WireFeedNotification(method: message["method"]?.stringValue ?? "", params: params))
                #expect(notification.seq == lastSeq + 1, "\(description): seq \(notification.seq) after \(lastSeq)")
                if maxInFlight > 0 {
                    #expect(notification.seq - lastAcked <= Int64(maxInFlight), "\(description): over maxInFlight")
                }
                lastSeq = notification.seq
                notifications += 1
                switch notification {
                case .batch(let batch):
                    do {
                        rows = try UIKitBatchModel.apply(batch.batch, to: rows)
                    } catch {
                        Issue.record("\(description): seq \(batch.seq) breaks the UIKit rules: \(error)")
                        throw error
                    }
                    #expect(batch.count == rows.count, "\(description): count")
                    (total, unread) = (batch.total, batch.unread)
                case .reset(let reset):
                    rows = reset.items
                    #expect(reset.count == rows.count, "\(description): count")
                    (total, unread) = (reset.total, reset.unread)
                }
            }
            syncs += 1
            if lastSeq > lastAcked, ackAll || syncs % ackEvery == 0 {
                if acksAsNotifications, !ackAll {
                    #expect(client.session.send(SessionClient.ackLine(Int(lastSeq), subscription: subscription)))
                } else {
                    _ = try await client.result("feed.ack", ["subscription": .string(subscription), "seq": .integer(lastSeq)])
                }
                lastAcked = lastSeq
            }
        }

        /// Acks until nothing more comes.
        func settle() async throws {
            while true {
                try await sync(ackAll: true)
                _ = try await client.result("server.version")
                if client.notifications.count == cursor, lastAcked == lastSeq { return }
            }
        }
    }

    /// The user's list as the database has it, and its counters recounted from those rows.
    static func expected(
        _ reader: ChatDatabase, user: String, view: ChatListView, limit: Int?
    ) throws -> (rows: [Chat], total: Int, unread: UnreadCounters) {
        let list = try reader.allChats(of: user).chats.filter { $0.list == view.list }
        var unread = UnreadCounters()
        for chat in list where chat.unread > 0 {
            unread.chats += 1
            unread.messages += chat.unread
            if !chat.muted {
                unread.unmutedChats += 1
                unread.unmutedMessages += chat.unread
            }
        }
        let rows = list.filter { !view.unreadOnly || $0.unread > 0 }
        return (Array(rows.prefix(limit ?? .max)), list.count, unread)
    }

    /// A random write as a trusted backend does it, acting as a random user.
    struct Writes {
        var random: SeededGenerator
        var nextMessage = 0
        var posted: [String] = []
        var clock: Int64 = 1000

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

        mutating func someUsers() -> [String] {
            var seen = Set<String>()
            return (0..<Int.random(in: 1...3, using: &random)).map { _ in pick(MultiUserFeedTests.users) }
                .filter { seen.insert($0).inserted }
        }

        mutating func next() -> (String, JSONObject) {
            let chat = JSONValue.string(pick(MultiUserFeedTests.chats))
            let user = JSONValue.string(pick(MultiUserFeedTests.users))
            clock += Int64.random(in: 0...3, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<3: return ("user.create", ["user": user, "createdAt": .integer(clock)])
            case 3: return ("user.remove", ["user": user])
            case 4..<10:
                return ("chat.create", [
                    "chat": chat, "title": .string(pick(["A", "B"])), "createdAt": .integer(clock - Int64.random(in: 0...20, using: &random)),
                    "members": .array(someUsers().map(JSONValue.string)),
                ])
            case 10..<16: return ("chat.addMembers", ["chat": chat, "users": .array(someUsers().map(JSONValue.string))])
            case 16..<19: return ("chat.removeMembers", ["chat": chat, "users": .array(someUsers().map(JSONValue.string))])
            case 19..<21: return ("chat.rename", ["chat": chat, "title": .string(pick(["A", "B", "C"])), "user": user])
            case 21: return ("chat.remove", ["chat": chat])
            case 22..<30: return ("chat.markRead", ["chat": chat, "user": user])
            case 30..<34: return (pick(["chat.pin", "chat.unpin"]), ["chat": chat, "user": user])
            case 34..<42: return (pick(["chat.archive", "chat.archive", "chat.unarchive"]), ["chat": chat, "user": user])
            case 42..<45: return (pick(["chat.mute", "chat.unmute"]), ["chat": chat, "user": user])
            case 45..<48 where !posted.isEmpty:
                return ("message.edit", ["id": .string(pick(posted)), "text": .string(pick(["x", "y"])), "user": user])
            case 48..<55 where !posted.isEmpty:
                return ("message.delete", ["id": .string(pick(posted))])
            default:
                nextMessage += 1
                posted.append("m\(nextMessage)")
                // Members and non-members, users and a sender who is no user; some late.
                let late = Int.random(in: 0..<6, using: &random) == 0
                return ("message.post", [
                    "chat": chat, "id": .string("m\(nextMessage)"),
                    "sender": .string(pick(MultiUserFeedTests.users + ["stranger"])), "text": "hi",
                    "sentAt": .integer(late ? clock - Int64.random(in: 5...50, using: &random) : clock),
                ])
            }
        }
    }

    /// With every user subscribed (more live users than the engine reads one by one: it reads
    /// the changed memberships first), and with three (each live user's changes read directly).
    @Test(arguments: [11 as UInt64, 29, 2026], [true, false])
    func randomStreamsReachEveryUsersLists(seed: UInt64, everyone: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("multi.sqlite")
        let engine = try ChatEngine(options: EngineOptions(databasePath: path, store: StoreOptions(durability: .normal)))
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        for user in Self.users where user != "me" { _ = try await backend.result("user.create", ["user": .string(user)]) }
        var writes = Writes(random: SeededGenerator(seed: seed))
        // Some chats before the first subscription, so that snapshots are not empty.
        for chat in Self.chats.prefix(4) {
            _ = try await backend.call("chat.create", [
                "chat": .string(chat), "title": "T", "createdAt": 10, "members": .array(writes.someUsers().map(JSONValue.string)),
            ])
        }
        var mirrors: [Mirror] = []
        let subscriptions: [(String, ChatListView, Int?, Int, Int)] = [
            ("ann", ChatListView.main, nil, 1, 1), ("ann", ChatListView.main, 3, 2, 3),
            ("bob", ChatListView(list: .main, unreadOnly: true), nil, 1, 2), ("bob", ChatListView.main, 2, 0, 1),
            ("zoë", ChatListView(list: .archive), nil, 1, 4), ("me", ChatListView.main, nil, 3, 5),
            ("zoë", ChatListView.main, 4, 1, 1), ("Ünal", ChatListView(list: .archive, unreadOnly: true), 2, 1, 2),
            ("Ünal", ChatListView.main, nil, 0, 1),
        ]
        for (user, view, limit, maxInFlight, ackEvery) in subscriptions where everyone || ["ann", "bob"].contains(user) {
            let mirror = Mirror(
                SessionClient(engine.openInProcessSession()), user: user, view: view, limit: limit, maxInFlight: maxInFlight,
                ackEvery: ackEvery)
            try await mirror.subscribe()
            mirrors.append(mirror)
        }
        let reader = try ChatDatabase(path: path, options: StoreOptions(readOnly: true))
        var random = SeededGenerator(seed: seed &+ 1)
        var refused = 0
        for step in 1...360 {
            let (method, params) = writes.next()
            let response = try await backend.call(method, params)
            if let error = response["error"] {
                refused += 1
                #expect(error["code"] != .integer(-32603), "\(method) \(params): \(error)")
            }
            if step % 3 == 0 { for mirror in mirrors { try await mirror.sync() } }
            guard step % 40 == 0 else { continue }
            // A checkpoint: every mirror caught up equals its user's list in the database.
            for mirror in mirrors {
                try await mirror.settle()
                let expected = try Self.expected(reader, user: mirror.user, view: mirror.view, limit: mirror.limit)
                #expect(mirror.rows == expected.rows, "\(mirror.description) at step \(step): \(mirror.rows.map(\.id)) vs \(expected.rows.map(\.id))")
                #expect(mirror.total == expected.total, "\(mirror.description) total at step \(step)")
                #expect(mirror.unread == expected.unread, "\(mirror.description) unread at step \(step)")
            }
            // One subscriber comes back with the rows it has (resume with `known`).
            let resumed = mirrors[Int.random(in: 0..<mirrors.count, using: &random)]
            _ = try await resumed.client.result("feed.unsubscribe", ["subscription": .string(resumed.subscription)])
            // (A removed user comes back first: a user who does not exist cannot subscribe.)
            _ = try await backend.call("user.create", ["user": .string(resumed.user)])
            try await resumed.subscribe(known: resumed.rows)
            let expected = try Self.expected(reader, user: resumed.user, view: resumed.view, limit: resumed.limit)
            #expect(resumed.rows == expected.rows, "\(resumed.description) resumed at step \(step)")
        }
        #expect(refused < 300)
        #expect(mirrors.map(\.notifications).reduce(0, +) > 100)
        // Every subscribed user's lists are live (me's too when subscribed, or within 60 s of
        // the start: a loaded machine may take longer).
        let stats = try await backend.result("server.stats")
        let subscribed = Set(mirrors.map(\.user)).count
        #expect((subscribed...(subscribed + 1)).contains(Int(stats["liveUsers"]?.int64Value ?? -1)))
        #expect(stats["subscriptions"]?.arrayValue?.count == mirrors.count)
    }

    /// The engine's own writes and another process's, interleaved, reach every member's list
    /// once each and in order, when one session holds every member's subscription: 60 live users
    /// (the catch-up reads the log for all at once), a commit's batches for them are more than
    /// the 32 KiB after which a session is flushed again within a catch-up, and every mirror ends
    /// equal to the user's list in the database with its counters.
    @Test(arguments: [5 as UInt64, 77])
    func ownAndAnotherWritersPostsReachOneSessionsSubscriptionsInOrder(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("interleaved.sqlite")
        let engine = try ChatEngine(options: EngineOptions(databasePath: path, store: StoreOptions(durability: .normal)))
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        let names = (0..<60).map { "u\($0)" }
        for name in names { _ = try await backend.result("user.create", ["user": .string(name)]) }
        let title = String(repeating: "t", count: 400)
        let chats: [(id: String, members: [String])] = [
            ("all", names), ("even", names.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)),
            ("few", Array(names.prefix(7))),
        ]
        for chat in chats {
            _ = try await backend.result("chat.create", [
                "chat": .string(chat.id), "title": .string(title), "createdAt": 1,
                "members": .array(chat.members.map(JSONValue.string)),
            ])
        }
        let subscriber = SessionClient(engine.openInProcessSession())
        let mirrors = names.enumerated().map {
            Mirror(subscriber, user: $0.element, view: .main, limit: $0.offset % 2 == 0 ? 2 : nil, maxInFlight: 0, ackEvery: 1)
        }
        for mirror in mirrors { try await mirror.subscribe() }
        let writer = try ChatDatabase(path: path)
        var random = SeededGenerator(seed: seed)
        for step in 0..<40 {
            let chat = chats[Int.random(in: 0..<chats.count, using: &random)]
            let sender = chat.members[Int.random(in: 0..<chat.members.count, using: &random)]
            let post = Message(id: "m\(step)", chat: chat.id, sender: sender, text: "hi \(step)", sentAt: Int64(10 + step))
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                try writer.apply(.postMessage(post))
            case 1:
                _ = try await backend.result("chat.markRead", ["chat": .string(chat.id), "user": .string(sender)])
                try writer.apply(.markRead(id: chat.id, user: chat.members.randomElement(using: &random)!))
            default:
                _ = try await backend.result("message.post", [
                    "chat": .string(post.chat), "id": .string(post.id), "sender": .string(post.sender), "text": .string(post.text),
                    "sentAt": .integer(post.sentAt),
                ])
            }
        }
        let reader = try ChatDatabase(path: path, options: StoreOptions(readOnly: true))
        // Another process's last commits reach the engine a moment later: wait for them.
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            for mirror in mirrors { try await mirror.sync() }
            var equal = true
            for mirror in mirrors {
                let expected = try Self.expected(reader, user: mirror.user, view: mirror.view, limit: mirror.limit)
                if mirror.rows != expected.rows || mirror.total != expected.total || mirror.unread != expected.unread {
                    equal = false
                }
            }
            if equal { break }
            guard ContinuousClock.now < deadline else {
                for mirror in mirrors {
                    let expected = try Self.expected(reader, user: mirror.user, view: mirror.view, limit: mirror.limit)
                    #expect(mirror.rows == expected.rows, "\(mirror.description)")
                    #expect(mirror.unread == expected.unread, "\(mirror.description) unread")
                }
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(mirrors.allSatisfy { $0.notifications > 0 })
    }

    @Test func aUsersListsAreDroppedAfterTheIdleTimeAndReadFromTheStoreMeanwhile() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(
            databasePath: directory.path("idle.sqlite"), idleUserIndexSeconds: 0))
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        _ = try await backend.result("user.create", ["user": "ann"])
        _ = try await backend.result("chat.create", ["chat": "c", "title": "C", "createdAt": 1, "members": ["ann", "me"]])
        // Idle from the start with no idle time: me's lists are dropped in the first round.
        try await waitForLiveUsers(0, backend)
        let subscriber = SessionClient(engine.openInProcessSession())
        let subscribed = try await subscriber.result("feed.subscribe", ["user": "ann", "maxInFlight": 0])
        #expect(subscribed["items"]?.arrayValue?.count == 1)
        #expect(try await backend.result("server.stats")["liveUsers"] == .integer(1))
        _ = try await backend.result("message.post", ["chat": "c", "id": "m1", "sender": "me", "text": "hi", "sentAt": 5])
        let batch = try await subscriber.nextNotification()
        #expect(batch["params"]?["unread"]?["messages"] == .integer(1))
        _ = try await subscriber.result("feed.unsubscribe", ["subscription": subscribed["subscription"] ?? .null])
        try await waitForLiveUsers(0, backend)
        // Without live lists, chats.list and chats.locate read the database.
        let list = try await backend.result("chats.list", ["user": "ann"])
        #expect(list["items"]?.arrayValue?.first?["unread"] == .integer(1))
        #expect(try await backend.result("chats.locate", ["user": "ann", "ids": ["c", "x"]])
            == ["total": 1, "indices": ["c": 0, "x": nil]])
        // A later subscription loads the lists again, as they are now.
        _ = try await backend.result("chat.markRead", ["chat": "c", "user": "ann"])
        let again = try await subscriber.result("feed.subscribe", ["user": "ann"])
        #expect(again["unread"]?["messages"] == .integer(0))
    }

    /// Another process's writes (the CLI) reach each member's subscriptions, whichever way the
    /// engine reads them (a few live users, or more than it reads one by one).
    @Test(arguments: [2, 6])
    func anotherWritersPostReachesEverySubscribedMember(users: Int) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("writer.sqlite")
        let engine = try ChatEngine(options: EngineOptions(databasePath: path))
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        let names = (1...users).map { "u\($0)" }
        for name in names { _ = try await backend.result("user.create", ["user": .string(name)]) }
        _ = try await backend.result("user.create", ["user": "outsider"])
        _ = try await backend.result("chat.create", [
            "chat": "group", "title": "G", "createdAt": 1, "members": .array(names.map(JSONValue.string)),
        ])
        _ = try await backend.result("chat.create", ["chat": "alone", "title": "A", "createdAt": 1, "members": ["outsider"]])
        var subscribers: [SessionClient] = []
        for name in names + ["outsider"] {
            let subscriber = SessionClient(engine.openInProcessSession())
            _ = try await subscriber.result("feed.subscribe", ["user": .string(name), "maxInFlight": 0])
            subscribers.append(subscriber)
        }
        let writer = try ChatDatabase(path: path)
        try writer.apply(.postMessage(Message(id: "m1", chat: "group", sender: "u1", text: "hi", sentAt: 50)))
        for (name, subscriber) in zip(names, subscribers) {
            let batch = try await subscriber.nextNotification()
            #expect(batch["params"]?["unread"]?["messages"] == .integer(name == "u1" ? 0 : 1), "\(name)")
        }
        // The outsider's subscription got nothing for it; their own chat's post reaches them.
        try writer.apply(.postMessage(Message(id: "m2", chat: "alone", sender: "x", text: "yo", sentAt: 60)))
        let outsiders = try await subscribers.last!.nextNotification()
        #expect(outsiders["params"]?["seq"] == .integer(1))
        #expect(String(decoding: outsiders.serialized(), as: UTF8.self).contains(#""id":"alone""#))
    }

    @Test func listsStayLiveForTheIdleTime() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(databasePath: directory.path("kept.sqlite"), idleUserIndexSeconds: 3600))
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        _ = try await backend.result("user.create", ["user": "ann"])
        let subscribed = try await backend.result("feed.subscribe", ["user": "ann"])
        _ = try await backend.result("feed.unsubscribe", ["subscription": subscribed["subscription"] ?? .null])
        try await Task.sleep(for: .milliseconds(300))
        // me from the start, ann since her subscription ended: both within the idle time.
        #expect(try await backend.result("server.stats")["liveUsers"] == .integer(2))
    }

    private func waitForLiveUsers(_ count: Int, _ client: SessionClient) async throws {
        let deadline = Date().addingTimeInterval(20)
        while try await client.result("server.stats")["liveUsers"] != .integer(count) {
            guard Date() < deadline else {
                Issue.record("live users never became \(count)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
