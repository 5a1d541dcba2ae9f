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
}

extension ChatStore {
    static let chatColumnNames = [
        "id", "title", "created_at", "last_message_id", "last_message_sender", "last_message_text",
        "last_message_sent_at", "last_message_date", "unread", "revision",
    ]
    /// The columns `decodeChat` reads, in its order.
    static let chatColumns = chatColumnNames.joined(separator: ", ")
    static let qualifiedChatColumns = chatColumnNames.map { "chat." + $0 }.joined(separator: ", ")

    /// Decodes the ten `chatColumns` starting at column `first`.
    static func decodeChat(_ row: Row, from first: Int32 = 0) -> Chat {
        var lastMessage: LastMessage?
        if !row.isNull(first + 3) {
            lastMessage = LastMessage(
                id: row[first + 3], sender: row[first + 4], text: row[first + 5], sentAt: row[first + 6])
        }
        return Chat(
            id: row[first], title: row[first + 1], createdAt: row[first + 2], lastMessage: lastMessage,
            lastMessageDate: row[first + 7], unread: row[first + 8], revision: row[first + 9])
    }

    func fetchChat(id: String) throws -> Chat? {
        try statements.fetchChat.fetchOne(id) { Self.decodeChat($0) }
    }

    func fetchStoredMessage(id: String) throws -> StoredMessage? {
        try statements.fetchMessage.fetchOne(id) { row in
            StoredMessage(
                chatID: row[0], sender: row[1], text: row[2], originalText: row[3], sentAt: row[4],
                editedAt: row[5], isDeleted: row[6])
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
                chat.revision)
    }

    /// Writes `new` over `old` when a displayed field differs, with a new revision and a change-log
    /// row; otherwise writes nothing. Returns the chat as stored.
    func saveChat(_ new: Chat, replacing old: Chat) throws -> Chat {
        guard new.title != old.title || new.lastMessage != old.lastMessage
            || new.lastMessageDate != old.lastMessageDate || new.unread != old.unread
        else { return old }
        var saved = new
        saved.revision = try logChange(chatID: new.id, kind: .update)
        let lastMessage = saved.lastMessage
        if saved.lastMessageDate == old.lastMessageDate {
            try statements.updateChat.execute(
                    saved.id, saved.title, lastMessage?.id, lastMessage?.sender, lastMessage?.text,
                    lastMessage?.sentAt, saved.unread, saved.revision)
        } else {
            try statements.updateChatAndDate.execute(
                    saved.id, saved.title, lastMessage?.id, lastMessage?.sender, lastMessage?.text,
                    lastMessage?.sentAt, saved.unread, saved.revision, saved.lastMessageDate)
        }
        return saved
    }
}

/// What a change-log row records.
enum ChangeKind: String {
    case create, update, remove
}
