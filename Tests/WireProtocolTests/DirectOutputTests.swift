import ChatModel
import ListDiff
import Testing
import JSONCodec
@testable import WireProtocol
import TestSupport

/// Every wire encoder writes what the client decoders read back as the same values.
@Suite struct DirectOutputTests {
    private func randomChat(_ generator: inout SeededGenerator) -> Chat {
        let texts = ["", "a", "q\"uote", "back\\slash", "line\nbreak", "😀 é", "\u{0}\u{1F}"]
        let last = Bool.random(using: &generator)
            ? LastMessage(
                id: texts.randomElement(using: &generator)! + "m", sender: texts.randomElement(using: &generator)!,
                text: texts.randomElement(using: &generator)!, sentAt: Int64.random(in: .min ... .max, using: &generator))
            : nil
        return Chat(
            id: "c" + texts.randomElement(using: &generator)!, title: texts.randomElement(using: &generator)!,
            createdAt: Int64.random(in: .min ... .max, using: &generator), lastMessage: last,
            lastMessageDate: Int64.random(in: -5...5, using: &generator), unread: Int64.random(in: 0...1000, using: &generator),
            revision: Int64.random(in: 0 ... .max, using: &generator))
    }

    @Test func encodersRoundTripThroughTheDecoders() throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<300 {
            let chats = (0..<Int.random(in: 0...5, using: &generator)).map { _ in randomChat(&generator) }
            for chat in chats {
                #expect(try Chat(jsonValue: parsed(chat.appendJSON)) == chat)
            }
            let message = Message(
                id: "m", chat: "c", sender: "s\"", text: "t\n😀", sentAt: Int64.random(in: .min ... .max, using: &generator),
                editedAt: Bool.random(using: &generator) ? 5 : nil)
            #expect(try Message(jsonValue: parsed(message.appendJSON)) == message)

            let list = try parsed { WireResults.appendChatsList(total: 12, items: chats, to: &$0) }
            #expect(list["total"] == 12)
            #expect(try list["items"]?.arrayValue?.map { try Chat(jsonValue: $0) } == chats)
            let subscribed = try parsed { WireResults.appendFeedSubscribe(subscription: "s\"1", total: 3, unread: UnreadCounters(), items: chats, to: &$0) }
            #expect(subscribed["subscription"] == "s\"1" && subscribed["seq"] == 0 && subscribed["total"] == 3)
            #expect(try subscribed["items"]?.arrayValue?.map { try Chat(jsonValue: $0) } == chats)

            let reset = FeedResetParams(subscription: "s", seq: 9, count: chats.count, total: 40, items: chats)
            #expect(try FeedResetParams(jsonValue: parsed {
                WireResults.appendFeedReset(subscription: "s", seq: 9, count: chats.count, total: 40, items: chats, to: &$0)
            }) == reset)

            let batch = FeedBatchParams(
                subscription: "s", seq: 2, count: 7, total: 8,
                batch: Batch(
                    deletes: chats.isEmpty ? [] : [4, 1],
                    inserts: chats.enumerated().map { IndexedItem(index: $0.offset, item: $0.element) },
                    moves: chats.isEmpty ? [] : [Move(from: 3, to: 0), Move(from: 0, to: 6)],
                    updates: chats.prefix(1).map { IndexedItem(index: 2, item: $0) }))
            let line = [UInt8].written { output in
                RPCMessage.appendNotification(method: WireMethod.feedBatchNotification, to: &output) {
                    WireResults.appendFeedBatch(
                        subscription: batch.subscription, seq: batch.seq, count: batch.count, total: batch.total,
                        batch: batch.batch, to: &$0)
                }
            }
            #expect(line.last == UInt8(ascii: "\n"))
            guard case .notification(let method, let params) = try RPCServerMessage(line: Array(line.dropLast())) else {
                Issue.record("not a notification")
                continue
            }
            #expect(try WireFeedNotification(method: method, params: params) == .batch(batch))

            let response = [UInt8].written { output in
                RPCMessage.appendResultResponse(id: "r", to: &output) { WireResults.appendChatsList(total: 1, items: chats, to: &$0) }
            }
            #expect(try RPCServerMessage(line: Array(response.dropLast()))
                == .result(id: "r", result: parsed { WireResults.appendChatsList(total: 1, items: chats, to: &$0) }))
        }
    }

    /// A fan-out's batches, encoded with one cache of the last chat's shared members, are the
    /// bytes each batch encodes to alone: the same chat as different members see it, and chats
    /// that share an id but not a title, a date or a last message (a rename, a post, an edit).
    @Test func batchesEncodedWithTheSharedChatCacheAreTheBytesEncodedAlone() {
        var generator = SeededGenerator(seed: 20)
        var cache = ChatJSONCache()
        var reused = 0
        var previous = randomChat(&generator)
        for _ in 0..<2000 {
            var chat = previous
            switch Int.random(in: 0..<8, using: &generator) {
            case 0: chat = randomChat(&generator)
            case 1: chat.title += "x"
            case 2: chat.lastMessageDate += 1
            case 3: chat.createdAt &+= 1
            case 4: chat.lastMessage = chat.lastMessage == nil ? LastMessage(id: "m", sender: "s", text: "t", sentAt: 1) : nil
            case 5: chat.lastMessage?.text += "!"
            default:
                // Another member's view: only their own fields differ.
                chat.unread = Int64.random(in: 0...9, using: &generator)
                chat.revision = Int64.random(in: 0...9, using: &generator)
                chat.list = Bool.random(using: &generator) ? .main : .archive
                chat.pinOrder = Int64.random(in: 0...2, using: &generator)
                chat.muted.toggle()
                if previous.hasSharedFields(of: chat) { reused += 1 }
            }
            let batch = Batch(
                deletes: [1], inserts: [IndexedItem(index: 0, item: chat)], moves: [],
                updates: Bool.random(using: &generator) ? [IndexedItem(index: 3, item: previous)] : [])
            let alone = [UInt8].written {
                WireResults.appendFeedBatch(subscription: "s", seq: 1, count: 2, total: 3, batch: batch, to: &$0)
            }
            let cached = [UInt8].written {
                WireResults.appendFeedBatch(subscription: "s", seq: 1, count: 2, total: 3, batch: batch, to: &$0, cache: &cache)
            }
            #expect(cached == alone, "\(chat)")
            previous = chat
        }
        #expect(reused > 300)
    }
}
