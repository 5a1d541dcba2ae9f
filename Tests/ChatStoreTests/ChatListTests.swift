import ChatModel
import Foundation
import Testing
import SQLite
import TestSupport

@testable import ChatStore

/// Lists, pins and mute in the store (docs/PROTOCOL.md, Values).
@Suite struct ChatListTests {
    /// A store with chats `a`…`f` created at 60…10 (so `a` is on top of `main`).
    static func store(maxPinnedChats: Int = 5) throws -> TestStore {
        let test = try TestStore(options: StoreOptions(maxPinnedChats: maxPinnedChats))
        for (offset, id) in ["a", "b", "c", "d", "e", "f"].enumerated() {
            try test.store.apply(.createChat(id: id, title: id.uppercased(), createdAt: Int64(60 - 10 * offset)))
        }
        return test
    }

    static func ids(_ store: ChatDatabase, _ list: ChatList = .main) throws -> [String] {
        try store.chats(in: ChatListView(list: list), offset: 0, limit: 100).map(\.id)
    }

    @Test func aNewPinGoesOnTopOfThePinnedChatsAndUnpinningReturnsToTheDatePlace() throws {
        let storeFiles = try Self.store()
        let store = storeFiles.store
        guard case .chat(let e) = try store.apply(.pinChat(id: "e")) else { Issue.record("no chat"); return }
        #expect(e.pinned && e.revision > 5)
        try store.apply(.pinChat(id: "c"))
        #expect(try Self.ids(store) == ["c", "e", "a", "b", "d", "f"])
        // Pinned chats stay above newer messages.
        try store.apply(message("m1", in: "f", at: 1000))
        #expect(try Self.ids(store) == ["c", "e", "f", "a", "b", "d"])
        try store.apply(.unpinChat(id: "c"))
        #expect(try Self.ids(store) == ["e", "f", "a", "b", "c", "d"])
        #expect(try store.positions(of: ["e", "c"]) == ["e": 0, "c": 4])
    }

    @Test func noOpsChangeNothing() throws {
        let storeFiles = try Self.store()
        let store = storeFiles.store
        try store.apply(.pinChat(id: "b"))
        try store.apply(.moveChat(id: "c", to: .archive))
        try store.apply(.setMuted(id: "d", muted: true))
        let sequence = try store.latestChangeSequence()
        let chats = try store.allChats().chats
        for event: ChatEvent in [
            .pinChat(id: "b"), .unpinChat(id: "a"), .moveChat(id: "c", to: .archive), .moveChat(id: "a", to: .main),
            .setMuted(id: "d", muted: true), .setMuted(id: "a", muted: false), .setPinned(list: .main, chats: ["b"]),
            .setPinned(list: .archive, chats: []), .markRead(id: "a"),
        ] {
            try store.apply(event)
            #expect(try store.latestChangeSequence() == sequence, "\(event)")
        }
        #expect(try store.allChats().chats == chats)
    }

    @Test func onePinMoreThanTheLimitIsAConflictThatSaysTheLimit() throws {
        let storeFiles = try Self.store(maxPinnedChats: 2)
        let store = storeFiles.store
        try store.apply(.pinChat(id: "a"))
        try store.apply(.pinChat(id: "b"))
        let sequence = try store.latestChangeSequence()
        do {
            try store.apply(.pinChat(id: "c"))
            Issue.record("expected a conflict")
        } catch let error as ChatError {
            guard case .conflict(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("2") && message.contains("maxPinnedChats"), "\(message)")
        }
        #expect(try store.latestChangeSequence() == sequence)
        // The other list has its own limit.
        try store.apply(.moveChat(id: "c", to: .archive))
        try store.apply(.pinChat(id: "c"))
        #expect(try store.chat(id: "c")?.pinned == true)
    }

    @Test func movingToTheOtherListUnpins() throws {
        let storeFiles = try Self.store()
        let store = storeFiles.store
        try store.apply(.pinChat(id: "d"))
        guard case .chat(let archived) = try store.apply(.moveChat(id: "d", to: .archive)) else { return }
        #expect(archived.list == .archive && !archived.pinned)
        #expect(try Self.ids(store, .archive) == ["d"])
        #expect(try Self.ids(store) == ["a", "b", "c", "e", "f"])
        try store.apply(.moveChat(id: "d", to: .main))
        #expect(try Self.ids(store) == ["a", "b", "c", "d", "e", "f"])
        #expect(try store.positions(of: ["d"], in: .main) == ["d": Optional(3)])
        #expect(try store.positions(of: ["d"], in: .archive)["d"] == .some(nil))
    }

