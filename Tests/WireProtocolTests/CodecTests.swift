import ChatModel
import Testing
@testable import WireProtocol

@Suite struct CodecTests {
    let chat = Chat(
        id: "c1", title: "Team \"A\"", createdAt: 100,
        lastMessage: LastMessage(id: "m9", sender: "bo", text: "hi\n", sentAt: 1_700_000_000_123),
        lastMessageDate: 1_700_000_000_123, unread: 3, revision: 12)

    @Test func chatKeys() throws {
        #expect(chat.jsonValue.serialized().text
            == #"{"id":"c1","title":"Team \"A\"","createdAt":100,"lastMessage":{"id":"m9","sender":"bo","text":"hi\n","sentAt":1700000000123},"lastMessageDate":1700000000123,"unread":3,"revision":12,"list":"main","pinned":false,"pinOrder":0,"muted":false}"#)
        var pinned = chat
        pinned.list = .archive
        pinned.pinOrder = 4
        pinned.muted = true
        #expect(pinned.jsonValue["list"] == "archive" && pinned.jsonValue["pinned"] == true && pinned.jsonValue["muted"] == true)
        #expect(try Chat(jsonValue: pinned.jsonValue) == pinned)
        var empty = chat
        empty.lastMessage = nil
        #expect(empty.jsonValue["lastMessage"] == .null)
        #expect(try Chat(jsonValue: chat.jsonValue) == chat)
        #expect(try Chat(jsonValue: empty.jsonValue) == empty)
        #expect(throws: ChatError.invalidParams(field: "chat.lastMessage.sentAt", reason: "is required")) {
            var object = chat.jsonValue.objectValue!
            object["lastMessage"] = ["id": "m", "sender": "s", "text": "t"]
            _ = try Chat(jsonValue: .object(object))
        }
    }

    @Test func messageKeys() throws {
        let message = Message(id: "m1", chat: "c1", sender: "ann", text: "😀", sentAt: 5)
        #expect(message.jsonValue.serialized().text == #"{"id":"m1","chat":"c1","sender":"ann","text":"😀","sentAt":5,"editedAt":null}"#)
        var edited = message
        edited.editedAt = 9
        #expect(edited.jsonValue["editedAt"] == 9)
        #expect(try Message(jsonValue: edited.jsonValue) == edited)
        #expect(try Message(jsonValue: message.jsonValue) == message)
    }

    @Test func results() {
        #expect(EventResult.chat(chat).jsonValue == chat.jsonValue)
        #expect(EventResult.posted(duplicate: true).jsonValue.serialized().text == #"{"duplicate":true}"#)
        #expect(EventResult.done.jsonValue.serialized().text == "{}")
        #expect(WireResults.chatsList(total: 7, items: [chat])["items"] == [chat.jsonValue])
        #expect(WireResults.chatsList(total: 7, items: [])["total"] == 7)
        #expect(WireResults.chatsLocate(total: 2, indices: [("b", 1), ("x", nil), ("b", 1)]).serialized().text
            == #"{"total":2,"indices":{"b":1,"x":null}}"#)
        #expect(WireResults.messagesList(chat: "c", page: MessagePage(items: [], next: nil)).serialized().text == #"{"items":[],"nextCursor":null}"#)
        #expect(WireResults.feedSubscribe(subscription: "s1", total: 1, items: []).serialized().text
            == #"{"subscription":"s1","seq":0,"count":0,"total":1,"unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0},"items":[]}"#)
        var small = chat
        small.lastMessage = nil
        let batch = WireResults.feedBatch(
            subscription: "s1", seq: 4, count: 2, total: 9, deletes: [3, 1], inserts: [(index: 0, chat: small)],
            moves: [(from: 5, to: 1)], updates: [])
        #expect(batch.objectValue?.keys == ["subscription", "seq", "count", "total", "unread", "deletes", "inserts", "moves", "updates"])
        #expect(batch["moves"] == [["from": 5, "to": 1]])
        #expect(batch["inserts"] == [["index": 0, "chat": small.jsonValue]])
        #expect(WireResults.feedReset(subscription: "s1", seq: 5, count: 0, total: 0, items: []).serialized().text
            == #"{"subscription":"s1","seq":5,"count":0,"total":0,"unread":{"chats":0,"messages":0,"unmutedChats":0,"unmutedMessages":0},"items":[]}"#)
    }

    @Test func methods() {
        #expect(WireMethod.allCases.count == 21)
        #expect(WireMethod.allCases.filter(\.isWrite).map(\.rawValue) == [
            "chat.create", "chat.rename", "chat.remove", "chat.markRead", "chat.pin", "chat.unpin", "chat.setPinned",
            "chat.archive", "chat.unarchive", "chat.mute", "chat.unmute", "message.post", "message.edit", "message.delete",
        ])
    }
}
