/// The chat list a chat is in (docs/PROTOCOL.md, Values). A new chat goes to `main`.
public enum ChatList: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    case main
    case archive

    public var description: String { rawValue }

    /// The other list.
    public var other: ChatList { self == .main ? .archive : .main }
}

/// What a subscription or a query sees of the chats: one list, all of it or only the chats with
/// unread messages.
public struct ChatListView: Hashable, Sendable, CustomStringConvertible {
    public var list: ChatList
    /// Only the chats whose `unread` is positive.
    public var unreadOnly: Bool

    public init(list: ChatList = .main, unreadOnly: Bool = false) {
        self.list = list
        self.unreadOnly = unreadOnly
    }

    public static let main = ChatListView(list: .main)

    /// Every view, in a fixed order.
    public static let all: [ChatListView] = ChatList.allCases.flatMap {
        [ChatListView(list: $0), ChatListView(list: $0, unreadOnly: true)]
    }

    /// True when `chat` is a row of this view. O(1).
    @inlinable
    public func contains(_ chat: Chat) -> Bool {
        chat.list == list && (!unreadOnly || chat.unread > 0)
    }

    public var description: String { unreadOnly ? "\(list) (unread only)" : list.rawValue }
}

/// The unread counters of a chat list (docs/PROTOCOL.md, Values): chats with unread messages and the sum of their
/// unread counts, over all chats and over the chats that are not muted (an app's badge).
public struct UnreadCounters: Hashable, Sendable, Codable, CustomStringConvertible {
    public var chats: Int64
    public var messages: Int64
    public var unmutedChats: Int64
    public var unmutedMessages: Int64

    public init(chats: Int64 = 0, messages: Int64 = 0, unmutedChats: Int64 = 0, unmutedMessages: Int64 = 0) {
        self.chats = chats
        self.messages = messages
        self.unmutedChats = unmutedChats
        self.unmutedMessages = unmutedMessages
    }

    /// Adds (`sign` 1) or removes (`sign` −1) one chat's contribution. O(1).
    @inlinable
    public mutating func add(_ chat: Chat, sign: Int64 = 1) {
        add(unread: chat.unread, muted: chat.muted, sign: sign)
    }

    /// `add(_:sign:)` from the two fields it reads, for a chat read in place. O(1).
    @inlinable
    public mutating func add(unread: Int64, muted: Bool, sign: Int64 = 1) {
        guard unread != 0 else { return }
        chats += sign
        messages += sign * unread
        if !muted {
            unmutedChats += sign
            unmutedMessages += sign * unread
        }
    }

    /// The counters of `chats`, counted one by one (for start-up and tests). O(n).
    public static func recount(_ chats: some Sequence<Chat>) -> UnreadCounters {
        var counters = UnreadCounters()
        for chat in chats { counters.add(chat) }
        return counters
    }

    public var description: String {
        "\(chats) chats, \(messages) messages unread (unmuted: \(unmutedChats) chats, \(unmutedMessages) messages)"
    }
}

/// A chat list's size and unread counters.
public struct ListCounters: Hashable, Sendable {
    /// Chats in the list.
    public var total: Int
    public var unread: UnreadCounters

    public init(total: Int = 0, unread: UnreadCounters = UnreadCounters()) {
        self.total = total
        self.unread = unread
    }

    /// Adds (`sign` 1) or removes (`sign` −1) one chat. O(1).
    @inlinable
    public mutating func add(_ chat: Chat, sign: Int64 = 1) {
        add(unread: chat.unread, muted: chat.muted, sign: sign)
    }

    /// `add(_:sign:)` from the two fields it reads, for a chat read in place. O(1).
    @inlinable
    public mutating func add(unread: Int64, muted: Bool, sign: Int64 = 1) {
        total += Int(sign)
        self.unread.add(unread: unread, muted: muted, sign: sign)
    }

    /// The counters of `list` among `chats`, counted one by one (for start-up and tests). O(n).
    public static func recount(_ chats: some Sequence<Chat>, list: ChatList) -> ListCounters {
        var counters = ListCounters()
        for chat in chats where chat.list == list { counters.add(chat) }
        return counters
    }
}
