import ChatModel
import SQLite

/// The stored state of a message, including what the chat list does not show.
struct StoredMessage {
    var chatID: String
    var sender: String
    var text: String
    var originalText: String
    var sentAt: Int64
    var editedAt: Int64?
    var isDeleted: Bool
    /// Posted since the chat was last read, and not deleted: counted in the chat's `unread`.
    var isUnread: Bool
}

extension ChatDatabase {
    static let chatColumnNames = [
        "id", "title", "created_at", "last_message_id", "last_message_sender", "last_message_text",
        "last_message_sent_at", "last_message_date", "unread", "revision", "list", "pin_order", "muted",
    ]
    /// The columns `decodeChat` reads, in its order.
    static let chatColumns = chatColumnNames.joined(separator: ", ")
    static let qualifiedChatColumns = chatColumnNames.map { "chat." + $0 }.joined(separator: ", ")

    /// Decodes the thirteen `chatColumns` starting at column `first`.
    static func decodeChat(_ row: Row, from first: Int32 = 0) -> Chat {
        var lastMessage: LastMessage?
        if !row.isNull(first + 3) {
            lastMessage = LastMessage(
                id: row[first + 3], sender: row[first + 4], text: row[first + 5], sentAt: row[first + 6])
        }
        return Chat(
            id: row[first], title: row[first + 1], createdAt: row[first + 2], lastMessage: lastMessage,
            lastMessageDate: row[first + 7], unread: row[first + 8], revision: row[first + 9],
            list: ChatList(rawValue: row[first + 10]) ?? .main, pinOrder: row[first + 11], muted: row[first + 12])
    }

    func fetchChat(id: String) throws -> Chat? {
        try statements.fetchChat.fetchOne(id) { Self.decodeChat($0) }
    }

    func fetchStoredMessage(id: String) throws -> StoredMessage? {
        try statements.fetchMessage.fetchOne(id) { row in
            StoredMessage(
                chatID: row[0], sender: row[1], text: row[2], originalText: row[3], sentAt: row[4],
                editedAt: row[5], isDeleted: row[6], isUnread: row[7])
        }
    }

    /// The latest non-deleted message of a chat by (sentAt, id).
    func fetchLatestMessage(chatID: String) throws -> LastMessage? {
        try statements.latestMessage.fetchOne(chatID) { row in
            LastMessage(id: row[0], sender: row[1], text: row[2], sentAt: row[3])
        }
    }

    /// Appends a change-log row and returns its sequence number.
    func logChange(chatID: String, kind: ChangeKind) throws -> Int64 {
        try statements.insertChange.execute(chatID, kind.rawValue)
        return db.lastInsertedRowID
    }

    func insertChat(_ chat: Chat) throws {
        try statements.insertChat.execute(
                chat.id, chat.title, chat.createdAt, chat.lastMessage?.id, chat.lastMessage?.sender,
                chat.lastMessage?.text, chat.lastMessage?.sentAt, chat.lastMessageDate, chat.unread,
                chat.revision, chat.list.rawValue, chat.pinOrder, chat.muted)
        try adjustCounters(chat.list, adding: chat)
    }

    /// Removes a chat row (its messages go with it) and its place in the counters.
    func deleteChat(_ chat: Chat) throws {
        try statements.removeChat.execute(chat.id)
        try adjustCounters(chat.list, removing: chat)
    }

    /// Writes `new` over `old` when a displayed field differs, with a new revision and a change-log
    /// row, and updates the lists' counters; otherwise writes nothing. Returns the chat as stored.
    func saveChat(_ new: Chat, replacing old: Chat) throws -> Chat {
        guard new.title != old.title || new.lastMessage != old.lastMessage
            || new.lastMessageDate != old.lastMessageDate || new.unread != old.unread
            || new.list != old.list || new.pinOrder != old.pinOrder || new.muted != old.muted
        else { return old }
        var saved = new
        saved.revision = try logChange(chatID: new.id, kind: .update)
        let lastMessage = saved.lastMessage
        if saved.orderKey == old.orderKey && saved.list == old.list {
            try statements.updateChat.execute(
                    saved.id, saved.title, lastMessage?.id, lastMessage?.sender, lastMessage?.text,
                    lastMessage?.sentAt, saved.unread, saved.revision, saved.muted)
        } else {
            try statements.updateChatAndKey.execute(
                    saved.id, saved.title, lastMessage?.id, lastMessage?.sender, lastMessage?.text,
                    lastMessage?.sentAt, saved.unread, saved.revision, saved.muted, saved.lastMessageDate,
                    saved.list.rawValue, saved.pinOrder)
        }
        if saved.list != old.list {
            try adjustCounters(old.list, removing: old)
            try adjustCounters(saved.list, adding: saved)
        } else if saved.unread != old.unread || saved.muted != old.muted {
            var delta = UnreadCounters()
            delta.add(old, sign: -1)
            delta.add(saved)
            try adjustCounters(saved.list, total: 0, delta)
        }
        return saved
    }

    /// Adds a chat's share to the counters of `list`. O(1).
    private func adjustCounters(_ list: ChatList, adding chat: Chat) throws {
        var delta = UnreadCounters()
        delta.add(chat)
        try adjustCounters(list, total: 1, delta)
    }

    /// Takes a chat's share out of the counters of `list`. O(1).
    private func adjustCounters(_ list: ChatList, removing chat: Chat) throws {
        var delta = UnreadCounters()
        delta.add(chat, sign: -1)
        try adjustCounters(list, total: -1, delta)
    }

    private func adjustCounters(_ list: ChatList, total: Int64, _ delta: UnreadCounters) throws {
        guard total != 0 || delta != UnreadCounters() else { return }
        try statements.adjustCounters.execute(
            list.rawValue, total, delta.chats, delta.messages, delta.unmutedChats, delta.unmutedMessages)
    }
}

/// What a change-log row records.
enum ChangeKind: String {
    case create, update, remove
}
