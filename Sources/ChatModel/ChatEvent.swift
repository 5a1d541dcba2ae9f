import Foundation

/// A write to the store (docs/PROTOCOL.md, Values). Each is applied in a transaction: all of it or nothing.
public enum ChatEvent: Hashable, Sendable {
    case createChat(id: String, title: String, createdAt: Int64)
    case renameChat(id: String, title: String)
    /// Removes the chat and its messages.
    case removeChat(id: String)
    /// Sets `unread` to 0.
    case markRead(id: String)
    /// Puts the chat on top of its list's pinned chats; a pinned chat stays where it is.
    case pinChat(id: String)
    /// Returns a pinned chat to its date place.
    case unpinChat(id: String)
    /// Pins exactly `chats` of `list`, in this order (the first on top), and unpins the others.
    case setPinned(list: ChatList, chats: [String])
    /// Moves the chat to `list` (unpinning it when it changes list).
    case moveChat(id: String, to: ChatList)
    case setMuted(id: String, muted: Bool)
    /// Adds a message (`unread` + 1). A repeat of the first post of an id is a duplicate, not an error.
    case postMessage(Message)
    case editMessage(id: String, text: String, editedAt: Int64?)
    case deleteMessage(id: String)

    /// Checks what can be checked without the store: identifiers of 1–128 UTF-8 bytes in NFC.
    public func validate() throws(ChatError) {
        switch self {
        case .createChat(let id, _, _), .renameChat(let id, _), .removeChat(let id), .markRead(let id),
            .pinChat(let id), .unpinChat(let id), .moveChat(let id, _), .setMuted(let id, _):
            try Identifier.validate(id, field: "chat")
        case .setPinned(_, let chats):
            var seen = Set<String>()
            for (position, id) in chats.enumerated() {
                try Identifier.validate(id, field: "chats[\(position)]")
                if !seen.insert(id).inserted {
                    throw .invalidParams(field: "chats[\(position)]", reason: "repeats '\(id)'; each chat may be pinned once")
                }
            }
        case .postMessage(let message):
            try Identifier.validate(message.chat, field: "chat")
            try Identifier.validate(message.id, field: "id")
        case .editMessage(let id, _, _), .deleteMessage(let id):
            try Identifier.validate(id, field: "id")
        }
    }
}

/// What a successful event returns (docs/PROTOCOL.md, Methods).
public enum EventResult: Hashable, Sendable {
    /// `chat.create`, `chat.rename`, `chat.markRead`, `chat.pin`, `chat.unpin`, `chat.archive`,
    /// `chat.unarchive`, `chat.mute`, `chat.unmute`: the chat after the event.
    case chat(Chat)
    /// `message.post`: whether it repeated an earlier post.
    case posted(duplicate: Bool)
    /// `chat.remove`, `chat.setPinned`, `message.edit`, `message.delete`.
    case done
}

/// Chat ids and message ids.
public enum Identifier {
    public static let maxBytes = 128

    /// An identifier is 1–128 UTF-8 bytes in Unicode NFC, so that Swift's string equality and
    /// order agree with SQLite's bytewise ones, without control characters (C0, DEL, C1), so that
    /// a shell and a terminal can name it. Writes and queries check ids alike.
    public static func validate(_ id: String, field: String) throws(ChatError) {
        let bytes = id.utf8.count
        if bytes == 0 { throw .invalidParams(field: field, reason: "must not be empty") }
        if bytes > maxBytes {
            throw .invalidParams(field: field, reason: "is \(bytes) bytes long; the limit is \(maxBytes)")
        }
        if let control = id.unicodeScalars.first(where: isControl) {
            throw .invalidParams(
                field: field,
                reason: "must not contain control characters (U+0000–U+001F, U+007F–U+009F); it holds \(codePoint(control))")
        }
        if !isNFC(id) {
            throw .invalidParams(field: field, reason: "must be in Unicode normalization form C (NFC)")
        }
    }

    /// C0 controls, DEL and C1 controls: the scalars an identifier must not hold.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// "U+001B".
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// True when normalizing `string` to NFC leaves its bytes unchanged.
    public static func isNFC(_ string: String) -> Bool {
        if string.utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return string.precomposedStringWithCanonicalMapping.utf8.elementsEqual(string.utf8)
    }
}
