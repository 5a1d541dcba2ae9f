import ChatModel
import JSONCodec
import ListDiff
import Testing
@testable import WireProtocol

@Suite struct ClientDecodingTests {
    let chat = Chat(
        id: "c1", title: "T", createdAt: 1, lastMessage: LastMessage(id: "m", sender: "s", text: "x", sentAt: 5),
        lastMessageDate: 5, unread: 1, revision: 2)

    private func message(_ bytes: [UInt8]) throws(RPCError) -> RPCServerMessage {
        try RPCServerMessage(line: Array(bytes.dropLast()))
    }

    @Test func serverMessagesRoundTrip() throws {
        #expect(try message(RPCMessage.resultResponse(id: "a", result: ["duplicate": false]))
            == .result(id: "a", result: ["duplicate": false]))
        #expect(try message(RPCMessage.resultResponse(id: 3, result: nil)) == .result(id: 3, result: nil))
        let error = RPCError(code: -32001, message: "no chat with id 'x'", data: ["kind": "chat", "id": "x"])
        #expect(try message(RPCMessage.errorResponse(id: .null, error: error)) == .error(id: .null, error: error))
        #expect(try message(RPCMessage.notification(method: "feed.reset", params: ["seq": 1]))
            == .notification(method: "feed.reset", params: ["seq": 1]))
        #expect(throws: RPCError.self) { try RPCServerMessage(line: Array("{".utf8)) }
        #expect(throws: RPCError.self) { try RPCServerMessage(line: Array(#"{"jsonrpc":"2.0","id":1}"#.utf8)) }
        #expect(throws: RPCError.self) { try RPCServerMessage(line: Array(#"{"id":1,"result":2}"#.utf8)) }
    }

    private func batchParams(_ params: FeedBatchParams) throws -> JSONValue {
        try parsed {
            WireResults.appendFeedBatch(
                subscription: params.subscription, seq: params.seq, count: params.count, total: params.total,
                batch: params.batch, to: &$0)
        }
    }

    @Test func feedBatchRoundTrip() throws {
        let batch = FeedBatchParams(
            subscription: "s1", seq: 3, count: 4, total: 10,
            batch: Batch(deletes: [5, 2], inserts: [IndexedItem(index: 0, item: chat)], moves: [Move(from: 3, to: 1)]))
        let line = RPCMessage.notification(method: WireMethod.feedBatchNotification, params: try batchParams(batch))
        guard case .notification(let method, let params) = try message(line) else {
            Issue.record("not a notification")
            return
        }
        #expect(try WireFeedNotification(method: method, params: params) == .batch(batch))
        let updates = FeedBatchParams(
            subscription: "s1", seq: 4, count: 4, total: 10, batch: Batch(updates: [IndexedItem(index: 2, item: chat)]))
        #expect(try FeedBatchParams(jsonValue: batchParams(updates)) == updates)
        #expect(try WireFeedNotification(method: "other", params: [:]) == nil)

        var broken = try batchParams(batch).objectValue!
        broken["moves"] = [["from": 1]]
        #expect(throws: WireDecodingError(field: "moves[0].to", reason: "is required")) {
            _ = try FeedBatchParams(jsonValue: .object(broken))
        }
        broken["moves"] = []
        broken["deletes"] = [-1]
        #expect(throws: WireDecodingError(field: "deletes[0]", reason: "must be an index (an integer ≥ 0)")) {
            _ = try FeedBatchParams(jsonValue: .object(broken))
        }
    }

    @Test func feedResetRoundTrip() throws {
        let reset = FeedResetParams(subscription: "s9", seq: 7, count: 1, total: 1, items: [chat])
        let params = try parsed {
            WireResults.appendFeedReset(subscription: "s9", seq: 7, count: 1, total: 1, items: [chat], to: &$0)
        }
        let decoded = try WireFeedNotification(method: "feed.reset", params: params)
        #expect(decoded == .reset(reset))
        #expect(decoded?.seq == 7)
        #expect(decoded?.subscription == "s9")
        var broken = params.objectValue!
        broken["items"] = [["id": "c"]]
        #expect(throws: WireDecodingError(field: "items[0].title", reason: "is required")) {
            _ = try FeedResetParams(jsonValue: .object(broken))
        }
    }
}
