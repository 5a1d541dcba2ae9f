import ChatModel
import Foundation
import Testing
import SQLite
import TestSupport

@testable import ChatStore

@Suite struct MigrationTests {
    /// Makes a file at `path` of schema version `version` holding the rows `sql` writes (as an
    /// older release left them), closed before it returns.
    static func makeFile(_ path: String, atVersion version: Int, _ sql: String) throws {
        let db = try Database(path: path)
        try ChatDatabase.migrate(db, upTo: version)
        try db.execute(sql)
    }

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

    /// Version 8 rebuilds the change log with its check of `kind` as comparisons: every entry,
    /// the sequence's high-water mark (past an entry no longer there) and the check stay, and an
    /// insert no longer builds an ephemeral table for the check.
    @Test func theChangeLogKeepsItsEntriesAndSequencesAcrossItsRebuild() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v7.sqlite")
        let insert = "INSERT INTO change_log (chat_id, kind, user_id) VALUES ('x', 'update', NULL)"
        do {
            let db = try Database(path: path)
            try ChatDatabase.migrate(db, upTo: 7)
            try db.execute("""
                INSERT INTO change_log (chat_id, kind, user_id) VALUES ('a', 'create', NULL), ('a', 'update', 'me'), ('b', 'remove', NULL);
                DELETE FROM change_log WHERE sequence = 3;
                """)
            let plan = try db.makeStatement("EXPLAIN \(insert)").fetchAll { row -> String in row[1] }
            #expect(plan.contains("OpenEphemeral"), "the version 7 check, as SQLite codes it: \(plan)")
        }
        let store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        #expect(try db.makeStatement("PRAGMA user_version").fetchValue(Int.self) == ChatDatabase.latestSchemaVersion)
        let entries = try db.makeStatement("SELECT sequence, chat_id, kind, user_id FROM change_log ORDER BY sequence")
            .fetchAll { row -> String in "\(row[0] as Int64) \(row[1] as String) \(row[2] as String) \(row[3] as String?)" }
        #expect(entries == ["1 a create nil", "2 a update Optional(\"me\")"])
        let plan = try db.makeStatement("EXPLAIN \(insert)").fetchAll { row -> String in row[1] }
        #expect(!plan.contains("OpenEphemeral"), "plan: \(plan)")
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO change_log (chat_id, kind) VALUES ('a', 'bogus')") }
        // Sequence 3 was handed out before: the next entry is 4.
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0))
        #expect(try store.latestChangeSequence() == 4)
    }

    /// Version 11 replaces the list-order index, whose entries moved with every post, by
    /// `membership_user` (user, list, pin band, chat): the lists read as before.
    @Test func theListOrderIndexGivesWayToOneThatNoPostChanges() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v10.sqlite")
        try Self.makeFile(path, atVersion: 10, """
            INSERT INTO chat (id, title, created_at, last_message_date) VALUES ('a', 'A', 0, 5), ('b', 'B', 0, 9), ('c', 'C', 0, 5), ('d', 'D', 0, 1);
            INSERT INTO membership (chat_id, user_id, list, pin_order, last_message_date, unread, read_through, revision, joined)
                VALUES ('a', 'me', 'main', 0, 5, 2, 0, 1, 0), ('b', 'me', 'main', 0, 9, 0, 0, 2, 0),
                       ('c', 'me', 'archive', 0, 5, 0, 0, 3, 0), ('d', 'me', 'main', 1, 1, 0, 0, 4, 0);
            UPDATE list_counter SET total = 3 WHERE user_id = 'me' AND list = 'main';
            UPDATE list_counter SET total = 1 WHERE user_id = 'me' AND list = 'archive';
            """)
        let store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        let indexes = try db.makeStatement("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'membership' ORDER BY name")
            .fetchAll { row -> String in row[0] }
        #expect(indexes == ["membership_user"])
        #expect(try db.makeStatement("SELECT memberships FROM store_count").fetchValue(Int.self) == 4)
        #expect(try store.allChats().chats.map(\.id) == ["c", "d", "b", "a"])
        #expect(try store.chats(in: .main, offset: 0, limit: 10).map(\.id) == ["d", "b", "a"])
        #expect(try store.counters(of: .main).unread.messages == 2)
    }

    /// Schema version 12: the chat row loses its copy of the last message and its order date;
    /// the last message is read from the messages, the date from the memberships (or the last
    /// message, for a chat without members).
    @Test func theChatRowLosesItsCopyOfTheLastMessage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v11.sqlite")
        try Self.makeFile(path, atVersion: 11, """
            INSERT INTO user (id, name, created_at) VALUES ('ann', 'Ann', 0);
            INSERT INTO chat (id, title, created_at, last_message_id, last_message_sender, last_message_text,
                last_message_sent_at, last_message_date)
                VALUES ('a', 'A', 0, 'm2', 'bob', 'two', 7, 7), ('b', 'B', 3, NULL, NULL, NULL, NULL, 3),
                       ('c', 'C', 0, 'm3', 'bob', 'three', 8, 8);
            INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, arrival)
                VALUES ('m1', 'a', 'bob', 'one', 'one', 6, 1), ('m2', 'a', 'bob', 'two', 'two', 7, 2),
                       ('m3', 'c', 'bob', 'three', 'three', 8, 3);
            INSERT INTO membership (chat_id, user_id, list, pin_order, last_message_date, unread, read_through, revision, joined)
                VALUES ('a', 'me', 'main', 0, 7, 2, 0, 4, 0), ('a', 'ann', 'main', 0, 7, 1, 0, 4, 0),
                       ('b', 'me', 'main', 0, 3, 0, 0, 5, 0);
            UPDATE list_counter SET total = 2 WHERE user_id = 'me' AND list = 'main';
            INSERT INTO list_counter (user_id, list, total) VALUES ('ann', 'main', 1), ('ann', 'archive', 0);
            """)
        let store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        let columns = try db.makeStatement("SELECT name FROM pragma_table_info('chat') ORDER BY cid").fetchAll { row -> String in row[0] }
        #expect(!columns.contains { $0.hasPrefix("last_message") }, "\(columns)")
        let two = LastMessage(id: "m2", sender: "bob", text: "two", sentAt: 7)
        #expect(try store.allChats().chats.map(\.lastMessage) == [two, nil])
        #expect(try store.chat(id: "a", user: "ann")?.lastMessage == two)
        // A chat without members: whoever joins sees its last message and date.
        try store.apply(.addMembers(chat: "c", users: ["ann"]))
        #expect(try store.chat(id: "c", user: "ann")?.lastMessage == LastMessage(id: "m3", sender: "bob", text: "three", sentAt: 8))
        #expect(try store.chat(id: "c", user: "ann")?.lastMessageDate == 8)
    }

    /// Schema version 13: each chat's history becomes a chain (`message.previous`, the ends in
    /// the memberships or, for a chat without members, in its row), the (chat, sentAt, id) index
    /// and the messages' foreign key go, the messages keep their rowids as `seq`.
    @Test func aChatsHistoryBecomesAChain() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v12.sqlite")
        // Chat a: m3 (deleted, newest), m2, m1 and m0 inserted out of order; b: none; c: no members.
        try Self.makeFile(path, atVersion: 12, """
            INSERT INTO user (id, name, created_at) VALUES ('ann', 'Ann', 0);
            INSERT INTO chat (id, title, created_at) VALUES ('a', 'A', 0), ('b', 'B', 3), ('c', 'C', 0);
            INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, arrival, deleted)
                VALUES ('m2', 'a', 'bob', 'two', 'two', 7, 2, 0), ('m1', 'a', 'bob', 'one', 'one', 6, 1, 0),
                       ('n1', 'c', 'bob', 'c1', 'c1', 8, 3, 0), ('m3', 'a', 'bob', 'three', 'three', 9, 4, 1),
                       ('m0', 'a', 'bob', 'zero', 'zero', 6, 5, 0), ('n0', 'c', 'bob', 'c0', 'c0', 2, 6, 0);
            UPDATE store_count SET chats = 3, messages = 5;
            INSERT INTO membership (chat_id, user_id, list, pin_order, last_message_date, unread, read_through, revision, joined)
                VALUES ('a', 'me', 'main', 0, 7, 0, 9, 4, 0), ('a', 'ann', 'main', 0, 7, 0, 9, 4, 0),
                       ('b', 'me', 'main', 0, 3, 0, 0, 5, 0);
            UPDATE list_counter SET total = 2 WHERE user_id = 'me' AND list = 'main';
            INSERT INTO list_counter (user_id, list, total) VALUES ('ann', 'main', 1), ('ann', 'archive', 0);
            """)
        let store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        let indexes = try db.makeStatement("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'message'")
            .fetchAll { row -> String in row[0] }
        #expect(!indexes.contains("message_page") && indexes.count == 1, "\(indexes)")  // the unique ids' alone
        #expect(try db.makeStatement("SELECT COUNT(*) FROM pragma_foreign_key_list('message')").fetchValue(Int.self) == 0)
        // A file keeps the page size it was made with.
        #expect(try db.makeStatement("PRAGMA page_size").fetchValue(Int.self) == 4096)
        // The rowids stay; each message points at the one before it by (sentAt, id).
        let chain = try db.makeStatement("SELECT id, seq, (SELECT id FROM message AS p WHERE p.seq = message.previous) FROM message ORDER BY seq")
            .fetchAll { row -> String in "\(row[0] as String)@\(row[1] as Int64)<\(row[2] as String? ?? "-")" }
        #expect(chain == ["m2@1<m1", "m1@2<m0", "n1@3<n0", "m3@4<m2", "m0@5<-", "n0@6<-"])
        let ends = try db.makeStatement("SELECT chat_id || ':' || COALESCE(head, '-') || ':' || COALESCE(last, '-') FROM membership ORDER BY chat_id, user_id")
            .fetchAll { row -> String in row[0] }
        #expect(ends == ["a:4:1", "a:4:1", "b:-:-"])
        #expect(try db.makeStatement("SELECT COALESCE(head, '-') || ':' || COALESCE(last, '-') FROM chat ORDER BY id").fetchAll { row -> String in row[0] }
            == ["-:-", "-:-", "3:3"])
        #expect(try store.stats().messages == 5)
        #expect(try store.messages(chat: "a", limit: 10).items.map(\.id) == ["m2", "m1", "m0"])
        #expect(try store.chat(id: "a", user: "ann")?.lastMessage == LastMessage(id: "m2", sender: "bob", text: "two", sentAt: 7))
        // Posts go on from there: a late one between m1 and m2, a new last one, a join of c.
        try store.apply(.postMessage(Message(id: "m9", chat: "a", sender: "bob", text: "late", sentAt: 6)))
        try store.apply(.postMessage(Message(id: "m4", chat: "a", sender: "bob", text: "four", sentAt: 10)))
        #expect(try store.messages(chat: "a", limit: 10).items.map(\.id) == ["m4", "m2", "m9", "m1", "m0"])
        try store.apply(.addMembers(chat: "c", users: ["ann"]))
        #expect(try store.chat(id: "c", user: "ann")?.lastMessage?.id == "n1")
        #expect(try store.chat(id: "c", user: "ann")?.lastMessageDate == 8)
        try store.apply(.removeChat(id: "a"))
        #expect(try db.makeStatement("SELECT group_concat(id) FROM (SELECT id FROM message ORDER BY seq)").fetchValue(String.self) == "n1,n0")
        #expect(try store.stats().messages == 2)
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
        #expect(try db.makeStatement("PRAGMA page_size").fetchValue(Int.self) == ChatDatabase.newFilePageSize)
        // A user's memberships through `membership_user`, or by a scan that takes no index.
        func plan(_ sql: String) throws -> String {
            try db.makeStatement("EXPLAIN QUERY PLAN \(sql)").fetchAll { row -> String in row[3] }.joined(separator: "; ")
        }
        for sql in [ChatDatabase.pageSQL(.index), ChatDatabase.membershipsSQL(.index)] {
            let steps = try plan(sql)
            #expect(steps.contains("SEARCH membership USING INDEX membership_user (user_id=?"), "plan: \(steps)")
        }
        for sql in [ChatDatabase.pageSQL(.scan), ChatDatabase.membershipsSQL(.scan)] {
            let steps = try plan(sql)
            #expect(steps.contains("SCAN membership") && !steps.contains("membership_user"), "plan: \(steps)")
        }
        // The load reads in the order of what it walks: by id within a list and pin order.
        for access in [ChatDatabase.MembershipAccess.index, .scan] {
            let steps = try plan(ChatDatabase.membershipsSQL(access))
            #expect(!steps.contains("TEMP B-TREE"), "plan: \(steps)")
        }
        #expect(try test.store.users() == [User(id: "me", name: "me", createdAt: try #require(try test.store.user(id: "me")).createdAt)])
    }
}

