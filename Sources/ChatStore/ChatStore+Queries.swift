import ChatModel

extension ChatStore {
    /// The sequence number of the latest change-log row (0 when none).
    public func latestChangeSequence() throws -> Int64 {
        try db.cachedStatement("SELECT COALESCE(MAX(sequence), 0) FROM change_log").fetchValue(Int64.self) ?? 0
    }

    /// Every chat changed after `sequence`, once each, in the order of its latest change, with
    /// its current row (nil when it was removed), and the highest sequence read — all from one
    /// read transaction, so they describe one moment.
    public func changes(after sequence: Int64) throws -> (changes: [ChatChange], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            let changes = try db.cachedStatement("""
                SELECT latest.chat_id, chat.id IS NULL, \(Self.qualifiedChatColumns)
                FROM (SELECT chat_id, MAX(sequence) AS sequence FROM change_log
                      WHERE sequence > ?1 GROUP BY chat_id) AS latest
                LEFT JOIN chat ON chat.id = latest.chat_id
                ORDER BY latest.sequence
                """).fetchAll(sequence) { row -> ChatChange in
                let removed: Bool = row[1]
                return ChatChange(chatID: row[0], chat: removed ? nil : Self.decodeChat(row, from: 2))
            }
            return (changes, try latestChangeSequence())
        }
    }

    /// `PRAGMA data_version`: changes whenever another connection commits to the file.
    public func dataVersion() throws -> Int64 {
        try db.cachedStatement("PRAGMA data_version").fetchValue(Int64.self) ?? 0
    }

    /// The whole chat list in list order and the change sequence it reflects, from one read
    /// transaction.
    ///
    /// Reads the table in storage order and sorts in memory: at 1,000,000 chats that is several
    /// times faster than following the list-order index, which costs one random row lookup per chat.
    public func allChats() throws -> (chats: [Chat], latestSequence: Int64) {
        let (stored, latestSequence) = try db.inTransaction(.deferred) { () throws -> ([Chat], Int64) in
            var chats: [Chat] = []
            chats.reserveCapacity(try chatCount())
            try db.cachedStatement("SELECT \(Self.chatColumns) FROM chat").forEachRow([]) {
                chats.append(Self.decodeChat($0))
            }
            return (chats, try latestChangeSequence())
        }
        return (Self.sortedInListOrder(stored), latestSequence)
    }

    static func sortedInListOrder(_ chats: [Chat]) -> [Chat] {
        let dates = chats.map(\.lastMessageDate)
        var order = Array(chats.indices)
        chats.withUnsafeBufferPointer { chats in
            dates.withUnsafeBufferPointer { dates in
                order.sort { a, b in
                    if dates[a] != dates[b] { return dates[a] > dates[b] }
                    return bytewiseLess(chats[a].id, chats[b].id)
                }
            }
        }
        return order.map { chats[$0] }
    }

    public func chatCount() throws -> Int {
        try db.cachedStatement("SELECT COUNT(*) FROM chat").fetchValue(Int.self) ?? 0
    }

    /// The chats at `offset..<offset+limit` of the chat list.
    public func chats(offset: Int, limit: Int) throws -> [Chat] {
        if offset < 0 { throw ChatError.invalidParams(field: "offset", reason: "must be 0 or more, not \(offset)") }
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        return try db.cachedStatement("""
            SELECT \(Self.chatColumns) FROM chat ORDER BY last_message_date DESC, id ASC LIMIT ?1 OFFSET ?2
            """).fetchAll(limit, offset) { Self.decodeChat($0) }
    }

    public func chat(id: String) throws -> Chat? {
        try fetchChat(id: id)
    }

    /// The index of each chat in the chat list, nil for an unknown id. Counts the index entries
    /// before the chat's key, in one read transaction.
    public func positions(of ids: [String]) throws -> [String: Int?] {
        try db.inTransaction(.deferred) {
            var positions: [String: Int?] = [:]
            let dateOf = try db.cachedStatement("SELECT last_message_date FROM chat WHERE id = ?1")
            let countBefore = try db.cachedStatement("""
                SELECT (SELECT COUNT(*) FROM chat WHERE last_message_date > ?1)
                     + (SELECT COUNT(*) FROM chat WHERE last_message_date = ?1 AND id < ?2)
                """)
            for id in ids where positions[id] == nil {
                if let date = try dateOf.fetchValue(Int64.self, id) {
                    positions[id] = .some(try countBefore.fetchValue(Int.self, date, id))
                } else {
                    positions[id] = .some(nil)
                }
            }
            return positions
        }
    }

    /// Non-deleted messages of a chat, newest first by (sentAt, id), sent before `before`
    /// (exclusive) when given.
    public func messages(chat chatID: String, before: Int64?, limit: Int) throws -> [Message] {
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        return try db.inTransaction(.deferred) {
            guard try fetchChat(id: chatID) != nil else { throw ChatError.notFound(kind: "chat", id: chatID) }
            return try db.cachedStatement("""
                SELECT id, chat_id, sender, text, sent_at, edited_at FROM message
                WHERE chat_id = ?1 AND deleted = 0 AND sent_at < ?2
                ORDER BY sent_at DESC, id DESC LIMIT ?3
                """).fetchAll(chatID, before ?? Int64.max, limit) { row in
                Message(id: row[0], chat: row[1], sender: row[2], text: row[3], sentAt: row[4], editedAt: row[5])
            }
        }
    }

    /// Counts of chats and non-deleted messages, and the latest change sequence.
    public func stats() throws -> StoreStats {
        try db.inTransaction(.deferred) {
            StoreStats(
                chats: try chatCount(),
                messages: try db.cachedStatement("SELECT COUNT(*) FROM message WHERE deleted = 0").fetchValue(Int.self) ?? 0,
                latestChangeSequence: try latestChangeSequence())
        }
    }
}
