import ChatModel
import Foundation
import Testing
import TestSupport

@testable import ChatStore

/// Random event streams applied to the store and to `ReferenceModel`; after every step, the
/// whole list, every row and every outcome must agree, and revisions must move exactly when a row
/// changed.
@Suite struct ReferenceModelTests {
    static let chatIDs = ["a", "B", "é", "z1", "Zz", "aa", ""]
    static let senders = ["ann", "bob"]
    static let texts = ["hi", "hello", "ok", "👍"]

    struct EventSource {
        var random: SeededGenerator
        var postedMessageIDs: [String] = []
        var nextMessage = 0
        var firstPosts: [Message] = []

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

        mutating func messageID() -> String {
            if !postedMessageIDs.isEmpty, Int.random(in: 0..<10, using: &random) < 8 { return pick(postedMessageIDs) }
            return "m\(Int.random(in: 0..<200, using: &random))"
        }

        mutating func next() -> ChatEvent {
            let roll = Int.random(in: 0..<125, using: &random)
            let chat = pick(ReferenceModelTests.chatIDs.dropLast().map { $0 } + (roll % 7 == 0 ? [""] : []))
            switch roll {
            case 0..<10: return .createChat(id: chat, title: pick(["A", "B"]), createdAt: Int64.random(in: 0...60, using: &random))
            case 10..<16: return .renameChat(id: chat, title: pick(["A", "B", "C"]))
            case 16..<19: return .removeChat(id: chat)
            case 19..<26: return .markRead(id: chat)
            case 26..<34 where !firstPosts.isEmpty:
                var repeated = pick(firstPosts)
                if Bool.random(using: &random) { repeated.text = pick(ReferenceModelTests.texts) }
                return .postMessage(repeated)
            case 34..<70:
                nextMessage += 1
                let message = Message(
                    id: "n\(nextMessage)", chat: chat, sender: pick(ReferenceModelTests.senders),
                    text: pick(ReferenceModelTests.texts), sentAt: Int64.random(in: 0...60, using: &random))
                postedMessageIDs.append(message.id)
                firstPosts.append(message)
                return .postMessage(message)
            case 70..<82:
                return .editMessage(id: messageID(), text: pick(ReferenceModelTests.texts), editedAt: Int64.random(in: 0...99, using: &random))
            case 82..<100:
                return .deleteMessage(id: messageID())
            case 100..<107: return .pinChat(id: chat)
            case 107..<110: return .unpinChat(id: chat)
            case 110..<114:
                let list = pick(ChatList.allCases)
                var ids = (0..<Int.random(in: 0...6, using: &random)).map { _ in pick(ReferenceModelTests.chatIDs.dropLast().map { $0 }) }
                if roll % 3 != 0 { var seen = Set<String>(); ids = ids.filter { seen.insert($0).inserted } }
                return .setPinned(list: list, chats: ids)
            case 114..<120: return .moveChat(id: chat, to: pick(ChatList.allCases))
            default: return .setMuted(id: chat, muted: Bool.random(using: &random))
            }
        }
    }