    @Test func setPinnedPinsExactlyThoseInOrderAndKeepsWhatItCan() throws {
        let storeFiles = try Self.store()
        let store = storeFiles.store
        for id in ["c", "b", "a"] { try store.apply(.pinChat(id: id)) }
        #expect(try Self.ids(store).prefix(3) == ["a", "b", "c"])
        let before = Dictionary(uniqueKeysWithValues: try store.allChats().chats.map { ($0.id, $0) })
        try store.apply(.setPinned(list: .main, chats: ["a", "c"]))
        #expect(try Self.ids(store) == ["a", "c", "b", "d", "e", "f"])
        // a and c keep their pin orders: unpinning b changes only b.
        #expect(try store.chat(id: "a")?.revision == before["a"]!.revision)
        #expect(try store.chat(id: "c")?.revision == before["c"]!.revision)
        try store.apply(.setPinned(list: .main, chats: ["f", "c", "a"]))
        #expect(try Self.ids(store) == ["f", "c", "a", "b", "d", "e"])
        try store.apply(.setPinned(list: .main, chats: []))
        #expect(try Self.ids(store) == ["a", "b", "c", "d", "e", "f"])
    }

    @Test(arguments: [
        (ChatEvent.setPinned(list: .main, chats: ["a", "b", "a"]), ChatError.invalidParams(field: "chats[2]", reason: "repeats 'a'; each chat may be pinned once")),
        (.setPinned(list: .main, chats: ["a", "z"]), .invalidParams(field: "chats[1]", reason: "'z' is in the archive list, not in main")),
        (.setPinned(list: .main, chats: ["a", "nope"]), .notFound(kind: "chat", id: "nope")),
        (.setPinned(list: .main, chats: ["a", "b", "c"]), .invalidParams(field: "chats", reason: "has 3 chats; a list holds at most 2 pinned chats (maxPinnedChats)")),
        (.pinChat(id: "nope"), .notFound(kind: "chat", id: "nope")),
        (.moveChat(id: "nope", to: .archive), .notFound(kind: "chat", id: "nope")),
        (.setMuted(id: "nope", muted: true), .notFound(kind: "chat", id: "nope")),
    ])
    func badEventsAreRefusedAndChangeNothing(_ event: ChatEvent, _ expected: ChatError) throws {
        let storeFiles = try Self.store(maxPinnedChats: 2)
        let store = storeFiles.store
        try store.apply(.createChat(id: "z", title: "Z", createdAt: 1))
        try store.apply(.moveChat(id: "z", to: .archive))
        try store.apply(.pinChat(id: "d"))
        let sequence = try store.latestChangeSequence()
        #expect(throws: expected) { try store.apply(event) }
        #expect(try store.latestChangeSequence() == sequence)
        #expect(try store.pinnedChats(of: .main, user: "me").map(\.id) == ["d"])
    }

