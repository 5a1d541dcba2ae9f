import ChangeFeed
import ChatModel
import Testing
import TestSupport

/// The index's chats by id (an open-addressing table over the loaded array) against a
/// `Dictionary`, on random inserts, replacements and removals that grow the table from empty and
/// shift its probe runs back on every removal.
@Suite("The chat index")
struct ChatIndexTests {
    // The loads of 500, 3,000 and 20,000 chats sort their buckets' entries in one, two (11 + 1
    // bits) and two (11 + 4 bits) radix passes.
    @Test(arguments: [
        (UInt64(61), 0, 40, 3_000), (62, 0, 2_000, 20_000), (63, 500, 700, 20_000), (64, 3_000, 3_000, 5_000),
        (65, 20_000, 24_000, 3_000),
    ])
    func chatsByIDFollowADictionary(seed: UInt64, initial: Int, universe: Int, steps: Int) throws {
        var generator = SeededGenerator(seed: seed)
        func chat(_ n: Int, revision: Int64) -> Chat {
            // Ids of both string forms: inline (short) and heap (over 15 bytes).
            let id = n % 2 == 0 ? "c\(n)" : "a-longer-chat-id-\(n)"
            return Chat(id: id, title: "chat \(n)", createdAt: Int64(n), lastMessage: nil,
                        lastMessageDate: Int64(n % 97), unread: 0, revision: revision)
        }
        var reference: [String: Chat] = [:]
        for n in 0..<initial { reference[chat(n, revision: 1).id] = chat(n, revision: 1) }
        var index = ChatIndex(chats: reference.values.sorted { $0.orderKey < $1.orderKey })
        for step in 0..<steps {
            let n = Int.random(in: 0..<universe, using: &generator)
            let id = chat(n, revision: 0).id
            let change: ChatChange
            if Int.random(in: 0..<3, using: &generator) == 0 {
                change = ChatChange(chatID: id, chat: nil)
            } else {
                change = ChatChange(chatID: id, chat: chat(n, revision: Int64(step + 2)))
            }
            let previous = index.apply(change)
            #expect(previous == reference[id])
            reference[id] = change.chat
            #expect(index.count == reference.count)
            let probe = chat(Int.random(in: 0..<universe, using: &generator), revision: 0).id
            #expect(index.chat(id: probe) == reference[probe])
        }
        for n in 0..<universe {
            let id = chat(n, revision: 0).id
            #expect(index.chat(id: id) == reference[id])
        }
        let list = reference.values.sorted { $0.orderKey < $1.orderKey }
        #expect(index.chats(from: 0, count: list.count + 1) == list)
        #expect(index.chat(id: "") == nil, "a free slot's placeholder is not a chat")
    }
}