    @Test(arguments: [1, 2, 3, 42, 2026] as [UInt64])
    func theStoreAgreesWithTheReferenceModel(seed: UInt64) throws {
        let storeFiles = try TestStore()
        let store = storeFiles.store
        var model = ReferenceModel()
        var source = EventSource(random: SeededGenerator(seed: seed))
        var previous: [String: Chat] = [:]
        var sequence: Int64 = 0

        for step in 0..<400 {
            let groupSize = Int.random(in: 0..<4, using: &source.random) == 0 ? Int.random(in: 2...12, using: &source.random) : 1
            let events = (0..<groupSize).map { _ in source.next() }
            let results = try store.applyAlone(orGrouped: events)
            for (event, result) in zip(events, results) {
                let expected = model.apply(event)
                #expect(ReferenceModel.Outcome(result) == expected, "seed \(seed) step \(step): \(event)")
                if groupSize == 1, case .success(.chat(let chat)) = result { #expect(chat == (try store.chat(id: chat.id))) }
            }

            let (chats, latest) = try store.allChats()
            let expectedList = model.list
            #expect(chats.map(\.id) == expectedList.map(\.id), "seed \(seed) step \(step): list order")
            var changedRows = 0
            for (chat, expected) in zip(chats, expectedList) {
                var shown = chat
                shown.revision = 0
                var normalized = shown
                normalized.pinOrder = chat.pinned ? 1 : 0
                #expect(normalized == expected, "seed \(seed) step \(step): row \(chat.id)")
                if let before = previous[chat.id] {
                    var old = before
                    old.revision = 0
                    // In a group a row may change and change back: its revision moved, rightly.
                    if old == shown, groupSize == 1 { #expect(chat.revision == before.revision, "revision moved without a change: \(chat.id)") }
                    else if old != shown
{ #expect(chat.revision > before.revision, "revision did not move: \(chat.id)"); changedRows += 1 }
                }
            }
            let changes = try store.changes(after: sequence).changes
            let removed = previous.keys.filter { id in !chats.contains { $0.id == id } }
            for id in removed { #expect(changes.contains { $0.chatID == id && $0.chat == nil }) }
            for chat in chats where previous[chat.id]?.revision != chat.revision {
                #expect(changes.contains { $0.chatID == chat.id && $0.chat == chat }, "change of \(chat.id) not logged")
            }
            #expect(changes.count >= changedRows)
            #expect(latest >= sequence)
            if groupSize == 1, changedRows == 0, removed.isEmpty, chats.count == previous.count {
                #expect(latest == sequence, "a write that changed no row appended to the change log")
            }
            previous = Dictionary(uniqueKeysWithValues: chats.map { ($0.id, $0) })
            sequence = latest

            for list in ChatList.allCases {
                let expected = model.list(list)
                #expect(try store.counters(of: list) == model.counters(list), "seed \(seed) step \(step): counters of \(list)")
                #expect(try store.chats(in: ChatListView(list: list), offset: 0, limit: 1000).map(\.id) == expected.map(\.id))
                #expect(try store.chats(in: ChatListView(list: list, unreadOnly: true), offset: 0, limit: 1000).map(\.id)
                    == expected.filter { $0.unread > 0 }.map(\.id))
                let positions = try store.positions(of: Array(previous.keys) + ["missing"], in: list)
                for (index, chat) in expected.enumerated() { #expect(positions[chat.id] == .some(index)) }
                for chat in chats where chat.list != list { #expect(positions[chat.id] == .some(nil)) }
                #expect(positions["missing"] == .some(nil))
            }
        }

        for id in model.chats.keys {
            let expected = model.messages.values.filter { $0.message.chat == id && !$0.isDeleted }.map(\.message)
                .sorted { $0.sentAt != $1.sentAt ? $0.sentAt > $1.sentAt : ReferenceModel.byteLess($1.id, $0.id) }
            #expect(try store.messages(chat: id, before: nil, limit: 1000).items == expected)
            // Page by page, from each page's position, and from any date or position, as the chain
            // is walked (schema version 13).
            let limit = Int.random(in: 1...4, using: &source.random)
            var paged: [Message] = []
            var next: MessagePosition?
            repeat {
                let page = try store.messages(chat: id, after: next, limit: limit)
                paged += page.items
                next = page.next
            } while next != nil && paged.count <= expected.count
            #expect(paged == expected, "seed \(seed): pages of \(id)")
            for _ in 0..<4 {
                let before = Int64.random(in: -1...62, using: &source.random)
                #expect(try store.messages(chat: id, before: before, limit: 3).items == Array(expected.filter { $0.sentAt < before }.prefix(3)))
                // A message's own position (continued from it), or any (walked to).
                let position = Bool.random(using: &source.random) && !expected.isEmpty
                    ? MessagePosition(of: expected[Int.random(in: 0..<expected.count, using: &source.random)])
                    : MessagePosition(sentAt: Int64.random(in: 0...60, using: &source.random), id: source.messageID())
                let after = expected.filter { $0.sentAt < position.sentAt || ($0.sentAt == position.sentAt && ReferenceModel.byteLess($0.id, position.id)) }
                #expect(try store.messages(chat: id, after: position, limit: 3).items == Array(after.prefix(3)), "after \(position)")
            }
        }
        #expect(try store.stats().messages == model.messages.values.filter { !$0.isDeleted }.count)
    }
}
