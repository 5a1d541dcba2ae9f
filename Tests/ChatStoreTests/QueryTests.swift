import ChatModel
import Foundation
import Testing
import SQLite
import TestSupport

@testable import ChatStore

@Suite struct QueryTests {
    @Test func theListIsOrderedByDateDescendingThenIdBytewise() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        for id in ["a", "é", "B", "z", "aa", "Z9"] {
            try store.apply(.createChat(id: id, title: id, createdAt: 100))
        }
        try store.apply(.createChat(id: "old", title: "old", createdAt: 50))
        try store.apply(.createChat(id: "new", title: "new", createdAt: 150))
        let expected = ["new", "B", "Z9", "a", "aa", "z", "é", "old"]
        let all = try store.allChats()
        #expect(all.chats.map(\.id) == expected)
        #expect(all.latestSequence == 8)
        #expect(zip(all.chats, all.chats.dropFirst()).allSatisfy { $0.orderKey < $1.orderKey })
        #expect(try store.chatCount() == 8)

        let pages = try stride(from: 0, to: 10, by: 3).flatMap { try store.chats(offset: $0, limit: 3) }
        #expect(pages.map(\.id) == expected)
        #expect(try store.chats(offset: 7, limit: 100).map(\.id) == ["old"])
        #expect(try store.chats(offset: 20, limit: 5).isEmpty)
        #expect(throws: ChatError.self) { try store.chats(offset: -1, limit: 5) }

        let positions = try store.positions(of: expected + ["missing"])
        for (index, id) in expected.enumerated() { #expect(positions[id] == .some(index)) }
        #expect(positions["missing"] == .some(nil))
    }

    @Test func messagePagesAreNewestFirstAndSkipDeletedMessages() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(.createChat(id: "b", title: "B", createdAt: 0))
        for i in 0..<10 { try store.apply(message("a\(i)", in: "a", "text \(i)", at: Int64(i * 10))) }
        try store.apply(message("a5b", in: "a", at: 50))
        try store.apply(message("b0", in: "b", at: 55))
        try store.apply(.deleteMessage(id: "a7"))
        #expect(try store.messages(chat: "a", before: nil, limit: 4).items.map(\.id) == ["a9", "a8", "a6", "a5b"])
        #expect(try store.messages(chat: "a", before: 50, limit: 3).items.map(\.id) == ["a4", "a3", "a2"])
        #expect(try store.messages(chat: "a", before: 0, limit: 3).items.isEmpty)
        let first = try #require(try store.messages(chat: "a", before: 10, limit: 5).items.first)
        #expect(first == Message(id: "a0", chat: "a", sender: "ann", text: "text 0", sentAt: 0, editedAt: nil))
        // Deleting the unread a7 changed a's unread count: one more change.
        #expect(try store.stats() == StoreStats(chats: 2, messages: 11, latestChangeSequence: 15))
    }

    @Test func theFirstPageIncludesMessagesAtTheLatestPossibleTime() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("late", in: "a", at: .max))
        try store.apply(message("early", in: "a", at: .min))
        #expect(try store.messages(chat: "a", before: nil, limit: 5).items.map(\.id) == ["late", "early"])
        #expect(try store.messages(chat: "a", before: .max, limit: 5).items.map(\.id) == ["early"])
    }

    @Test func changesListEachChangedChatOnceInOrderOfItsLatestChange() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        for id in ["a", "b", "c", "d"] { try store.apply(.createChat(id: id, title: id, createdAt: 0)) }
        let afterCreates = try store.latestChangeSequence()
        #expect(afterCreates == 4)
        try store.apply(message("m1", in: "a", at: 10))
        try store.apply(.renameChat(id: "b", title: "B"))
        try store.apply(.removeChat(id: "c"))
        try store.apply(message("m2", in: "a", at: 20))
        try store.apply(.renameChat(id: "d", title: "d"))  // no change: no log row

        let (changes, latest) = try store.changes(after: afterCreates)
        #expect(latest == 9)  // the removal logs the chat and its member me's membership
        #expect(changes.map(\.chatID) == ["b", "c", "a"])
        #expect(changes[0].chat == (try store.chat(id: "b")))
        #expect(changes[1].chat == nil)
        #expect(changes[2].chat?.lastMessage?.id == "m2")
        #expect(try store.changes(after: latest) == ([], latest))
        #expect(try store.changes(after: 0).changes.map(\.chatID) == ["d", "b", "c", "a"])
        // Every committed row change is in the log with its revision as sequence.
        for change in changes { if let chat = change.chat { #expect(chat.revision <= latest) } }
    }

    @Test func dataVersionMovesWhenAnotherConnectionCommits() throws {
        let test = try TestStore()
        let other = try ChatDatabase(path: test.path)
        let version = try test.store.dataVersion()
        try test.store.apply(.createChat(id: "own", title: "own", createdAt: 0))
        #expect(try test.store.dataVersion() == version)
        try other.apply(.createChat(id: "other", title: "other", createdAt: 0))
        #expect(try test.store.dataVersion() != version)
        #expect(try test.store.changes(after: 1).changes.map(\.chatID) == ["other"])
    }

    @Test func aReadOnlyStoreReadsButCannotWrite() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let reader = try ChatDatabase(path: test.path, options: StoreOptions(readOnly: true))
        #expect(try reader.chat(id: "a")?.title == "A")
        #expect(throws: SQLiteError.self) { try reader.apply(.createChat(id: "b", title: "B", createdAt: 0)) }
    }

    @Test func sqliteErrorsCarryCodeMessageAndSQL() throws {
        let db = try Database(path: ":memory:")
        do {
            try db.execute("SELECT * FROM nowhere")
            Issue.record("expected an error")
        } catch {
            #expect(error.resultCode == .error)
            #expect(error.message.contains("nowhere"))
            #expect(error.sql == "SELECT * FROM nowhere")
            #expect(error.description.contains("no such table"))
        }
    }
}

