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
    /// The change-log sequence of its post: unread for the members whose read position is below it.
    var arrival: Int64
    /// Its place in its chat's chain (`ChatDatabase+History.swift`).
    var seq: Int64
    var previous: Int64?
}

/// The fields every member of a chat sees alike.
struct SharedChat {
    var id: String
    var title: String
    var createdAt: Int64
    var lastMessage: LastMessage?
    var lastMessageDate: Int64
    /// Where its chain of messages starts.
    var history = HistoryEnds()

    /// The chat as a member with `unread`, `list`… sees it.
    func seen(unread: Int64 = 0, revision: Int64, list: ChatList = .main, pinOrder: Int64 = 0, muted: Bool = false) -> Chat {
        Chat(
            id: id, title: title, createdAt: createdAt, lastMessage: lastMessage, lastMessageDate: lastMessageDate,
            unread: unread, revision: revision, list: list, pinOrder: pinOrder, muted: muted)
    }
}

extension ChatDatabase {
    /// Joins the chat's memberships to its row, as `ends` (a query takes the first: `LIMIT 1`):
    /// the chain's ends of a chat (schema version 13) are `COALESCE(ends.head, chat.head)` and
    /// `COALESCE(ends.last, chat.last)` — its memberships hold them, its row while it has none
    /// (and null while it has members). A plain join: a subquery with its own `LIMIT` is
    /// materialized at every run, 9 more allocations a post (the guard's store benchmark).
    static let historyEndsJoin = "LEFT JOIN membership AS ends ON ends.chat_id = chat.id"
    /// A chat as one member sees it: the chat's columns, its last message's (alias `lm`), then
    /// the membership's (alias `m`), which holds the order date.
    static let chatColumns = """
        chat.id, chat.title, chat.created_at, lm.id, lm.sender, lm.text, lm.sent_at, m.last_message_date, \
        m.unread, m.revision, m.list, m.pin_order, m.muted
        """
    /// Joins the last message of the chat of membership `m`, as `lm`.
    static let lastMessageJoin = "LEFT JOIN message AS lm ON lm.seq = m.last"
    /// The rows `chatColumns` reads from.
    static let memberView = "membership AS m JOIN chat ON chat.id = m.chat_id \(lastMessageJoin)"
    /// A chat's shared fields (`decodeShared`) for chat `?1`: its order date is its last
    /// message's sentAt, or its creation when it has none (as every membership holds it); then
    /// the `seq` of its newest and last messages.
    ///
    /// Three B-tree searches: the chat row, one membership (`historyEndsJoin`), the last message.
    static let sharedSQL = """
        SELECT chat.id, chat.title, chat.created_at, lm.id, lm.sender, lm.text, lm.sent_at, COALESCE(lm.sent_at, chat.created_at), \
            COALESCE(ends.head, chat.head), COALESCE(ends.last, chat.last)
        FROM chat \(historyEndsJoin)
        LEFT JOIN message AS lm ON lm.seq = COALESCE(ends.last, chat.last)
        WHERE chat.id = ?1 LIMIT 1
        """

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
            list: row[first + 10], pinOrder: row[first + 11], muted: row[first + 12])
    }

    static func decodeShared(_ row: Row) -> SharedChat {
        var lastMessage: LastMessage?
        if !row.isNull(3) {
            lastMessage = LastMessage(id: row[3], sender: row[4], text: row[5], sentAt: row[6])
        }
        return SharedChat(
            id: row[0], title: row[1], createdAt: row[2], lastMessage: lastMessage, lastMessageDate: row[7],
            history: HistoryEnds(head: row[8], last: row[9]))
    }

    /// The chat as `user` sees it; nil when there is no such chat or `user` is not a member.
    func fetchChat(id: String, user: String) throws -> Chat? {
        try statements.fetchChat.fetchOne(id, user) { Self.decodeChat($0) }
    }

    func fetchShared(id: String) throws -> SharedChat? {
        try statements.fetchShared.fetchOne(id) { Self.decodeShared($0) }
    }

    func chatExists(_ id: String) throws -> Bool {
        try statements.chatExists.fetchValue(Int.self, id) != nil
    }

    func userExists(_ id: String) throws -> Bool {
        try statements.userExists.fetchValue(Int.self, id) != nil
    }

    func fetchStoredMessage(id: String) throws -> StoredMessage? {
        try statements.fetchMessage.fetchOne(id) { row in
            StoredMessage(
                chatID: row[0], sender: row[1], text: row[2], originalText: row[3], sentAt: row[4],
                editedAt: row[5], isDeleted: row[6], arrival: row[7], seq: row[8], previous: row[9])
        }
    }

    /// The message `seq` as a chat's last message.
    func lastMessage(seq: Int64) throws -> LastMessage? {
        try statements.chainMessage.fetchOne(seq) { row in LastMessage(id: row[0], sender: row[2], text: row[3], sentAt: row[4]) }
    }

    /// The latest non-deleted message of a chat by (sentAt, id): its last message.
    func fetchLatestMessage(chatID: String) throws -> LastMessage? {
        try statements.latestMessage.fetchOne(chatID) { row in
            LastMessage(id: row[0], sender: row[1], text: row[2], sentAt: row[3])
        }
    }

    /// Appends a change-log row and returns its sequence number: the new revision of the
    /// membership of `user`, or of every membership of the chat when `user` is nil.
    func logChange(chatID: String, user: String? = nil, kind: ChangeKind) throws -> Int64 {
        try statements.insertChange.execute(chatID, kind.rawValue, user)
        return db.lastInsertedRowID
    }

    /// Makes `user` a member of `chat` at change-log sequence `sequence` (its revision and read
    /// position): in `main`, unpinned, unmuted, nothing unread.
    func insertMembership(chat: SharedChat, user: String, sequence: Int64) throws {
        try statements.insertMembership.execute(chat.id, user, chat.lastMessageDate, sequence, chat.history.head, chat.history.last)
        try adjustListTotal(user: user, .main, by: 1)
    }

    /// Writes `new` (as its member `user` sees it) over `old` when a field the member's row
    /// displays differs, with a new revision and a change-log row for that membership, and
    /// updates the member's counters; otherwise writes nothing (but `readThrough`). Returns the
    /// chat as stored.
    func saveMembership(_ new: Chat, replacing old: Chat, user: String, readThrough: Int64? = nil) throws -> Chat {
        guard new.unread != old.unread || new.list != old.list || new.pinOrder != old.pinOrder || new.muted != old.muted
        else {
            if let readThrough { try statements.setReadThrough.execute(new.id, user, readThrough) }
            return old
        }
        var saved = new
        saved.revision = try logChange(chatID: new.id, user: user, kind: .update)
        if saved.list == old.list && saved.pinOrder == old.pinOrder {
            try statements.updateMemberState.execute(saved.id, user, saved.unread, saved.muted, saved.revision, readThrough)
        } else {
            try statements.updateMemberKey.execute(
                saved.id, user, saved.unread, saved.muted, saved.revision, readThrough, saved.list.rawValue, saved.pinOrder)
        }
        if saved.list != old.list {
            try adjustListTotal(user: user, old.list, by: -1)
            try adjustListTotal(user: user, saved.list, by: 1)
        }
        return saved
    }

    /// Adds `delta` to the size of `user`'s `list` (`list_counter.total`; the unread counters
    /// are summed when asked for: `counters(of:user:)`). O(1).
    func adjustListTotal(user: String, _ list: ChatList, by delta: Int64) throws {
        try statements.adjustListTotal.execute(user, list.rawValue, delta)
    }

    /// Adds `delta` to the size of the list of every member of a chat, in one statement. O(members).
    func adjustMemberListTotals(chatID: String, by delta: Int64) throws {
        try statements.adjustMemberListTotals.execute(chatID, delta)
    }
}

/// What a change-log row records.
enum ChangeKind: String {
    case create, update, remove
}
