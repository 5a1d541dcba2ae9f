import ChatModel
import JSONCodec
import ListDiff
import Testing
@testable import WireProtocol

@Suite struct CodecTests {
    let chat = Chat(
        id: "c1", title: "Team \"A\"", createdAt: 100,
        lastMessage: LastMessage(id: "m9", sender: "bo", text: "hi\n", sentAt: 1_700_000_000_123),
        lastMessageDate: 1_700_000_000_123, unread: 3, revision: 12)

    @Test func chatKeys() throws {
        #expect([UInt8].written(chat.appendJSON).text
            == #"{"id":"c1","title":"Team \"A\"","createdAt":100,"lastMessage":{"id":"m9","sender":"bo","text":"hi\n","sentAt":1700000000123},"lastMessageDate":1700000000123,"unread":3,"revision":12,"list":"main","pinned":false,"pinOrder":0,"muted":false}"#)
        var pinned = chat
        pinned.list = .archive
        pinned.pinOrder = 4
        pinned.muted = true
        let pinnedJSON = try parsed(pinned.appendJSON)
        #expect(pinnedJSON["list"] == "archive" && pinnedJSON["pinned"] == true && pinnedJSON["muted"] == true)
        #expect(try Chat(jsonValue: pinnedJSON) == pinned)
        var empty = chat
        empty.lastMessage = nil
        #expect(try parsed(empty.appendJSON)["lastMessage"] == .null)
        #expect(try Chat(jsonValue: parsed(chat.appendJSON)) == chat)
        #expect(try Chat(jsonValue: parsed(empty.appendJSON)) == empty)
        var object = try parsed(chat.appendJSON).objectValue!
        object["lastMessage"] = ["id": "m", "sender": "s", "text": "t"]
        #expect(throws: WireDecodingError(field: "chat.lastMessage.sentAt", reason: "is required")) {
            _ = try Chat(jsonValue: .object(object))
        }
    }

    @Test func messageKeys() throws {
        let message = Message(id: "m1", chat: "c1", sender: "ann", text: "😀", sentAt: 5)
        #expect([UInt8].written(message.appendJSON).text == #"{"id":"m1","chat":"c1","sender":"ann","text":"😀","sentAt":5,"editedAt":null}"#)
        var edited = message
        edited.editedAt = 9
        #expect(try parsed(edited.appendJSON)["editedAt"] == 9)
        #expect(try Message(jsonValue: parsed(edited.appendJSON)) == edited)
        #expect(try Message(jsonValue: parsed(message.appendJSON)) == message)
    }

    @Test func results() throws {
        #expect([UInt8].written(EventResult.chat(chat).appendJSON) == [UInt8].written(chat.appendJSON))
        #expect([UInt8].written(EventResult.posted(duplicate: true).appendJSON).text == #"{"duplicate":true}"#)
        #expect([UInt8].written(EventResult.posted(duplicate: false).appendJSON).text == #"{"duplicate":false}"#)
        #expect([UInt8].written(EventResult.done.appendJSON).text == "{}")
        let list = try parsed { WireResults.appendChatsList(total: 7, items: [chat], to: &$0) }
        #expect(list.objectValue?.keys == ["total", "unread", "items"])
        #expect(try list["items"] == [parsed(chat.appendJSON)])
        #expect([UInt8].written { WireResults.appendChatsList(total: 7, items: [], to: &$0) }.text == #"{"total":7,"unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0},"items":[]}"#)
        #expect(WireResults.chatsLocate(total: 2, indices: [("b", 1), ("x", nil), ("b", 1)]).serialized().text
            == #"{"total":2,"indices":{"b":1,"x":null}}"#)
        #expect([UInt8].written { WireResults.appendMessagesList(chat: "c", page: MessagePage(items: [], next: nil), to: &$0) }.text
            == #"{"items":[],"nextCursor":null}"#)
        let message = Message(id: "m1", chat: "c", sender: "ann", text: "hi", sentAt: 5)
        let page = try parsed {
            WireResults.appendMessagesList(chat: "c", page: MessagePage(items: [message, message], next: MessagePosition(of: message)), to: &$0)
        }
        #expect(page.objectValue?.keys == ["items", "nextCursor"])
        #expect(try page["items"] == [parsed(message.appendJSON), parsed(message.appendJSON)])
        #expect(page["nextCursor"] == .string(MessageCursor.encode(chat: "c", after: MessagePosition(of: message))))
        #expect([UInt8].written { WireResults.appendFeedSubscribe(subscription: "s1", total: 1, unread: UnreadCounters(), items: [], to: &$0) }.text
            == #"{"subscription":"s1","seq":0,"count":0,"total":1,"unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0},"items":[]}"#)
        var small = chat
        small.lastMessage = nil
        let batch = try parsed {
            WireResults.appendFeedBatch(
                subscription: "s1", seq: 4, count: 2, total: 9,
                batch: Batch(deletes: [3, 1], inserts: [IndexedItem(index: 0, item: small)], moves: [Move(from: 5, to: 1)]),
                to: &$0)
        }
        #expect(batch.objectValue?.keys == ["subscription", "seq", "count", "total", "unread", "deletes", "inserts", "moves", "updates"])
        #expect(batch["deletes"] == [3, 1])
        #expect(batch["moves"] == [["from": 5, "to": 1]])
        #expect(try batch["inserts"] == [["index": 0, "chat": parsed(small.appendJSON)]])
        #expect(batch["updates"] == [])
        #expect([UInt8].written { WireResults.appendFeedReset(subscription: "s1", seq: 5, count: 0, total: 0, items: [], to: &$0) }.text
            == #"{"subscription":"s1","seq":5,"count":0,"total":0,"unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0},"items":[]}"#)
    }

    @Test func methods() {
        #expect(WireMethod.allCases.count == 27)
        #expect(WireMethod.allCases.filter(\.isWrite).map(\.rawValue) == [
            "user.create", "user.remove", "chat.create", "chat.addMembers", "chat.removeMembers", "chat.rename", "chat.remove", "chat.markRead", "chat.pin", "chat.unpin", "chat.setPinned",
            "chat.archive", "chat.unarchive", "chat.mute", "chat.unmute", "message.post", "message.edit", "message.delete",
        ])
        #expect(WireMethod.allCases.filter { !$0.takesActingUser }.map(\.rawValue) == [
            "user.create", "user.remove", "chat.remove", "feed.ack", "feed.unsubscribe", "server.stats", "server.version",
        ])
    }
}
