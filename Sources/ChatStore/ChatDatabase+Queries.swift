import ChatModel
import SQLite

extension ChatDatabase {
    // SQL that embeds the chat columns, built once rather than at every call.
    static let changesSQL = """
        SELECT latest.chat_id, chat.id IS NULL, \(qualifiedChatColumns)
        FROM (SELECT chat_id, MAX(sequence) AS sequence FROM change_log
              WHERE sequence > ?1 GROUP BY chat_id) AS latest
        LEFT JOIN chat ON chat.id = latest.chat_id
        ORDER BY latest.sequence
        """
    static let allRowsSQL = "SELECT rowid, \(chatColumns) FROM chat"
    static let pageSQL = """
        SELECT \(chatColumns) FROM chat WHERE list = ?3 AND (?4 = 0 OR unread > 0)
        ORDER BY pin_order DESC, last_message_date DESC, id ASC LIMIT ?1 OFFSET ?2
        """

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

    /// Every chat, list by list (`archive`, then `main`), each in list order, and the change
    /// sequence they reflect, from one read transaction.
    ///
    /// Walking the list-order index costs one random row lookup per chat (seconds at 1,000,000
    /// chats). Instead, the covering index gives each row's slot in list order, then one scan of
    /// the table in storage order decodes every row straight into its slot.
    ///
    /// The scan reads every page once, through a page cache of `bulkLoadCacheKiB`: it would
    /// otherwise fill the connection's whole cache (64 MiB by default, about 68 bytes a chat at
    /// 1,000,000 chats, kept for good) with pages the writes may never need. The configured
    /// size is back when this returns.
    public func allChats() throws -> (chats: [Chat], latestSequence: Int64) {
        let configured = try db.cachedStatement("PRAGMA cache_size").fetchValue(Int64.self) ?? -2000
        try db.execute("PRAGMA cache_size = -\(Self.bulkLoadCacheKiB)")
        let loaded: (chats: [Chat], latestSequence: Int64)
        do {
            loaded = try scanAllChats()
        } catch {
            try? db.execute("PRAGMA cache_size = \(configured)")  // the scan's error is the one to report
            throw error
        }
        try db.execute("PRAGMA cache_size = \(configured)")
        return loaded
    }

    /// The page cache of `allChats()`' scan.
    static let bulkLoadCacheKiB = 2048

