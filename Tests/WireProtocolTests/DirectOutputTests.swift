import ChatModel
import Testing
import JSONCodec
@testable import WireProtocol
import TestSupport

/// The direct writers must produce exactly the bytes of the JSONValue path.
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

    @Test func sameBytesAsJSONValue() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<300 {
            let chats = (0..<Int.random(in: 0...5, using: &generator)).map { _ in randomChat(&generator) }
            for chat in chats {
                var direct: [UInt8] = []
                chat.appendJSON(to: &direct)
                #expect(direct == chat.jsonValue.serialized())
            }
            let message = Message(
                id: "m", chat: "c", sender: "s\"", text: "t\n😀", sentAt: Int64.random(in: .min ... .max, using: &generator),
                editedAt: Bool.random(using: &generator) ? 5 : nil)
            var direct: [UInt8] = []
            message.appendJSON(to: &direct)
            #expect(direct == message.jsonValue.serialized())

            direct = []
            WireResults.appendChatsList(total: 12, items: chats, to: &direct)
            #expect(direct == WireResults.chatsList(total: 12, items: chats).serialized())
            direct = []
            WireResults.appendFeedSubscribe(subscription: "s\"1", total: 3, items: chats, to: &direct)
            #expect(direct == WireResults.feedSubscribe(subscription: "s\"1", total: 3, items: chats).serialized())
            direct = []
            WireResults.appendFeedReset(subscription: "s", seq: 9, count: chats.count, total: 40, items: chats, to: &direct)
            #expect(direct == WireResults.feedReset(subscription: "s", seq: 9, count: chats.count, total: 40, items: chats).serialized())

            let batch = FeedBatchParams(
                subscription: "s", seq: 2, count: 7, total: 8, deletes: chats.isEmpty ? [] : [4, 1],
                inserts: chats.enumerated().map { WireIndexedChat(index: $0.offset, chat: $0.element) },
                moves: chats.isEmpty ? [] : [WireMove(from: 3, to: 0), WireMove(from: 0, to: 6)],
                updates: chats.prefix(1).map { WireIndexedChat(index: 2, chat: $0) })
            direct = []
            WireResults.appendFeedBatch(batch, to: &direct)
            #expect(direct == batch.jsonValue.serialized())

            direct = []
            RPCMessage.appendNotification(method: "feed.batch", to: &direct) { WireResults.appendFeedBatch(batch, to: &$0) }
            #expect(direct == RPCMessage.notification(method: "feed.batch", params: batch.jsonValue))
            direct = []
            RPCMessage.appendResultResponse(id: "r", to: &direct) { WireResults.appendChatsList(total: 1, items: chats, to: &$0) }
            #expect(direct == RPCMessage.resultResponse(id: "r", result: WireResults.chatsList(total: 1, items: chats)))
        }
    }
}
