import ChatModel
import Foundation
import SQLite
import Testing
import TestSupport
@testable import ChatStore

/// A chat's history as a chain (schema version 13, `ChatDatabase+History.swift`): pages, dates
/// and late posts agree with a sorted list, and a walk to a position starts at the mark after
/// it, so that it passes about `markInterval` messages at most, however long the chat.
@Suite struct ChatHistoryTests {
    static let interval = Int(ChatDatabase.markInterval)

    /// The store's messages of `chat`, newest first, in the order a sorted list has them.
    static func sorted(_ messages: [Message]) -> [Message] {
        messages.sorted { $0.sentAt != $1.sentAt ? $0.sentAt > $1.sentAt : ReferenceModel.byteLess($1.id, $0.id) }
    }

    /// Posts `messages` through the store, 500 a transaction.
    static func post(_ messages: [Message], to store: ChatDatabase) throws {
        for start in stride(from: 0, to: messages.count, by: 500) {
            for result in try store.apply(messages[start..<min(start + 500, messages.count)].map { .postMessage($0) }) {
                _ = try result.get()
            }
        }
    }

    /// Random times (many late posts, ties of sentAt), some deletes: every page, every date and
    /// every position gives what the sorted list gives, for a chat with a member (the chain's
    /// ends in the membership) and one without (in the chat row).
    @Test(arguments: [(3, ["me"]), (2026, [])] as [(UInt64, [String])])
    func pagesDatesAndPositionsAgreeWithASortedList(seed: UInt64, members: [String]) throws {
        let test = try TestStore()
        let store = test.store
        var random = SeededGenerator(seed: seed)
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0, members: members))
        let posted = (0..<1_500).map { i in
            Message(id: "m\(Int.random(in: 0..<1_000_000, using: &random))-\(i)", chat: "c", sender: "me", text: "t\(i)",
                    sentAt: Int64.random(in: 0..<600, using: &random))
        }
        try Self.post(posted, to: store)
        var deleted: Set<String> = []
        for _ in 0..<200 {
            let id = posted[Int.random(in: 0..<posted.count, using: &random)].id
            try store.apply(.deleteMessage(id: id))
            deleted.insert(id)
        }
        let expected = Self.sorted(posted.filter { !deleted.contains($0.id) })
        #expect(try store.messages(chat: "c", limit: 10_000).items == expected)
        if !members.isEmpty { #expect(try store.chat(id: "c")?.lastMessage?.id == expected.first?.id) }
        for _ in 0..<60 {
            let before = Int64.random(in: -1...601, using: &random)
            #expect(try store.messages(chat: "c", before: before, limit: 7).items == Array(expected.filter { $0.sentAt < before }.prefix(7)))
            let position = MessagePosition(sentAt: Int64.random(in: 0..<600, using: &random), id: "m\(Int.random(in: 0..<1_000_000, using: &random))")
            let after = expected.filter {
                $0.sentAt < position.sentAt || ($0.sentAt == position.sentAt && ReferenceModel.byteLess($0.id, position.id))
            }
            #expect(try store.messages(chat: "c", after: position, limit: 7).items == Array(after.prefix(7)), "after \(position)")
        }
        // Each mark is a message of the chat at its position.
        let marks = try store.db.makeStatement("SELECT seq FROM message_mark WHERE chat_id = 'c'").fetchAll { row -> Int64 in row[0] }
        #expect(!marks.isEmpty && marks.allSatisfy { $0 % ChatDatabase.markInterval == 0 })
    }

    /// A chat of 3,000 messages in order: a page from any date, and a late post to any place,
    /// walk at most one mark's interval (and the page); a post after the newest walks nothing.
    /// Then a sender whose every post goes before all the others (the worst for a chain without
    /// marks: each would walk the whole chat) walks at most about twice that, since every
    /// `markInterval`th of those posts is a mark in that place.
    @Test func aWalkPassesAtMostAboutOneMarksIntervalHoweverLongTheChat() throws {
        let test = try TestStore()
        let store = test.store
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0, members: ["me"]))
        let inOrder = (0..<3_000).map { i in Message(id: "m\(i)", chat: "c", sender: "me", text: "t", sentAt: Int64(10_000 + 10 * i)) }
        try Self.post(inOrder, to: store)
        var random = SeededGenerator(seed: 5)
        for _ in 0..<40 {
            let before = Int64.random(in: 10_000...40_000, using: &random)
            let steps = store.chainSteps
            let page = try store.messages(chat: "c", before: before, limit: 10)
            #expect(page.items == Array(Self.sorted(inOrder).filter { $0.sentAt < before }.prefix(10)))
            #expect(store.chainSteps - steps <= Self.interval + 12, "before \(before): \(store.chainSteps - steps) steps")
        }
        var steps = store.chainSteps
        try store.apply(.postMessage(Message(id: "new", chat: "c", sender: "me", text: "t", sentAt: 50_000)))
        #expect(store.chainSteps == steps, "a post in order walks nothing")

        var late: [Message] = []
        var most = 0
        for i in 0..<1_000 {
            let message = Message(id: "late\(i)", chat: "c", sender: "me", text: "t", sentAt: Int64(9_999 - i))
            steps = store.chainSteps
            try store.apply(.postMessage(message))
            most = max(most, store.chainSteps - steps)
            late.append(message)
        }
        // The first of them walk from the first mark of the chat to its start (an interval), and
        // a little more with each until one of them is a mark.
        #expect(most <= 2 * Self.interval + 3, "the longest walk of a late post: \(most) steps")
        let all = Self.sorted(inOrder + late + [Message(id: "new", chat: "c", sender: "me", text: "t", sentAt: 50_000)])
        #expect(try store.messages(chat: "c", limit: 10_000).items == all)
        #expect(try store.chat(id: "c")?.lastMessage?.id == "new")
        // The chat's removal takes its messages and marks.
        try store.apply(.removeChat(id: "c"))
        #expect(try store.db.makeStatement("SELECT (SELECT COUNT(*) FROM message) + (SELECT COUNT(*) FROM message_mark)").fetchValue(Int.self) == 0)
        #expect(try store.stats().messages == 0)
    }
}
