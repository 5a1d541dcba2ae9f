import ChatModel
import Testing
import TestSupport
import WireProtocol

@Suite("messages.list cursors")
struct MessageCursorTests {
    @Test("a cursor gives back its position, for its chat only", arguments: [
        ("c", MessagePosition(sentAt: 0, id: "m")),
        ("général", MessagePosition(sentAt: -1, id: "é🙂")),
        (String(repeating: "x", count: 128), MessagePosition(sentAt: .max, id: String(repeating: "y", count: 128))),
        ("a", MessagePosition(sentAt: .min, id: "b|c\u{0}d")),
    ])
    func roundTrip(chat: String, position: MessagePosition) throws {
        let cursor = MessageCursor.encode(chat: chat, after: position)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(cursor.allSatisfy { alphabet.contains($0) })
        #expect(try MessageCursor.decode(cursor, chat: chat) == position)
        #expect(throws: ChatError.self) { try MessageCursor.decode(cursor, chat: chat + "x") }
    }

    /// Every truncation and every one-character change of a cursor is refused, naming `cursor`.
    @Test("altered cursors are refused")
    func altered() {
        let cursor = Array(MessageCursor.encode(chat: "chat", after: MessagePosition(sentAt: 1_763_884_800_000, id: "m42")))
        var refused = 0
        var tried = 0
        for length in 0..<cursor.count {
            tried += 1
            if (try? MessageCursor.decode(String(cursor.prefix(length)), chat: "chat")) == nil { refused += 1 }
        }
        for index in cursor.indices {
            for replacement in ["A", "z", "-", "_", "=", "+", "/", " "] where String(cursor[index]) != replacement {
                var changed = cursor
                changed[index] = Character(replacement)
                tried += 1
                do {
                    _ = try MessageCursor.decode(String(changed), chat: "chat")
                } catch {
                    #expect(error == .invalidParams(
                        field: "cursor", reason: "is not a nextCursor that messages.list returned for chat 'chat'"))
                    refused += 1
                }
            }
        }
        #expect(refused == tried)
    }

    @Test("random strings are refused")
    func garbage() {
        var generator = SeededGenerator(seed: 5)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            #expect((try? MessageCursor.decode(text, chat: "c")) == nil, "\(text)")
        }
    }
}