extension MigrationTests {
    /// A database of schema version 6 (one account: the per-user state in the chat rows)
    /// becomes the single-user database of docs/PROTOCOL.md (Users and sessions): `me` a member of every chat with its
    /// unread count, read position, pin, list, mute and revision as they were.
    @Test func aSingleAccountDatabaseMigratesToTheUserMe() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("v6.sqlite")
        try Self.makeFile(path, atVersion: 6, """
            INSERT INTO chat (id, title, created_at, last_message_id, last_message_sender, last_message_text,
                last_message_sent_at, last_message_date, unread, revision, list, pin_order, muted, read_through)
            VALUES ('a', 'A', 0, 'm2', 'ann', 'two', 20, 20, 2, 4, 'main', 0, 1, 1),
                   ('b', 'B', 5, NULL, NULL, NULL, NULL, 5, 0, 5, 'archive', 3, 0, 0),
                   ('c', 'C', 7, 'm3', 'bob', 'three', 30, 30, 0, 6, 'main', 1, 0, 6);
            INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, arrival) VALUES
                ('m0', 'a', 'ann', 'zero', 'zero', 5, 1),
                ('m1', 'a', 'ann', 'one', 'one', 10, 2),
                ('m2', 'a', 'ann', 'two', 'two', 20, 3),
                ('m3', 'c', 'bob', 'three', 'three', 30, 6);
            INSERT INTO change_log (chat_id, kind) VALUES ('a', 'create'), ('a', 'update'), ('a', 'update'),
                ('a', 'update'), ('b', 'create'), ('c', 'create');
            UPDATE list_counters SET total = 2, chats = 1, messages = 2, unmuted_chats = 0, unmuted_messages = 0 WHERE list = 'main';
            UPDATE list_counters SET total = 1 WHERE list = 'archive';
            """)
        let store = try ChatDatabase(path: path)
        #expect(try store.users().map(\.id) == ["me"])
        let chats = try store.allChats().chats
        #expect(chats == [
            Chat(id: "b", title: "B", createdAt: 5, lastMessage: nil, lastMessageDate: 5, unread: 0, revision: 5, list: .archive, pinOrder: 3),
            Chat(id: "c", title: "C", createdAt: 7, lastMessage: LastMessage(id: "m3", sender: "bob", text: "three", sentAt: 30),
                 lastMessageDate: 30, unread: 0, revision: 6, pinOrder: 1),
            Chat(id: "a", title: "A", createdAt: 0, lastMessage: LastMessage(id: "m2", sender: "ann", text: "two", sentAt: 20),
                 lastMessageDate: 20, unread: 2, revision: 4, muted: true),
        ])
        #expect(try store.counters(of: .main) == ListCounters(total: 2, unread: UnreadCounters(chats: 1, messages: 2)))
        #expect(try store.counters(of: .archive) == ListCounters(total: 1))
        #expect(try store.members(ofChat: "a").map(\.id) == ["me"])
        // The read position came along: m1 and m2 are unread, m0 is not.
        try store.apply(.deleteMessage(id: "m0"))
        #expect(try store.chat(id: "a")?.unread == 2)
        try store.apply(.deleteMessage(id: "m1"))
        #expect(try store.chat(id: "a")?.unread == 1)
        #expect(try store.chat(id: "a")?.revision == 7)
        // New revisions continue after the old ones; `me` posting reads the chat.
        try store.apply(.postMessage(Message(id: "m4", chat: "a", sender: "me", text: "four", sentAt: 40)))
        #expect(try store.chat(id: "a")?.unread == 0)
        #expect(try store.chat(id: "a")?.revision == 8)
        #expect(try store.counters(of: .main) == ListCounters(total: 2))
        #expect(try store.changes(after: 7).changes.map(\.chatID) == ["a"])
    }

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
