import ChatModel
import Testing

@Suite("The domain model")
struct ChatModelTests {
    @Test("the chat list order: newest first, then id bytewise")
    func order() {
        let keys = [
            ChatOrderKey(lastMessageDate: 5, id: "b"), ChatOrderKey(lastMessageDate: 9, id: "z"),
            ChatOrderKey(lastMessageDate: 5, id: "a"), ChatOrderKey(lastMessageDate: 5, id: "é"),
            ChatOrderKey(lastMessageDate: 5, id: "Z"), ChatOrderKey(lastMessageDate: 5, id: "ab"),
            ChatOrderKey(lastMessageDate: -1, id: "a"),
        ]
        #expect(keys.sorted().map { "\($0.lastMessageDate)\($0.id)" } == ["9z", "5Z", "5a", "5ab", "5b", "5é", "-1a"])
    }

    @Test("bytewise order agrees with UTF-8 byte order, not Swift's String order", arguments: [
        ("a", "b", true), ("b", "a", false), ("a", "a", false), ("a", "ab", true), ("", "a", true),
        ("\u{FFFF}", "\u{10000}", true), ("Z", "a", true), ("é", "z", false),
    ])
    func bytewise(lhs: String, rhs: String, less: Bool) {
        #expect(bytewiseLess(lhs, rhs) == less)
        #expect(bytewiseLess(lhs, rhs) == Array(lhs.utf8).lexicographicallyPrecedes(Array(rhs.utf8)))
    }

    @Test("identifiers: 1–128 bytes, NFC")
    func identifiers() throws {
        try Identifier.validate("chat-1", field: "chat")
        try Identifier.validate(String(repeating: "x", count: 128), field: "chat")
        try Identifier.validate("caf\u{E9}", field: "chat")
        #expect(throws: ChatError.invalidParams(field: "chat", reason: "must not be empty")) {
            try Identifier.validate("", field: "chat")
        }
        #expect(throws: ChatError.self) { try Identifier.validate(String(repeating: "é", count: 65), field: "id") }
        #expect(throws: ChatError.invalidParams(field: "id", reason: "must be in Unicode normalization form C (NFC)")) {
            try Identifier.validate("cafe\u{301}", field: "id")
        }
    }

    @Test("events validate their identifiers")
    func eventValidation() {
        #expect(throws: ChatError.self) {
            try ChatEvent.postMessage(Message(id: "", chat: "c", sender: "s", text: "t", sentAt: 1)).validate()
        }
        #expect(throws: Never.self) { try ChatEvent.markRead(id: "c").validate() }
    }
}
