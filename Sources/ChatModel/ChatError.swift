/// Why an event or a query was refused. Each case maps to one JSON-RPC error code and to one
/// line on the CLI's stderr; the message says what to fix.
public enum ChatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A field is missing, has the wrong type or an invalid value.
    case invalidParams(field: String, reason: String)
    /// No chat, message or user with that id (a chat the acting user is not a member of is not
    /// found for them). `kind` is "chat", "message" or "user".
    case notFound(kind: String, id: String)
    /// The id exists with other content (a message id reposted differently, a chat created twice).
    case conflict(String)
    /// A configured limit of the daemon is reached (`maxSubscriptions`): `setting` names the
    /// configuration key, the message says what to do.
    case limitReached(setting: String, limit: Int, reason: String)
    /// The session acts beyond its rights (a user session acting as another user, or calling a
    /// method for trusted sessions only): `right` names the right it lacks; nothing changed.
    case forbidden(right: String, reason: String)

    public var description: String {
        switch self {
        case .invalidParams(let field, let reason): "invalid '\(field)': \(reason)"
        case .notFound(let kind, let id): "no \(kind) with id '\(id)'"
        case .conflict(let message): message
        case .limitReached(let setting, let limit, let reason): "\(reason) (the limit is \(limit), '\(setting)' in the configuration)"
        case .forbidden(_, let reason): "forbidden: \(reason)"
        }
    }
}

/// One committed change to a chat's row, in commit order. `chat` is nil when the chat was removed.
public struct ChatChange: Hashable, Sendable {
    public var chatID: String
    public var chat: Chat?

    public init(chatID: String, chat: Chat?) {
        self.chatID = chatID
        self.chat = chat
    }
}

/// One membership (a user's row of a chat) that a committed change touched.
public struct MembershipChange: Hashable, Sendable {
    public var user: String
    public var chat: String

    public init(user: String, chat: String) {
        self.user = user
        self.chat = chat
    }
}