    private func scanAllChats() throws -> (chats: [Chat], latestSequence: Int64) {
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

    /// Each chat row's index in the lists' order, by rowid, from the covering list-order index.
    private func listSlotsByRowID() throws -> RowIDSlots {
        let count = try chatCount()
        let maxRowID = try db.cachedStatement("SELECT MAX(rowid) FROM chat").fetchValue(Int64.self) ?? 0
        var slots = RowIDSlots(maxRowID: maxRowID, chatCount: count)
        try db.cachedStatement("SELECT rowid FROM chat ORDER BY list, pin_order DESC, last_message_date DESC, id ASC").forEachRow([]) {
            slots.append(rowID: $0[0])
        }
        return slots
    }

    /// The number of chats. O(1): a counter kept by the writes.
    public func chatCount() throws -> Int {
        try db.cachedStatement("SELECT chats FROM store_count WHERE id = 0").fetchValue(Int.self) ?? 0
    }

    /// The size and unread counters of `list`, as every event keeps them. O(1).
    public func counters(of list: ChatList) throws -> ListCounters {
        try db.cachedStatement("""
            SELECT total, chats, messages, unmuted_chats, unmuted_messages FROM list_counters WHERE list = ?1
            """).fetchOne(list.rawValue) { row in
            ListCounters(
                total: row[0],
                unread: UnreadCounters(chats: row[1], messages: row[2], unmutedChats: row[3], unmutedMessages: row[4]))
        } ?? ListCounters()
    }

    /// The chats at `offset..<offset+limit` of a list (of its chats with unread messages when
    /// `view.unreadOnly`).
    ///
    /// - Complexity: O(log n + offset + limit) for a whole list; an unread-only page also walks
    ///   past the read chats before it.
    public func chats(in view: ChatListView = .main, offset: Int, limit: Int) throws -> [Chat] {
        if offset < 0 { throw ChatError.invalidParams(field: "offset", reason: "must be 0 or more, not \(offset)") }
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        return try db.cachedStatement(Self.pageSQL).fetchAll(limit, offset, view.list.rawValue, view.unreadOnly) {
            Self.decodeChat($0)
        }
    }

    /// A page of a list with the list's counters, from one read transaction.
    public func page(of view: ChatListView, offset: Int, limit: Int) throws -> (counters: ListCounters, items: [Chat]) {
        try db.inTransaction(.deferred) {
            (try counters(of: view.list), try chats(in: view, offset: offset, limit: limit))
        }
    }

    public func chat(id: String) throws -> Chat? {
        try fetchChat(id: id)
    }

    /// The index of each chat in `list`, nil for an unknown id or a chat of the other list (an
    /// invalid id is `invalidParams`). Counts the index entries before the chat's key, in one read
    /// transaction.
    public func positions(of ids: [String], in list: ChatList = .main) throws -> [String: Int?] {
        for (index, id) in ids.enumerated() { try Identifier.validate(id, field: "ids[\(index)]") }
        return try db.inTransaction(.deferred) {
            var positions: [String: Int?] = [:]
            let keyOf = try db.cachedStatement("SELECT pin_order, last_message_date FROM chat WHERE id = ?1 AND list = ?2")
            let countBefore = try db.cachedStatement("""
                SELECT (SELECT COUNT(*) FROM chat WHERE list = ?4 AND pin_order > ?1)
                     + (SELECT COUNT(*) FROM chat WHERE list = ?4 AND pin_order = ?1 AND last_message_date > ?2)
                     + (SELECT COUNT(*) FROM chat WHERE list = ?4 AND pin_order = ?1 AND last_message_date = ?2 AND id < ?3)
                """)
            for id in ids where positions[id] == nil {
                if let key = try keyOf.fetchOne(id, list.rawValue, decode: { row -> (Int64, Int64) in (row[0], row[1]) }) {
                    positions[id] = .some(try countBefore.fetchValue(Int.self, key.0, key.1, id, list.rawValue))
                } else {
                    positions[id] = .some(nil)
                }
            }
            return positions
        }
    }

    static let messageColumns = "id, chat_id, sender, text, sent_at, edited_at"
    static let messagePageSQL = """
        SELECT \(messageColumns) FROM message
        WHERE chat_id = ?1 AND deleted = 0
        ORDER BY sent_at DESC, id DESC LIMIT ?2
        """
    // A row-value bound, so that the (chat_id, sent_at DESC, id DESC) index seeks to the position.
    static let messagePageAfterSQL = """
        SELECT \(messageColumns) FROM message
        WHERE chat_id = ?1 AND deleted = 0 AND (sent_at, id) < (?3, ?4)
        ORDER BY sent_at DESC, id DESC LIMIT ?2
        """

    /// A page of a chat's non-deleted messages, newest first by (sentAt, id): those sent before
    /// `before` (exclusive) when given, and after the position `after` when given (both bounds
    /// apply together), at most `limit` of them, with the position to continue after when more
    /// follow.
    ///
    /// - Throws: `ChatError.notFound` for an unknown chat, `invalidParams` for a limit below 1.
    /// - Complexity: O(log m + limit) for m messages in the store (an index seek).
    public func messages(
        chat chatID: String, before: Int64? = nil, after: MessagePosition? = nil, limit: Int
    ) throws -> MessagePage {
        try Identifier.validate(chatID, field: "chat")
        if limit < 1 { throw ChatError.invalidParams(field: "limit", reason: "must be 1 or more, not \(limit)") }
        // `before` is the position just ahead of every message sent at `before` (ids are never
        // empty); the tighter of the two bounds applies.
        var bound = after
        if let before, bound.map({ $0.sentAt >= before }) ?? true {
            bound = MessagePosition(sentAt: before, id: "")
        }
        return try db.inTransaction(.deferred) {
            guard try fetchChat(id: chatID) != nil else { throw ChatError.notFound(kind: "chat", id: chatID) }
            let decode = { (row: Row) in
                Message(id: row[0], chat: row[1], sender: row[2], text: row[3], sentAt: row[4], editedAt: row[5])
            }
            // One more than the page, to know whether another page follows.
            let fetched = if let bound {
                try db.cachedStatement(Self.messagePageAfterSQL).fetchAll(chatID, limit + 1, bound.sentAt, bound.id, decode: decode)
            } else {
                try db.cachedStatement(Self.messagePageSQL).fetchAll(chatID, limit + 1, decode: decode)
            }
            let items = Array(fetched.prefix(limit))
            return MessagePage(items: items, next: fetched.count > limit ? items.last.map(MessagePosition.init(of:)) : nil)
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
