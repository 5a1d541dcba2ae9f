import ChatModel
import Foundation
import SQLite
import Testing
import TestSupport

@testable import ChatStore

/// `stats()` reads counters kept by every write; they always equal a count over the tables.
@Suite struct StoreCountTests {
    static func counted(_ store: ChatDatabase) throws -> (chats: Int, messages: Int) {
        (try store.db.makeStatement("SELECT COUNT(*) FROM chat").fetchValue(Int.self) ?? -1,
         try store.db.makeStatement("SELECT COUNT(*) FROM message WHERE deleted = 0").fetchValue(Int.self) ?? -1)
    }

    @Test(arguments: [UInt64(11), 12])
    func countersFollowARandomStreamOfEvents(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let test = try TestStore()
        let store = test.store
        var messageNumber = 0
        for step in 0..<600 {
            let chat = "c\(Int.random(in: 0..<12, using: &random))"
            let someMessage = "m\(Int.random(in: 0...max(0, messageNumber), using: &random))"
            let event: ChatEvent
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1: event = .createChat(id: chat, title: chat, createdAt: Int64(step))
            case 2: event = .removeChat(id: chat)
            case 3: event = .deleteMessage(id: someMessage)
            case 4: event = .editMessage(id: someMessage, text: "edited", editedAt: Int64(step))
            case 5: event = .markRead(id: chat)
            default:
                messageNumber += 1
                event = message("m\(messageNumber)", in: chat, at: Int64(Int.random(in: 0..<1000, using: &random)))
            }
            // A group of one event in three: refused events inside a group are undone alone.
            if step % 3 == 0 {
                _ = try store.apply([event, .deleteMessage(id: "missing"), event])
            } else {
                _ = try? store.apply(event)
            }
            let stats = try store.stats()
            let counted = try Self.counted(store)
            #expect(stats.chats == counted.chats && stats.messages == counted.messages, "step \(step): \(event)")
            #expect(try store.chatCount() == counted.chats)
        }
    }

    @Test func anOlderDatabaseGetsItsCountersWhenItMigrates() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v2.sqlite")
        do {
            let db = try Database(path: path)
            for migration in ChatDatabase.migrations where migration.version <= 2 { try db.execute(migration.sql) }
            try db.execute("""
                PRAGMA user_version = 2;
                INSERT INTO chat VALUES ('a', 'A', 0, 'm2', 'ann', 'second', 20, 20, 2, 3);
                INSERT INTO chat VALUES ('b', 'B', 0, NULL, NULL, NULL, NULL, 0, 0, 1);
                INSERT INTO message (id, chat_id, sender, text, sent_at) VALUES ('m1', 'a', 'ann', 'first', 10);
                INSERT INTO message (id, chat_id, sender, text, sent_at) VALUES ('m2', 'a', 'ann', 'second', 20);
                INSERT INTO message (id, chat_id, sender, text, sent_at, deleted) VALUES ('m0', 'a', 'ann', 'gone', 5, 1);
                """)
        }
        let store = try ChatDatabase(path: path)
        #expect(try store.stats().chats == 2 && store.stats().messages == 2)
        try store.apply(.removeChat(id: "a"))
        #expect(try store.stats().chats == 1 && store.stats().messages == 0, "removing a chat uncounts its messages")
        // Since version 9 a post is counted by the store's code, once per transaction.
        _ = try store.apply([message("m3", in: "b", at: 30), message("m4", in: "b", at: 31), message("m3", in: "b", at: 30)])
        try store.apply(message("m5", in: "b", at: 32))
        #expect(try store.stats().messages == 3 && Self.counted(store).messages == 3)
    }

    @Test func theStatsQueryReadsOneRow() throws {
        let test = try TestStore()
        let plan = try test.store.db.makeStatement("EXPLAIN QUERY PLAN SELECT chats, messages FROM store_count WHERE id = 0")
            .fetchAll { row -> String in row[3] }
        #expect(plan.joined().contains("INTEGER PRIMARY KEY"), "plan: \(plan)")
    }
}
