import ChatModel
import JSONCodec
import WireProtocol

/// A page of a chat list (`chats.list`): `items` from the requested offset, in list order.
public struct ChatPage: Hashable, Sendable {
    /// Chats in the whole list (whatever `unreadOnly`).
    public var total: Int
    /// The list's unread counters.
    public var unread: UnreadCounters
    public var items: [Chat]

    public init(total: Int, unread: UnreadCounters = UnreadCounters(), items: [Chat]) {
        self.total = total
        self.unread = unread
        self.items = items
    }
}

/// Where chats are in the list (`chats.locate`): restore a scroll position or a selection by id.
public struct ChatLocations: Hashable, Sendable {
    public var total: Int
    /// The index of every located chat that is in the list; absent ids are not.
    public var indices: [String: Int]

    public init(total: Int, indices: [String: Int]) {
        self.total = total
        self.indices = indices
    }
}

/// A page of a chat's messages (`messages.list`), newest first.
public struct MessageListPage: Hashable, Sendable {
    public var items: [Message]
    /// Continues after the page's last message; nil on the last page (or from an engine that
    /// does not page by cursor).
    public var nextCursor: String?

    public init(items: [Message], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// What `message.post` did.
public struct PostResult: Hashable, Sendable {
    /// True when the message was already there with the same content: nothing changed.
    public var duplicate: Bool

    public init(duplicate: Bool) { self.duplicate = duplicate }
}
