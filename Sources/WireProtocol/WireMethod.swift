/// The methods of SPEC §5.
public enum WireMethod: String, CaseIterable, Hashable, Sendable {
    case chatCreate = "chat.create"
    case chatRename = "chat.rename"
    case chatRemove = "chat.remove"
    case chatMarkRead = "chat.markRead"
    case messagePost = "message.post"
    case messageEdit = "message.edit"
    case messageDelete = "message.delete"
    case chatsList = "chats.list"
    case chatsLocate = "chats.locate"
    case messagesList = "messages.list"
    case feedSubscribe = "feed.subscribe"
    case feedAck = "feed.ack"
    case feedUnsubscribe = "feed.unsubscribe"
    case serverStats = "server.stats"

    /// True for the methods that write to the store (`ChatEvent`s).
    public var isWrite: Bool {
        switch self {
        case .chatCreate, .chatRename, .chatRemove, .chatMarkRead, .messagePost, .messageEdit, .messageDelete: true
        default: false
        }
    }

    /// The notification that carries a batch of a subscription.
    public static let feedBatchNotification = "feed.batch"
    /// The notification that replaces a subscription's list with a snapshot.
    public static let feedResetNotification = "feed.reset"
}
