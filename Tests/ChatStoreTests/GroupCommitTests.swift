import ChatModel
import Foundation
import Testing
import SQLite
import TestSupport

@testable import ChatStore

struct SimulatedFailure: Error {}

@Suite struct GroupCommitTests {
    @Test func oneBadEventFailsAloneAndItsNeighboursCommit() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        let results = try store.apply([
            .createChat(id: "a", title: "A", createdAt: 0),
            .createChat(id: "a", title: "again", createdAt: 0),
            message("m0", in: "missing", at: 1),
            message("m1", in: "a", "hello", at: 10),
            .createChat(id: "", title: "empty", createdAt: 0),
            message("m1", in: "a", "hello", at: 10),
            message("m1", in: "a", "changed", at: 10),
            .renameChat(id: "a", title: "Alpha"),
        ])
        #expect(results.count == 8)
        #expect(try results[0].get() == .chat(Chat(id: "a", title: "A", createdAt: 0, lastMessage: nil, lastMessageDate: 0, unread: 0, revision: 1)))
        #expect(results[1] == .failure(.conflict("chat 'a' already exists")))
        #expect(results[2] == .failure(.notFound(kind: "chat", id: "missing")))
        #expect(results[3] == .success(.posted(duplicate: false)))
        #expect(results[4] == .failure(.invalidParams(field: "chat", reason: "must not be empty")))
        #expect(results[5] == .success(.posted(duplicate: true)))
        guard case .failure(.conflict) = results[6] else { Issue.record("expected a conflict: \(results[6])"); return }
        guard case .success(.chat(let renamed)) = results[7] else { Issue.record("expected a chat: \(results[7])"); return }
        #expect(renamed.title == "Alpha" && renamed.unread == 1 && renamed.lastMessage?.text == "hello")
        #expect(try store.chat(id: "a") == renamed)
        #expect(try store.stats() == StoreStats(chats: 1, messages: 1, latestChangeSequence: 3))
    }

    @Test func aFailedEventInsideAGroupLeavesNoTrace() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let before = try store.allChats()
        let results = try store.apply([message("m1", in: "nope", at: 5), .removeChat(id: "zzz")])
        #expect(results.allSatisfy { if case .failure = $0 { true } else { false } })
        #expect(try store.allChats() == before)
        #expect(try store.changes(after: before.latestSequence).changes.isEmpty)
    }

    /// Events run without a savepoint each; a refusal that comes before its event wrote anything
    /// needs no undo, and the group is applied once.
    @Test func aRefusalBeforeAnyWriteAppliesTheGroupOnce() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        var applied: [ChatEvent] = []
        store.afterEachEvent = { applied.append($0) }
        let group = [message("m1", in: "nope", at: 5), message("m2", in: "a", at: 6), message("m2", in: "a", "other", at: 6)]
        let results = try store.apply(group)
        store.afterEachEvent = nil
        #expect(results[0] == .failure(.notFound(kind: "chat", id: "nope")))
        #expect(results[1] == .success(.posted(duplicate: false)))
        guard case .failure(.conflict) = results[2] else { Issue.record("expected a conflict: \(results[2])"); return }
        #expect(applied == [group[1]])
        #expect(try store.stats() == StoreStats(chats: 1, messages: 1, latestChangeSequence: 2))
    }

    /// An event refused after it wrote is undone alone: the transaction rolls back and the group
    /// is applied again with a savepoint around each event.
    @Test func anEventRefusedAfterItWroteIsUndoneAlone() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let before = try store.latestChangeSequence()
        let refused = message("m2", in: "a", at: 20)
        var applied: [ChatEvent] = []
        store.afterEachEvent = { event in
            applied.append(event)
            if event == refused { throw ChatError.conflict("refused after writing") }
        }
        let group = [message("m1", in: "a", at: 10), refused, message("m3", in: "a", at: 30)]
        let results = try store.apply(group)
        store.afterEachEvent = nil
        #expect(results == [
            .success(.posted(duplicate: false)), .failure(.conflict("refused after writing")), .success(.posted(duplicate: false)),
        ])
        // Applied up to the refusal, then again from the start.
        #expect(applied == [group[0], group[1], group[0], group[1], group[2]])
        #expect(try store.messages(chat: "a", before: nil, limit: 10).items.map(\.id) == ["m3", "m1"])
        let chat = try #require(try store.chat(id: "a"))
        #expect(chat.unread == 2 && chat.lastMessage?.id == "m3")
        #expect(try store.stats() == StoreStats(chats: 1, messages: 2, latestChangeSequence: before + 2))
    }

    @Test func aTransactionThatFailsBeforeCommitCommitsNothing() throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let before = try store.allChats()
        store.beforeCommit = { throw SimulatedFailure() }
        #expect(throws: SimulatedFailure.self) {
            try store.apply([message("m1", in: "a", at: 5), .createChat(id: "b", title: "B", createdAt: 1)])
        }
        store.beforeCommit = nil
        #expect(try store.allChats() == before)
        #expect(try store.stats().messages == 0)
        // The store is still usable.
        #expect(try store.apply(message("m1", in: "a", at: 5)) == .posted(duplicate: false))
    }

    /// The files as a crash would leave them in the middle of a group commit: copied while the
    /// transaction is open, with uncommitted pages already spilled into the WAL.
    @Test func aCrashInTheMiddleOfAGroupCommitLeavesNoneOfTheGroup() throws {
        let test = try TestStore(options: StoreOptions(cacheSizeKiB: 64))
        let store = test.store
        try store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        _ = try store.apply((0..<50).map { message("early-\($0)", in: "a", at: Int64($0)) })
        let crashDirectory = try TemporaryDirectory()
        let crashPath = crashDirectory.path("crash.sqlite")
        let walBefore = try fileSize(test.path + "-wal")
        var walDuring = 0
        store.beforeCommit = {
            walDuring = try fileSize(test.path + "-wal")
            try FileManager.default.copyItem(atPath: test.path, toPath: crashPath)
            try FileManager.default.copyItem(atPath: test.path + "-wal", toPath: crashPath + "-wal")
        }
        let group = (0..<3000).map {
            message("late-\($0)", in: "a", String(repeating: "text ", count: 20), at: Int64(1000 + $0))
        }
        let results = try store.apply(group)
        store.beforeCommit = nil
        #expect(results.count == 3000)
        #expect(walDuring > walBefore, "the group should have spilled uncommitted pages into the WAL")
        #expect(try store.stats().messages == 3050)

        let recovered = try ChatDatabase(path: crashPath)
        #expect(try recovered.stats().messages == 50)
        #expect(try recovered.chat(id: "a")?.unread == 50)
        #expect(try recovered.chat(id: "a")?.lastMessage?.id == "early-49")
    }

    @Test func aConnectionClosedWithoutCommitLeavesNothing() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        do {
            let raw = try Database(path: test.path)
            try raw.execute("""
                BEGIN IMMEDIATE;
                INSERT INTO chat (id, title, created_at) VALUES ('b', 'B', 0);
                INSERT INTO membership (chat_id, user_id, last_message_date, read_through, revision, joined) VALUES ('b', 'me', 0, 0, 99, 99);
                INSERT INTO change_log (chat_id, kind) VALUES ('b', 'create');
                """)
        }
        #expect(try test.store.chat(id: "b") == nil)
        #expect(try test.store.latestChangeSequence() == 1)
        try test.store.apply(.createChat(id: "b", title: "B", createdAt: 0))
    }
}

func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
}
