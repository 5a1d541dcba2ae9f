import Foundation

/// A write to the store (docs/PROTOCOL.md, Values). Each is applied in a transaction: all of it or nothing.
///
/// Events that change one member's state name that member (`user`, `User.defaultID` when not
/// given, so that a single-account caller names no one); the others change what every member
/// sees.
public enum ChatEvent: Hashable, Sendable {
    /// Adds a user with empty lists. An existing id is a conflict.
    case createUser(id: String, name: String, createdAt: Int64)
    /// Removes a user and their memberships; their messages stay.
    case removeUser(id: String)
    /// Creates a chat whose first members are `members` (each must be a user), each with the
    /// chat in `main`, unpinned, unmuted and nothing unread.
    case createChat(id: String, title: String, createdAt: Int64, members: [String] = [User.defaultID])
    /// Makes `users` members of the chat (those already members keep their state).
    case addMembers(chat: String, users: [String])
    /// Takes `users` out of the chat (a user leaving removes themselves); non-members are ignored.
    case removeMembers(chat: String, users: [String])
    /// Renames the chat for every member; the result is the chat as `user` sees it.
    case renameChat(id: String, title: String, user: String = User.defaultID)
    /// Removes the chat, its messages and its memberships.
    case removeChat(id: String)
    /// Sets `user`'s `unread` to 0.
    case markRead(id: String, user: String = User.defaultID)
    /// Puts the chat on top of its list's pinned chats; a pinned chat stays where it is.
    case pinChat(id: String, user: String = User.defaultID)
    /// Returns a pinned chat to its date place.
    case unpinChat(id: String, user: String = User.defaultID)
    /// Pins exactly `chats` of `user`'s `list`, in this order (the first on top), and unpins the others.
    case setPinned(list: ChatList, chats: [String], user: String = User.defaultID)
    /// Moves the chat to `user`'s `list` (unpinning it when it changes list).
    case moveChat(id: String, to: ChatList, user: String = User.defaultID)
    case setMuted(id: String, muted: Bool, user: String = User.defaultID)
    /// Adds a message: read for its sender when the sender is a member, `unread` + 1 for every
    /// other member. A repeat of the first post of an id is a duplicate, not an error.
    case postMessage(Message)
    case editMessage(id: String, text: String, editedAt: Int64?)
    case deleteMessage(id: String)

    /// Checks what can be checked without the store: identifiers of 1–128 UTF-8 bytes in NFC.
    public func validate() throws(ChatError) {
        switch self {
        case .createUser(let id, _, _), .removeUser(let id):
            try Identifier.validate(id, field: "user")
        case .createChat(let id, _, _, let members):
            try Identifier.validate(id, field: "chat")
            try Self.validate(users: members, field: "members")
        case .addMembers(let chat, let users), .removeMembers(let chat, let users):
            try Identifier.validate(chat, field: "chat")
            try Self.validate(users: users, field: "users")
        case .removeChat(let id):
            try Identifier.validate(id, field: "chat")
        case .renameChat(let id, _, let user), .markRead(let id, let user), .pinChat(let id, let user),
            .unpinChat(let id, let user), .moveChat(let id, _, let user), .setMuted(let id, _, let user):
            try Identifier.validate(id, field: "chat")
            try Identifier.validate(user, field: "user")
        case .setPinned(_, let chats, let user):
            try Identifier.validate(user, field: "user")
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

    /// Valid user ids, each once.
    private static func validate(users: [String], field: String) throws(ChatError) {
        var seen = Set<String>()
        for (position, id) in users.enumerated() {
            try Identifier.validate(id, field: "\(field)[\(position)]")
            if !seen.insert(id).inserted {
                throw .invalidParams(field: "\(field)[\(position)]", reason: "repeats '\(id)'; name each user once")
            }
        }
    }
}

/// What a successful event returns (docs/PROTOCOL.md, Methods).
public enum EventResult: Hashable, Sendable {
    /// `user.create`, `user.remove`, `chat.addMembers` and `chat.removeMembers` return `.done`.
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
