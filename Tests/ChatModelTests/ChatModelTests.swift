import ChatModel
import TestSupport
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

    @Test("bytewise order of random strings with long common prefixes agrees with UTF-8 byte order")
    func bytewiseRandom() {
        var rng = SeededGenerator(seed: 2026_11_28)
        let alphabet: [String] = ["a", "b", "Z", "0", "é", "\u{FFFF}", "\u{10000}"]
        func random(length: Int) -> String {
            String((0..<length).map { _ in Character(alphabet[Int(rng.next() % UInt64(alphabet.count))]) })
        }
        for _ in 0..<5_000 {
            // A shared prefix of 0–40 characters, so that words up to the fifth are equal, then
            // suffixes of 0–12 (one of them often empty: a prefix of the other).
            let prefix = random(length: Int(rng.next() % 41))
            let lhs = prefix + random(length: Int(rng.next() % 13))
            let rhs = rng.next() % 8 == 0 ? lhs : prefix + random(length: Int(rng.next() % 13))
            #expect(bytewiseLess(lhs, rhs) == Array(lhs.utf8).lexicographicallyPrecedes(Array(rhs.utf8)), "\(lhs) < \(rhs)")
            // Equal contents in separate storage compare equal too.
            let copy = String(decoding: Array(lhs.utf8), as: UTF8.self)
            #expect(!bytewiseLess(lhs, copy) && !bytewiseLess(copy, lhs))
        }
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
