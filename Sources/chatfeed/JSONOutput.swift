import ChatModel

/// The JSON the CLI prints: the same objects as the daemon's results (SPEC §5).
///
/// A stopgap until the WireProtocol module lands: swap these functions for its encoder.
enum JSONOutput {
    static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }

    static func optional(_ value: Int64?) -> String { value.map(String.init) ?? "null" }

    static func chat(_ chat: Chat) -> String {
        object([
            ("id", string(chat.id)),
            ("title", string(chat.title)),
            ("createdAt", String(chat.createdAt)),
            ("lastMessage", chat.lastMessage.map { last in
                object([
                    ("id", string(last.id)), ("sender", string(last.sender)), ("text", string(last.text)),
                    ("sentAt", String(last.sentAt)),
                ])
            } ?? "null"),
            ("lastMessageDate", String(chat.lastMessageDate)),
            ("unread", String(chat.unread)),
            ("revision", String(chat.revision)),
        ])
    }

    static func message(_ message: Message) -> String {
        object([
            ("id", string(message.id)), ("chat", string(message.chat)), ("sender", string(message.sender)),
            ("text", string(message.text)), ("sentAt", String(message.sentAt)),
            ("editedAt", optional(message.editedAt)),
        ])
    }

    /// The result of `chats.list`.
    static func chatsList(total: Int, items: [Chat]) -> String {
        object([("total", String(total)), ("items", array(items.map(chat)))])
    }

    /// The result of `messages.list`.
    static func messagesList(_ items: [Message]) -> String {
        object([("items", array(items.map(message)))])
    }

    /// The result of `chats.locate`.
    static func locate(total: Int, ids: [String], positions: [String: Int?]) -> String {
        var seen = Set<String>()
        let indices = ids.filter { seen.insert($0).inserted }.map { id in
            (id, (positions[id] ?? nil).map(String.init) ?? "null")
        }
        return object([("total", String(total)), ("indices", object(indices))])
    }
}
