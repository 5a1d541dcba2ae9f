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

    /// A load gives every view its chats in order, with the lists' counters, whatever the order
    /// the chats come in: the store's (each view's keys go straight into its set), shuffled, or
    /// in order but for one pair (that view's keys are sorted first). Against a filter and a sort
    /// of the chats, view by view.
    @Test(arguments: [UInt64(71), 72, 73])
    func aLoadGivesEachViewItsChatsInOrderWhateverTheirOrder(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let chats = (0..<1_500).map { n in
            Chat(id: n % 3 == 0 ? "c\(n)" : "a-longer-chat-id-\(n)", title: "chat \(n)", createdAt: 0, lastMessage: nil,
                 lastMessageDate: Int64.random(in: 0..<400, using: &generator),
                 unread: Bool.random(using: &generator) ? 0 : Int64.random(in: 1...9, using: &generator),
                 revision: 1, list: Int.random(in: 0..<4, using: &generator) == 0 ? .archive : .main,
                 pinOrder: Int.random(in: 0..<20, using: &generator) == 0 ? Int64.random(in: 1...5, using: &generator) : 0)
        }
        // The store's order: the archive, then main, each by its order key.
        let inOrder = chats.sorted { ($0.list == .archive ? 0 : 1, $0.orderKey) < ($1.list == .archive ? 0 : 1, $1.orderKey) }
        var swapped = inOrder
        let main = swapped.indices.filter { swapped[$0].list == .main }
        swapped.swapAt(main[10], main[500])
        for (order, loaded) in [("in order", inOrder), ("shuffled", chats.shuffled(using: &generator)), ("one pair swapped", swapped)] {
            let index = ChatIndex(chats: loaded)
            #expect(index.count == chats.count)
            for view in ChatListView.all {
                let expected = chats.filter(view.contains).sorted { $0.orderKey < $1.orderKey }
                #expect(index.count(of: view) == expected.count, "\(order), \(view)")
                #expect(index.chats(from: 0, count: chats.count, in: view) == expected, "\(order), \(view)")
            }
            for list in ChatList.allCases {
                let inList = chats.filter { $0.list == list }
                #expect(index.counters(of: list).total == inList.count, "\(order), \(list)")
                #expect(index.counters(of: list).unread.messages == inList.reduce(0) { $0 + $1.unread }, "\(order), \(list)")
            }
        }
    }
}
