import ChatModel
import SQLite

extension ChatStore {
    // SQL that embeds the chat columns, built once rather than at every call.
    static let changesSQL = """
        SELECT latest.chat_id, chat.id IS NULL, \(qualifiedChatColumns)
        FROM (SELECT chat_id, MAX(sequence) AS sequence FROM change_log
              WHERE sequence > ?1 GROUP BY chat_id) AS latest
        LEFT JOIN chat ON chat.id = latest.chat_id
        ORDER BY latest.sequence
        """
    static let allRowsSQL = "SELECT rowid, \(chatColumns) FROM chat"
    static let pageSQL = "SELECT \(chatColumns) FROM chat ORDER BY last_message_date DESC, id ASC LIMIT ?1 OFFSET ?2"

    /// The sequence number of the latest change-log row (0 when none).
    public func latestChangeSequence() throws -> Int64 {
        try db.cachedStatement("SELECT COALESCE(MAX(sequence), 0) FROM change_log").fetchValue(Int64.self) ?? 0
    }

    /// Every chat changed after `sequence`, once each, in the order of its latest change, with
    /// its current row (nil when it was removed), and the highest sequence read — all from one
    /// read transaction, so they describe one moment.
    ///
    /// - Throws: `ChatStoreError.changeLogGap` when changes after `sequence` were pruned.
    public func changes(after sequence: Int64) throws -> (changes: [ChatChange], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            let pruned = try prunedThrough()
            if pruned > sequence { throw ChatStoreError.changeLogGap(after: sequence, prunedThrough: pruned) }
            let changes = try db.cachedStatement(Self.changesSQL).fetchAll(sequence) { row -> ChatChange in
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
    /// Walking the list-order index costs one random row lookup per chat (seconds at 1,000,000
    /// chats). Instead, the covering index gives each row's slot in list order, then one scan of
    /// the table in storage order decodes every row straight into its slot.
    public func allChats() throws -> (chats: [Chat], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            let slots = try listSlotsByRowID()
            let count = slots.count
            let chats = try [Chat](unsafeUninitializedCapacity: count) { buffer, initializedCount in
                var filled = [Bool](repeating: false, count: count)
                var filledCount = 0
                do {
                    try db.cachedStatement(Self.allRowsSQL).forEachRow([]) { row in
                        guard let slot = slots.slot(ofRowID: row[0]), !filled[slot] else {
                            throw SQLiteError(extendedResultCode: .corrupt, message: "the chat table and its list-order index disagree")
                        }
                        (buffer.baseAddress! + slot).initialize(to: Self.decodeChat(row, from: 1))
                        filled[slot] = true
                        filledCount += 1
                    }
                    guard filledCount == count else {
                        throw SQLiteError(extendedResultCode: .corrupt, message: "the chat table and its list-order index disagree")
                    }
                    initializedCount = count
                } catch {
                    for slot in 0..<count where filled[slot] { (buffer.baseAddress! + slot).deinitialize(count: 1) }
                    initializedCount = 0
                    throw error
                }
            }
            return (chats, try latestChangeSequence())
        }
    }

    /// Each chat row's index in the chat list, by rowid, from the covering list-order index.
    private func listSlotsByRowID() throws -> RowIDSlots {
        let count = try chatCount()
        let maxRowID = try db.cachedStatement("SELECT MAX(rowid) FROM chat").fetchValue(Int64.self) ?? 0
        var slots = RowIDSlots(maxRowID: maxRowID, chatCount: count)
        try db.cachedStatement("SELECT rowid FROM chat ORDER BY last_message_date DESC, id ASC").forEachRow([]) {
            slots.append(rowID: $0[0])
        }
        return slots
    }

    /// The number of chats. O(1): a counter kept by the writes.
    public func chatCount() throws -> Int {
        try db.cachedStatement("SELECT chats FROM store_count WHERE id = 0").fetchValue(Int.self) ?? 0
    }

    /// The chats at `offset..<offset+limit` of the chat list.
    public func chats(offset: Int, limit: Int) throws -> [Chat] {
        if offset < 0 { throw ChatError.invalidParams(field: "offset", reason: "must be 0 or more, not \(offset)") }
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        return try db.cachedStatement(Self.pageSQL).fetchAll(limit, offset) { Self.decodeChat($0) }
    }

    public func chat(id: String) throws -> Chat? {
        try fetchChat(id: id)
    }

    /// The index of each chat in the chat list, nil for an unknown id (an invalid id is
    /// `invalidParams`). Counts the index entries before the chat's key, in one read transaction.
    public func positions(of ids: [String]) throws -> [String: Int?] {
        for (index, id) in ids.enumerated() { try Identifier.validate(id, field: "ids[\(index)]") }
        return try db.inTransaction(.deferred) {
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
    /// (exclusive) when given. An invalid chat id is `invalidParams`, an unknown one `notFound`.
    public func messages(chat chatID: String, before: Int64?, limit: Int) throws -> [Message] {
        try Identifier.validate(chatID, field: "chat")
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        return try db.inTransaction(.deferred) {
            guard try fetchChat(id: chatID) != nil else { throw ChatError.notFound(kind: "chat", id: chatID) }
            return try db.cachedStatement("""
                SELECT id, chat_id, sender, text, sent_at, edited_at FROM message
                WHERE chat_id = ?1 AND deleted = 0 AND (?2 IS NULL OR sent_at < ?2)
                ORDER BY sent_at DESC, id DESC LIMIT ?3
                """).fetchAll(chatID, before, limit) { row in
                Message(id: row[0], chat: row[1], sender: row[2], text: row[3], sentAt: row[4], editedAt: row[5])
            }
        }
    }

    /// Counts of chats and non-deleted messages, and the latest change sequence, from one read
    /// transaction. O(log n): the counts are counters kept by every write (schema version 3),
    /// never a count over the tables.
    public func stats() throws -> StoreStats {
        try db.inTransaction(.deferred) {
            let counts = try db.cachedStatement("SELECT chats, messages FROM store_count WHERE id = 0")
                .fetchOne { row -> (Int, Int) in (row[0], row[1]) } ?? (0, 0)
            return StoreStats(chats: counts.0, messages: counts.1, latestChangeSequence: try latestChangeSequence())
        }
    }
}

/// Maps a rowid to its index in the chat list: an array for the usual dense rowids, a
/// dictionary for the rest.
private struct RowIDSlots {
    private var dense: [Int32]
    private var sparse: [Int64: Int] = [:]
    private(set) var count = 0

    init(maxRowID: Int64, chatCount: Int) {
        dense = maxRowID < Int64(2 * chatCount + 1024) ? [Int32](repeating: -1, count: Int(maxRowID) + 1) : []
    }

    mutating func append(rowID: Int64) {
        if rowID >= 0, rowID < Int64(dense.count) { dense[Int(rowID)] = Int32(count) } else { sparse[rowID] = count }
        count += 1
    }

    func slot(ofRowID rowID: Int64) -> Int? {
        if rowID >= 0, rowID < Int64(dense.count) { return dense[Int(rowID)] >= 0 ? Int(dense[Int(rowID)]) : nil }
        return sparse[rowID]
    }
}
