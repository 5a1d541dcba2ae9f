/// A message's place in its chat's message order: (`sentAt`, `id`) descending, ids compared
/// bytewise. A page of `messages.list` continues after the position of the previous page's last
/// message, so messages that share a `sentAt` are never skipped.
public struct MessagePosition: Hashable, Sendable {
    public var sentAt: Int64
    public var id: String

    public init(sentAt: Int64, id: String) {
        self.sentAt = sentAt
        self.id = id
    }

    /// The position of `message`.
    public init(of message: Message) {
        self.init(sentAt: message.sentAt, id: message.id)
    }
}

/// One page of a chat's messages, newest first.
public struct MessagePage: Hashable, Sendable {
    public var items: [Message]
    /// The position to continue after (the last item's) when more messages follow; nil on the
    /// last page.
    public var next: MessagePosition?

    public init(items: [Message], next: MessagePosition?) {
        self.items = items
        self.next = next
    }
}