@Suite struct ListOrderTests {
    /// `allChats()` sorts in memory; the pages come from SQLite's index. Both must agree.
    @Test func theWholeListMatchesTheIndexOrder() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        var random = SeededGenerator(seed: 7)
        let alphabet = Array("aAbB_-é日z0")
        let events = (0..<2000).map { i -> ChatEvent in
            let id = String((0..<Int.random(in: 1...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! }) + "\(i % 3)"
            return .createChat(id: id, title: "t", createdAt: Int64.random(in: 0...20, using: &random))
        }
        _ = try store.apply(events)
        let all = try store.allChats().chats
        #expect(all.count == (try store.chatCount()))
        #expect(all == (try store.chats(offset: 0, limit: all.count)))
    }
}

extension ListOrderTests {
    @Test func sparseRowIDsStillLoadInListOrder() throws {
        let test = try TestStore()
        for i in 0..<20 { try test.store.apply(.createChat(id: "c\(i)", title: "t", createdAt: Int64(i % 4))) }
        try Database(path: test.path).execute("""
            INSERT INTO chat (rowid, id, title, created_at)
            VALUES (1000000000000, 'far', 'far', 2), (-5, 'negative', 'n', 3);
            INSERT INTO membership (chat_id, user_id, last_message_date, read_through, revision, joined)
            VALUES ('far', 'me', 2, 0, 99, 99), ('negative', 'me', 3, 0, 100, 100);
            """)
        let all = try test.store.allChats().chats
        #expect(all.count == 22)
        #expect(all == (try test.store.chats(offset: 0, limit: 100)))
    }
}

extension ListOrderTests {
    /// A membership's `chat_rowid` is a hint: chat rows renumbered (as a VACUUM may do) or a
    /// missing hint still load each chat with its own title and last message, and the change
    /// log's reader still reads each.
    @Test func staleChatRowIDHintsStillLoadEachChatsOwnRow() throws {
        let test = try TestStore()
        for i in 0..<20 {
            try test.store.apply(.createChat(id: "c\(i)", title: "title \(i)", createdAt: Int64(i % 4)))
            try test.store.apply(.postMessage(Message(id: "m\(i)", chat: "c\(i)", sender: "s", text: "text \(i)", sentAt: Int64(100 + i))))
        }
        let before = try test.store.allChats().chats
        try Database(path: test.path).execute("""
            UPDATE chat SET rowid = -rowid;
            UPDATE chat SET rowid = 21 + rowid;
            UPDATE membership SET chat_rowid = NULL WHERE chat_id = 'c3';
            """)
        let all = try test.store.allChats().chats
        #expect(all == before)
        #expect(all == (try test.store.chats(offset: 0, limit: 100)))
        #expect(all.allSatisfy { $0.title == "title \($0.id.dropFirst())" })
        // The change log's reader finds them by their hints too: each stale one by its id.
        let changes = try test.store.changes(after: 0).changes
        #expect(changes.map(\.chatID) == (0..<20).map { "c\($0)" })
        for change in changes { #expect(change.chat == before.first { $0.id == change.chatID }, "\(change.chatID)") }
    }
}
