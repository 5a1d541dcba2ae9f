/// The latest non-deleted message of a chat, as shown in its row.
public struct LastMessage: Hashable, Sendable {
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
/// `revision` increases whenever `title`, `lastMessage`, `lastMessageDate` or `unread` changes,
/// and only then.
public struct Chat: Hashable, Sendable {
    public var id: String
    public var title: String
    /// Milliseconds since the Unix epoch.
    public var createdAt: Int64
    public var lastMessage: LastMessage?
    /// `lastMessage.sentAt`, or `createdAt` when the chat has no message.
    public var lastMessageDate: Int64
    public var unread: Int64
    public var revision: Int64

    public init(
        id: String, title: String, createdAt: Int64, lastMessage: LastMessage?,
        lastMessageDate: Int64, unread: Int64, revision: Int64
    ) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
        self.lastMessage = lastMessage
        self.lastMessageDate = lastMessageDate
        self.unread = unread
        self.revision = revision
    }

    /// The chat's position key in the chat list.
    @inlinable
    public var orderKey: ChatOrderKey { ChatOrderKey(lastMessageDate: lastMessageDate, id: id) }
}

/// A message of a chat.
public struct Message: Hashable, Sendable {
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
