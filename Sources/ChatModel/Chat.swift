/// The latest non-deleted message of a chat, as shown in its row.
public struct LastMessage: Hashable, Sendable, Codable {
    public var id: String
    public var sender: String
    public var text: String
    /// Milliseconds since the Unix epoch.
    public var sentAt: Int64

    public init(id: String, sender: String, text: String, sentAt: Int64) {
        self.id = id
        self.sender = sender
        self.text = text
        self.sentAt = sentAt
    }
}

/// A conversation as one row of the chat list.
///
/// `revision` increases whenever `title`, `lastMessage`, `lastMessageDate`, `unread`, `list`,
/// `pinOrder` or `muted` changes, and only then.
///
/// `Codable` (keys are the property names) so that an app can persist the rows it shows and
/// resume from them (`ChatClient.subscribe(resumingFrom:)`). This is not the wire format: the
/// protocol's JSON is WireProtocol's.
public struct Chat: Hashable, Sendable, Codable {
    public var id: String
    public var title: String
    /// Milliseconds since the Unix epoch.
    public var createdAt: Int64
    public var lastMessage: LastMessage?
    /// `lastMessage.sentAt`, or `createdAt` when the chat has no message.
    public var lastMessageDate: Int64
    public var unread: Int64
    public var revision: Int64
    /// The list the chat is in.
    public var list: ChatList
    /// 0 when the chat is not pinned; otherwise its place among its list's pinned chats, the
    /// highest on top (a new pin takes the list's highest plus one).
    public var pinOrder: Int64
    /// A muted chat's unread messages do not count in the list's `unmuted…` counters.
    public var muted: Bool

    public init(
        id: String, title: String, createdAt: Int64, lastMessage: LastMessage?,
        lastMessageDate: Int64, unread: Int64, revision: Int64,
        list: ChatList = .main, pinOrder: Int64 = 0, muted: Bool = false
    ) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
        self.lastMessage = lastMessage
        self.lastMessageDate = lastMessageDate
        self.unread = unread
        self.revision = revision
        self.list = list
        self.pinOrder = pinOrder
        self.muted = muted
    }

    @inlinable
    public var pinned: Bool { pinOrder > 0 }

    /// The chat's position key in its list.
    @inlinable
    public var orderKey: ChatOrderKey { ChatOrderKey(pinOrder: pinOrder, lastMessageDate: lastMessageDate, id: id) }
}

/// A message of a chat.
public struct Message: Hashable, Sendable, Codable {
    /// Unique across the store.
    public var id: String
    public var chat: String
    public var sender: String
    public var text: String
    /// Milliseconds since the Unix epoch.
    public var sentAt: Int64
    /// Milliseconds since the Unix epoch; nil when never edited.
    public var editedAt: Int64?

    public init(id: String, chat: String, sender: String, text: String, sentAt: Int64, editedAt: Int64? = nil) {
        self.id = id
        self.chat = chat
        self.sender = sender
        self.text = text
        self.sentAt = sentAt
        self.editedAt = editedAt
    }
}