    @Test func countersFollowEveryEventAndMuteLeavesTheBadge() throws {
        let storeFiles = try Self.store()
        let store = storeFiles.store
        func check(_ sourceLocation: SourceLocation = #_sourceLocation) throws {
            let all = try store.allChats().chats
            for list in ChatList.allCases {
                #expect(try store.counters(of: list) == ListCounters.recount(all, list: list), sourceLocation: sourceLocation)
            }
        }
        try store.apply(message("m1", in: "a", at: 100))
        try store.apply(message("m2", in: "a", at: 101))
        try store.apply(message("m3", in: "b", at: 102))
        try check()
        #expect(try store.counters(of: .main) == ListCounters(
            total: 6, unread: UnreadCounters(chats: 2, messages: 3, unmutedChats: 2, unmutedMessages: 3)))
        try store.apply(.setMuted(id: "a", muted: true))
        #expect(try store.counters(of: .main).unread == UnreadCounters(chats: 2, messages: 3, unmutedChats: 1, unmutedMessages: 1))
        try store.apply(.moveChat(id: "b", to: .archive))
        try check()
        #expect(try store.counters(of: .archive) == ListCounters(
            total: 1, unread: UnreadCounters(chats: 1, messages: 1, unmutedChats: 1, unmutedMessages: 1)))
        try store.apply(.deleteMessage(id: "m2"))
        try store.apply(.markRead(id: "b"))
        try store.apply(.removeChat(id: "a"))
        try check()
        #expect(try store.counters(of: .main) == ListCounters(total: 4))
        #expect(try store.chats(in: ChatListView(list: .main, unreadOnly: true), offset: 0, limit: 10).isEmpty)
    }

    @Test func postingAndDeletingLeavesNoBadge() throws {
        let storeFiles = try Self.store()
        let store = storeFiles.store
        try store.apply(message("m1", in: "a", at: 100))
        try store.apply(.deleteMessage(id: "m1"))
        let chat = try #require(try store.chat(id: "a"))
        #expect(chat.unread == 0 && chat.lastMessage == nil)
        // A read message deleted later does not go below zero.
        try store.apply(message("m2", in: "a", at: 200))
        try store.apply(.markRead(id: "a"))
        try store.apply(.deleteMessage(id: "m2"))
        #expect(try store.chat(id: "a")?.unread == 0)
    }

    /// A `list` column is read from its bytes: `archive` is the archive, `main` and any other
    /// name (another process's typo, a different case) the main list, as before, wherever a chat
    /// is read (a load with or without content, a lookup, the change log's rows).
    @Test func aListNameOtherThanArchiveReadsAsMain() throws {
        let test = try Self.store()
        try test.store.apply(.moveChat(id: "b", to: .archive))
        let db = try Database(path: test.path)
        try db.execute("UPDATE membership SET list = 'Archive' WHERE chat_id = 'c'")
        try db.execute("UPDATE membership SET list = 'archivf' WHERE chat_id = 'd'")
        try db.execute("UPDATE membership SET list = 'archives' WHERE chat_id = 'e'")
        let expected: [String: ChatList] = ["a": .main, "b": .archive, "c": .main, "d": .main, "e": .main, "f": .main]
        for withContent in [false, true] {
            let chats = try test.store.allChats(withContent: withContent).chats
            #expect(Dictionary(uniqueKeysWithValues: chats.map { ($0.id, $0.list) }) == expected)
        }
        for (id, list) in expected { #expect(try test.store.chat(id: id)?.list == list) }
    }

    @Test func aVersion2DatabaseMigratesIntoMainWithCountersAndUnreadMessages() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v2.sqlite")
        do {
            let db = try Database(path: path)
            try db.execute(ChatDatabase.migrations[0].sql)
            try db.execute(ChatDatabase.migrations[1].sql)
            // `b` counted a message deleted since: its unread is corrected, with a new revision.
            try db.execute("""
                PRAGMA user_version = 2;
                INSERT INTO chat VALUES ('a', 'A', 0, 'a2', 'ann', 'two', 20, 20, 1, 3);
                INSERT INTO chat VALUES ('b', 'B', 0, 'b1', 'bob', 'one', 10, 10, 2, 5);
                INSERT INTO message (id, chat_id, sender, text, original_text, sent_at) VALUES
                    ('a1', 'a', 'ann', 'one', 'one', 15), ('a2', 'a', 'ann', 'two', 'two', 20),
                    ('b1', 'b', 'bob', 'one', 'one', 10);
                INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, deleted) VALUES
                    ('b2', 'b', 'bob', 'gone', 'gone', 12, 1);
                INSERT INTO change_log (chat_id, kind) VALUES ('a', 'create'), ('a', 'update'), ('a', 'update'),
                    ('b', 'create'), ('b', 'update');
                """)
        }
        let store = try ChatDatabase(path: path)
        let chats = try store.allChats().chats
        #expect(chats.map(\.id) == ["a", "b"])
        #expect(chats.allSatisfy { $0.list == .main && !$0.pinned && !$0.muted })
        let a = try #require(chats.first), b = try #require(chats.last)
        #expect(a.unread == 1 && a.revision == 3)
        #expect(b.unread == 1 && b.revision == 6)
        #expect(try store.counters(of: .main) == ListCounters.recount(chats, list: .main))
        #expect(try store.counters(of: .archive) == ListCounters())
        // The newest unread message is the one a delete uncounts.
        try store.apply(.deleteMessage(id: "a1"))
        #expect(try store.chat(id: "a")?.unread == 1)
        try store.apply(.deleteMessage(id: "a2"))
        #expect(try store.chat(id: "a")?.unread == 0)
        try store.apply(.pinChat(id: "b"))
        #expect(try Self.ids(store) == ["b", "a"])
    }

    @Test(arguments: [
        ([0, 0, 0] as [Int64], [3, 2, 1] as [Int64]),
        ([7, 0, 5], [7, 6, 5]),
        ([3, 1], [3, 1]),
        ([1, 3], [4, 3]),
        ([0, 1], [2, 1]),
        ([2, 9, 1, 8], [10, 9, 8, 7]),
    ])
    func pinOrdersKeepTheLongestChainThatFits(_ old: [Int64], _ expected: [Int64]) {
        let orders = ChatDatabase.pinOrders(keeping: old)
        #expect(orders == expected)
        #expect(zip(orders, orders.dropFirst()).allSatisfy { $0 > $1 } && orders.allSatisfy { $0 > 0 })
    }
}
