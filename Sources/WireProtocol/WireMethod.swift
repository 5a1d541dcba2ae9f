/// The methods of docs/PROTOCOL.md.
public enum WireMethod: String, CaseIterable, Hashable, Sendable {
    case userCreate = "user.create"
    case userRemove = "user.remove"
    case chatCreate = "chat.create"
    case chatAddMembers = "chat.addMembers"
    case chatRemoveMembers = "chat.removeMembers"
    case chatMembers = "chat.members"
    case chatRename = "chat.rename"
    case chatRemove = "chat.remove"
    case chatMarkRead = "chat.markRead"
    case chatPin = "chat.pin"
    case chatUnpin = "chat.unpin"
    case chatSetPinned = "chat.setPinned"
    case chatArchive = "chat.archive"
    case chatUnarchive = "chat.unarchive"
    case chatMute = "chat.mute"
    case chatUnmute = "chat.unmute"
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
    case serverVersion = "server.version"

    /// True for the methods that write to the store (`ChatEvent`s).
    public var isWrite: Bool {
        switch self {
        case .userCreate, .userRemove, .chatCreate, .chatAddMembers, .chatRemoveMembers, .chatRename, .chatRemove,
            .chatMarkRead, .chatPin, .chatUnpin, .chatSetPinned, .chatArchive, .chatUnarchive, .chatMute, .chatUnmute,
            .messagePost, .messageEdit, .messageDelete: true
        default: false
        }
    }

    /// True for the methods that act as a user and so take the `user` param (the acting user;
    /// docs/PROTOCOL.md, Users): every method that reads or writes one user's state, and the
    /// writes that act for a user. `user.create` and `user.remove` name their target with
    /// `user`; `chat.remove` (for every member), `feed.ack`, `feed.unsubscribe` and `server.*`
    /// take none.
    public var takesActingUser: Bool {
        switch self {
        case .userCreate, .userRemove, .chatRemove, .feedAck, .feedUnsubscribe, .serverStats, .serverVersion: false
        default: true
        }
    }

    /// The acting user's param.
    public static let userParam = "user"

    /// The notification that carries a batch of a subscription.
    public static let feedBatchNotification = "feed.batch"
    /// The notification that replaces a subscription's list with a snapshot.
    public static let feedResetNotification = "feed.reset"
}
