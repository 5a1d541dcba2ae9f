import ChatModel
import Foundation
import JSONCodec
import ListDiff
import Testing
import WireProtocol

@Suite struct FeedSubscribeResultTests {
    static let chat = Chat(
        id: "c\"1", title: "Tea ☕", createdAt: 5, lastMessage: LastMessage(id: "m", sender: "ann", text: "hi\n", sentAt: 9),
        lastMessageDate: 9, unread: 2, revision: 41)

    @Test func batchesRoundTrip() throws {
        let batches: [Batch<Chat>] = [
            Batch(deletes: [4, 1], inserts: [IndexedItem(index: 0, item: Self.chat)], moves: [Move(from: 3, to: 1)]),
            Batch(updates: [IndexedItem(index: 2, item: Self.chat)]),
        ]
        var bytes: [UInt8] = []
        let unread = UnreadCounters(chats: 3, messages: 9, unmutedChats: 2, unmutedMessages: 4)
        WireResults.appendFeedSubscribe(subscription: "s3", count: 10, total: 12, unread: unread, batches: batches, to: &bytes)
        let value = try JSONValue(parsing: bytes)
        #expect(value["seq"] == 0 && value["items"] == nil)
        #expect(value["batches"]?.arrayValue?[1]["deletes"] == .array([]))
        #expect(try FeedSubscribeResult(jsonValue: value)
            == FeedSubscribeResult(subscription: "s3", count: 10, total: 12, unread: unread, content: .batches(batches)))

        var none: [UInt8] = []
        WireResults.appendFeedSubscribe(subscription: "s4", count: 0, total: 0, unread: UnreadCounters(), batches: [], to: &none)
        #expect(String(decoding: none, as: UTF8.self) == #"{"subscription":"s4","seq":0,"count":0,"total":0,"unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0},"batches":[]}"#)
    }

    @Test func itemsDecode() throws {
        var bytes: [UInt8] = []
        let unread = UnreadCounters(chats: 1, messages: 2, unmutedChats: 1, unmutedMessages: 2)
        WireResults.appendFeedSubscribe(subscription: "s1", total: 1, unread: unread, items: [Self.chat], to: &bytes)
        #expect(try FeedSubscribeResult(jsonValue: JSONValue(parsing: bytes))
            == FeedSubscribeResult(subscription: "s1", total: 1, unread: unread, content: .items([Self.chat])))
    }

    @Test func badBatchesNameThePath() {
        #expect(throws: WireDecodingError(field: "batches[0].moves", reason: "is required (an array)")) {
            _ = try FeedSubscribeResult(jsonValue: try JSONValue(parsing: Array(
                #"{"subscription":"s1","total":0,"batches":[{"deletes":[],"inserts":[],"updates":[]}]}"#.utf8)))
        }
    }
}

/// A newer server may add members anywhere: an older client ignores them, and still names what it
/// needs when that is missing or mistyped (a decoding error, not the server's invalid params).
@Suite struct TolerantDecodingTests {
    private static func result(_ chat: String) throws -> JSONValue {
        try JSONValue(parsing: Array((#"{"subscription":"s1","seq":0,"count":1,"total":1,"future":[1],"#
            + #""unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0,"muted":3},"items":["#
            + chat + "]}").utf8))
    }

    private static let chat = #"{"id":"a","title":"A","createdAt":1,"lastMessage":null,"lastMessageDate":1,"unread":0,"revision":1"#

    @Test func unknownMembersAreIgnored() throws {
        let decoded = try FeedSubscribeResult(jsonValue: Self.result(Self.chat + #","reactions":{"👍":2}}"#))
        guard case .items(let items) = decoded.content else { Issue.record("no items"); return }
        #expect(items.map(\.id) == ["a"])
        #expect(decoded.count == 1 && decoded.total == 1)
    }

    @Test func aMissingOrMistypedMemberIsADecodingErrorNamingIt() throws {
        let missing = Self.chat.replacingOccurrences(of: #""title":"A","#, with: "")
        #expect(throws: WireDecodingError(field: "items[0].title", reason: "is required")) {
            _ = try FeedSubscribeResult(jsonValue: Self.result(missing + "}"))
        }
        let mistyped = Self.chat.replacingOccurrences(of: #""revision":1"#, with: #""revision":"1""#)
        #expect(throws: WireDecodingError.self) {
            _ = try FeedSubscribeResult(jsonValue: Self.result(mistyped + "}"))
        }
        do {
            _ = try FeedSubscribeResult(jsonValue: Self.result(mistyped + "}"))
        } catch {
            #expect((error as? WireDecodingError)?.field == "items[0].revision")
        }
    }
}
