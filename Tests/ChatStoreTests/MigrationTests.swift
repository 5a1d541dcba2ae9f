import ChatModel
import Foundation
import Testing
import SQLite
import TestSupport

@testable import ChatStore

@Suite struct MigrationTests {
    @Test func aVersion1DatabaseOpensAndMigrates() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v1.sqlite")
        do {
            let db = try Database(path: path)
            try db.execute(ChatDatabase.migrations[0].sql)
            try db.execute("""
                PRAGMA user_version = 1;
                INSERT INTO chat VALUES ('a', 'A', 0, 'm2', 'ann', 'second', 20, 20, 2, 3);
                INSERT INTO message (id, chat_id, sender, text, sent_at) VALUES ('m1', 'a', 'ann', 'first', 10);
                INSERT INTO message (id, chat_id, sender, text, sent_at) VALUES ('m2', 'a', 'ann', 'second', 20);
                INSERT INTO change_log (chat_id, kind) VALUES ('a', 'create'), ('a', 'update'), ('a', 'update');
                """)
        }
        let store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        #expect(try db.makeStatement("PRAGMA user_version").fetchValue(Int.self) == ChatDatabase.latestSchemaVersion)
        #expect(try store.chat(id: "a")?.lastMessage?.text == "second")
        #expect(try store.latestChangeSequence() == 3)
        #expect(try store.apply(message("m1", in: "a", "first", at: 10)) == .posted(duplicate: true))
        try store.apply(.editMessage(id: "m2", text: "second, edited", editedAt: 30))
        #expect(try store.apply(message("m2", in: "a", "second", at: 20)) == .posted(duplicate: true))
        #expect(try store.apply(message("m3", in: "a", "third", at: 40)) == .posted(duplicate: false))
        let chat = try #require(try store.chat(id: "a"))
        #expect(chat.unread == 3 && chat.lastMessage?.id == "m3" && chat.revision == 5)
        // Opening again does not migrate twice.
        _ = try ChatDatabase(path: path)
        #expect(try store.stats().messages == 3)
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("future.sqlite")
        try Database(path: path).execute("PRAGMA user_version = 99")
        #expect(throws: ChatStoreError.schemaTooNew(path: path, version: 99, supported: ChatDatabase.latestSchemaVersion)) {
            try ChatDatabase(path: path)
        }
    }

    @Test func aFreshDatabaseIsAtTheLatestVersionWithWAL() throws {
        let test = try TestStore()
        let db = try Database(path: test.path)
        #expect(try db.makeStatement("PRAGMA user_version").fetchValue(Int.self) == ChatDatabase.latestSchemaVersion)
        #expect(try db.makeStatement("PRAGMA journal_mode").fetchValue(String.self) == "wal")
        let plan = try db.makeStatement("""
            EXPLAIN QUERY PLAN SELECT id FROM chat WHERE list = 'main'
            ORDER BY pin_order DESC, last_message_date DESC, id ASC LIMIT 10
            """).fetchAll { row -> String in row[3] }
        #expect(plan.joined().contains("chat_list_order"), "plan: \(plan)")
    }
}

extension MigrationTests {
    @Test func aFileThatIsNotADatabaseIsNamedInTheError() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.txt")
        try Data(String(repeating: "not a database\n", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ChatStoreError.cannotOpen(path: path, reason: "it is not a SQLite database")) {
            try ChatDatabase(path: path)
        }
    }
}

@Suite struct StoreOptionsTests {
    @Test(arguments: [(StoreOptions.Durability.normal, 1), (.full, 2)])
    func durabilitySetsSynchronous(_ durability: StoreOptions.Durability, expected: Int) throws {
        let test = try TestStore(options: StoreOptions(durability: durability, cacheSizeKiB: 8192))
        #expect(try test.store.db.makeStatement("PRAGMA synchronous").fetchValue(Int.self) == expected)
        #expect(try test.store.db.makeStatement("PRAGMA cache_size").fetchValue(Int.self) == -8192)
        #expect(try test.store.db.makeStatement("PRAGMA foreign_keys").fetchValue(Int.self) == 1)
    }
}
