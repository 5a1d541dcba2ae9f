import ChatModel
import Foundation
import Testing
import TestSupport

@testable import ChatStore

/// A store on a fresh temporary file, kept alive with its directory.
/// A store on a file in its own temporary directory. Keep the `TestStore` while the store is in
/// use: the directory goes with it, and a store whose file was deleted refuses writes.
struct TestStore {
    let directory: TemporaryDirectory
    let store: ChatDatabase
    var path: String { directory.path("chat.sqlite") }

    /// `durability: .normal` unless a test names its options: the store's semantics do not depend
    /// on it, and an fsync per commit would make the randomized suites many times slower.
    init(options: StoreOptions = StoreOptions(durability: .normal)) throws {
        directory = try TemporaryDirectory()
        store = try ChatDatabase(path: directory.path("chat.sqlite"), options: options)
    }
}

func message(_ id: String, in chat: String, from sender: String = "ann", _ text: String = "hi", at sentAt: Int64) -> ChatEvent {
    .postMessage(Message(id: id, chat: chat, sender: sender, text: text, sentAt: sentAt))
}

@Suite struct EventSemanticsTests {
    @Test func createdChatHasNoMessageAndSortsByCreationDate() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        let result = try store.apply(.createChat(id: "a", title: "Alpha", createdAt: 100))
        guard case .chat(let chat) = result else { Issue.record("expected a chat, got \(result)"); return }
        #expect(chat.id == "a" && chat.title == "Alpha" && chat.createdAt == 100)
        #expect(chat.lastMessage == nil && chat.lastMessageDate == 100 && chat.unread == 0)
        #expect(try store.chat(id: "a") == chat)
        try store.apply(.createChat(id: "b", title: "Beta", createdAt: 200))
        #expect(try store.allChats().chats.map(\.id) == ["b", "a"])
    }

    @Test func creatingAnExistingChatIsAConflictAndChangesNothing() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "Alpha", createdAt: 100))
        let before = try store.latestChangeSequence()
        #expect(throws: ChatError.conflict("chat 'a' already exists")) {
            try store.apply(.createChat(id: "a", title: "Other", createdAt: 5))
        }
        #expect(try store.chat(id: "a")?.title == "Alpha")
        #expect(try store.latestChangeSequence() == before)
    }

    @Test func postingCountsUnreadAndMovesTheChatUp() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 100))
        try store.apply(.createChat(id: "b", title: "B", createdAt: 200))
        let revision = try #require(try store.chat(id: "a")).revision
        #expect(try store.apply(message("m1", in: "a", at: 300)) == .posted(duplicate: false))
        let chat = try #require(try store.chat(id: "a"))
        #expect(chat.unread == 1)
        #expect(chat.lastMessage == LastMessage(id: "m1", sender: "ann", text: "hi", sentAt: 300))
        #expect(chat.lastMessageDate == 300)
        #expect(chat.revision > revision)
        #expect(try store.allChats().chats.map(\.id) == ["a", "b"])
    }

    @Test func aLateMessageIsCountedButDoesNotMoveTheChat() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("m2", in: "a", at: 500))
        try store.apply(message("m1", in: "a", "late", at: 400))
        let chat = try #require(try store.chat(id: "a"))
        #expect(chat.lastMessage?.id == "m2" && chat.lastMessageDate == 500 && chat.unread == 2)
        #expect(try store.messages(chat: "a", before: nil, limit: 10).items.map(\.id) == ["m2", "m1"])
    }

    @Test func aMessageOlderThanTheChatStillBecomesItsFirstLastMessage() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 1000))
        try store.apply(message("m1", in: "a", at: 10))
        let chat = try #require(try store.chat(id: "a"))
        #expect(chat.lastMessage?.id == "m1" && chat.lastMessageDate == 10)
    }

    @Test func equalSentAtIsBrokenByTheLargerIdBytewise() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("m-b", in: "a", at: 50))
        try store.apply(message("m-B", in: "a", at: 50))  // "B" < "b" bytewise: not later
        #expect(try store.chat(id: "a")?.lastMessage?.id == "m-b")
        try store.apply(message("m-c", in: "a", at: 50))
        #expect(try store.chat(id: "a")?.lastMessage?.id == "m-c")
    }

    @Test func deletingTheLastMessageFallsBackAndMovesTheChatDown() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(.createChat(id: "b", title: "B", createdAt: 0))
        try store.apply(message("a1", in: "a", at: 100))
        try store.apply(message("b1", in: "b", at: 200))
        try store.apply(message("a2", in: "a", at: 300))
        #expect(try store.allChats().chats.map(\.id) == ["a", "b"])
        let before = try #require(try store.chat(id: "a"))
        #expect(try store.apply(.deleteMessage(id: "a2")) == .done)
        let after = try #require(try store.chat(id: "a"))
        #expect(after.lastMessage?.id == "a1" && after.lastMessageDate == 100)
        #expect(after.unread == before.unread - 1, "a deleted unread message is no longer counted")
        #expect(after.revision > before.revision)
        #expect(try store.allChats().chats.map(\.id) == ["b", "a"])
        try store.apply(.deleteMessage(id: "a1"))
        let empty = try #require(try store.chat(id: "a"))
        #expect(empty.lastMessage == nil && empty.lastMessageDate == 0 && empty.unread == 0)
    }

    @Test func deletingAnOlderReadMessageChangesNoRowAndNoRevision() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("a1", in: "a", at: 100))
        try store.apply(.markRead(id: "a"))
        try store.apply(message("a2", in: "a", at: 300))
        let before = try #require(try store.chat(id: "a"))
        #expect(before.unread == 1)
        let sequence = try store.latestChangeSequence()
        try store.apply(.deleteMessage(id: "a1"))
        #expect(try store.chat(id: "a") == before)
        #expect(try store.latestChangeSequence() == sequence)
        #expect(try store.messages(chat: "a", before: nil, limit: 10).items.map(\.id) == ["a2"])
        // A repeated delete succeeds and changes nothing.
        #expect(try store.apply(.deleteMessage(id: "a1")) == .done)
        #expect(try store.latestChangeSequence() == sequence)
    }

    @Test func editingTheLastMessageChangesTheRowButNotUnread() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("a1", in: "a", "first", at: 100))
        try store.apply(message("a2", in: "a", "second", at: 200))
        let before = try #require(try store.chat(id: "a"))
        try store.apply(.editMessage(id: "a2", text: "second!", editedAt: 250))
        let after = try #require(try store.chat(id: "a"))
        #expect(after.lastMessage?.text == "second!" && after.unread == 2 && after.revision > before.revision)
        let sequence = try store.latestChangeSequence()
        try store.apply(.editMessage(id: "a1", text: "first!", editedAt: 260))
        #expect(try store.chat(id: "a") == after)
        #expect(try store.latestChangeSequence() == sequence)
        let messages = try store.messages(chat: "a", before: nil, limit: 10).items
        #expect(messages.map(\.text) == ["second!", "first!"])
        #expect(messages.map(\.editedAt) == [250, 260])
        // Same text again: the row shows nothing new.
        try store.apply(.editMessage(id: "a2", text: "second!", editedAt: 270))
        #expect(try store.latestChangeSequence() == sequence)
    }

    @Test func editingOrDeletingAnUnknownMessageIsNotFound() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("a1", in: "a", at: 100))
        try store.apply(.deleteMessage(id: "a1"))
        #expect(throws: ChatError.notFound(kind: "message", id: "zz")) { try store.apply(.deleteMessage(id: "zz")) }
        #expect(throws: ChatError.notFound(kind: "message", id: "zz")) {
            try store.apply(.editMessage(id: "zz", text: "x", editedAt: nil))
        }
        #expect(throws: ChatError.notFound(kind: "message", id: "a1")) {
            try store.apply(.editMessage(id: "a1", text: "x", editedAt: nil))
        }
    }

    @Test func unknownChatIsNotFoundForEveryChatEvent() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        let notFound = ChatError.notFound(kind: "chat", id: "nope")
        #expect(throws: notFound) { try store.apply(.renameChat(id: "nope", title: "x")) }
        #expect(throws: notFound) { try store.apply(.removeChat(id: "nope")) }
        #expect(throws: notFound) { try store.apply(.markRead(id: "nope")) }
        #expect(throws: notFound) { try store.apply(message("m", in: "nope", at: 1)) }
        #expect(throws: notFound) { try store.messages(chat: "nope", before: nil, limit: 5).items }
        #expect(try store.latestChangeSequence() == 0)
        #expect(try store.stats() == StoreStats(chats: 0, messages: 0, latestChangeSequence: 0))
    }

    @Test func repeatedPostIsADuplicateEvenAfterEditOrDelete() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("m1", in: "a", "hello", at: 100))
        try store.apply(message("m2", in: "a", "bye", at: 200))
        let sequence = try store.latestChangeSequence()
        let chat = try store.chat(id: "a")
        #expect(try store.apply(message("m1", in: "a", "hello", at: 100)) == .posted(duplicate: true))
        #expect(try store.chat(id: "a") == chat && store.latestChangeSequence() == sequence)

        try store.apply(.editMessage(id: "m1", text: "hello (edited)", editedAt: 300))
        #expect(try store.apply(message("m1", in: "a", "hello", at: 100)) == .posted(duplicate: true))
        #expect(throws: ChatError.self) { try store.apply(message("m1", in: "a", "hello (edited)", at: 100)) }

        try store.apply(.deleteMessage(id: "m2"))
        let afterDelete = try store.chat(id: "a")
        #expect(try store.apply(message("m2", in: "a", "bye", at: 200)) == .posted(duplicate: true))
        #expect(try store.chat(id: "a") == afterDelete)
        #expect(try store.chat(id: "a")?.unread == 1)
    }

    @Test(arguments: [
        message("m1", in: "a", "other text", at: 100),
        message("m1", in: "a", from: "bob", "hello", at: 100),
        message("m1", in: "a", "hello", at: 101),
        message("m1", in: "b", "hello", at: 100),
    ])
    func reusingAMessageIdWithOtherContentIsAConflict(_ event: ChatEvent) throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(.createChat(id: "b", title: "B", createdAt: 0))
        try store.apply(message("m1", in: "a", "hello", at: 100))
        let list = try store.allChats()
        do {
            try store.apply(event)
            Issue.record("expected a conflict")
        } catch let error as ChatError {
            guard case .conflict(let text) = error else { Issue.record("expected a conflict, got \(error)"); return }
            #expect(text.contains("'m1'"))
        }
        #expect(try store.allChats() == list)
    }

    @Test func invalidIdentifiersAreInvalidParams() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        #expect(throws: ChatError.invalidParams(field: "chat", reason: "must not be empty")) {
            try store.apply(.createChat(id: "", title: "x", createdAt: 0))
        }
        let long = String(repeating: "x", count: 129)
        #expect(throws: ChatError.self) { try store.apply(.createChat(id: long, title: "x", createdAt: 0)) }
        try store.apply(.createChat(id: String(repeating: "x", count: 128), title: "x", createdAt: 0))
        #expect(throws: ChatError.invalidParams(field: "id", reason: "must not be empty")) {
            try store.apply(message("", in: String(repeating: "x", count: 128), at: 1))
        }
        #expect(try store.chatCount() == 1)
    }

    @Test func renameAndMarkReadChangeTheRevisionOnlyWhenSomethingChanges() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(message("m1", in: "a", at: 10))
        let start = try #require(try store.chat(id: "a"))
        let sequence = try store.latestChangeSequence()
        #expect(try store.apply(.renameChat(id: "a", title: "A")) == .chat(start))
        #expect(try store.latestChangeSequence() == sequence)

        guard case .chat(let renamed) = try store.apply(.renameChat(id: "a", title: "Team")) else {
            Issue.record("expected a chat"); return
        }
        #expect(renamed.title == "Team" && renamed.revision > start.revision)
        guard case .chat(let read) = try store.apply(.markRead(id: "a")) else { Issue.record("expected a chat"); return }
        #expect(read.unread == 0 && read.revision > renamed.revision)
        let afterRead = try store.latestChangeSequence()
        #expect(try store.apply(.markRead(id: "a")) == .chat(read))
        #expect(try store.latestChangeSequence() == afterRead)
    }

    @Test func removingAChatRemovesItsMessages() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        try store.apply(.createChat(id: "b", title: "B", createdAt: 0))
        try store.apply(message("m1", in: "a", at: 10))
        try store.apply(message("m2", in: "b", at: 10))
        #expect(try store.apply(.removeChat(id: "a")) == .done)
        #expect(try store.chat(id: "a") == nil)
        #expect(try store.stats().messages == 1)
        #expect(throws: ChatError.notFound(kind: "message", id: "m1")) { try store.apply(.deleteMessage(id: "m1")) }
        // The id is free again, and so is the message id.
        try store.apply(.createChat(id: "a", title: "A again", createdAt: 5))
        #expect(try store.apply(message("m1", in: "a", "new", at: 20)) == .posted(duplicate: false))
    }

    @Test func revisionsNeverRepeatWhenAChatIsRemovedAndCreatedAgain() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        guard case .chat(let first) = try store.apply(.createChat(id: "a", title: "A", createdAt: 0)) else { return }
        try store.apply(.removeChat(id: "a"))
        guard case .chat(let second) = try store.apply(.createChat(id: "a", title: "A", createdAt: 0)) else { return }
        #expect(second.revision > first.revision)
    }
}
