import ChatModel
import SQLite

extension ChatDatabase {
    /// The entries of the change log for a user after a sequence, newest first: those of that
    /// membership (`user_id`) or of every member (no `user_id`), each with its chat as the user
    /// sees it now; a chat the user is no longer (or was never) a member of comes without a
    /// row, as removed. The chat row is found by the membership's rowid hint (one search instead
    /// of two through the id's index); a stale hint (after a `VACUUM`) finds none: the chat's
    /// columns are NULL, and the chat is to be read by its id.
    static let changesSQL = """
        SELECT log.chat_id, m.chat_id IS NULL, \(chatColumns)
        FROM change_log AS log
        LEFT JOIN membership AS m ON m.chat_id = log.chat_id AND m.user_id = ?2
        LEFT JOIN chat ON chat.rowid = m.chat_rowid AND chat.id = m.chat_id
        \(lastMessageJoin)
        WHERE log.sequence > ?1 AND (log.user_id IS NULL OR log.user_id = ?2)
        ORDER BY log.sequence DESC
        """
    /// A page: the user's memberships of the list (through `membership_user`, the pinned ones
    /// first and in order; or by a scan), sorted by date, then the page's chat rows.
    static func pageSQL(_ access: MembershipAccess) -> String {
        """
        SELECT \(chatColumns)
        FROM (SELECT chat_id, unread, revision, list, pin_order, muted, last_message_date, last FROM membership
              WHERE \(access.user("?5")) AND list = ?3 AND (?4 = 0 OR unread > 0)
              ORDER BY pin_order DESC, last_message_date DESC, chat_id ASC LIMIT ?1 OFFSET ?2) AS m
        JOIN chat ON chat.id = m.chat_id
        \(lastMessageJoin)
        ORDER BY m.pin_order DESC, m.last_message_date DESC, m.chat_id ASC
        """
    }

    /// The sequence number of the latest change-log row (0 when none).
    public func latestChangeSequence() throws -> Int64 {
        try db.cachedStatement("SELECT COALESCE(MAX(sequence), 0) FROM change_log").fetchValue(Int64.self) ?? 0
    }

    /// Every chat changed for `user` after `sequence` — its own membership changed, or the
    /// chat's shared fields — once each, in the order of its latest change, as `user` sees it
    /// now (nil when the chat was removed or `user` is not a member: a chat the reader does not
    /// hold is to be ignored), and the highest sequence read — all from one read transaction.
    ///
    /// - Throws: `ChatStoreError.changeLogGap` when changes after `sequence` were pruned.
    /// - Complexity: O(log n) per log entry after `sequence`, whatever the number of users.
    public func changes(after sequence: Int64, user: String = User.defaultID) throws -> (changes: [ChatChange], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            let pruned = try prunedThrough()
            if pruned > sequence { throw ChatStoreError.changeLogGap(after: sequence, prunedThrough: pruned) }
            // The entries newest first (the rowid's order backwards: no sort), each with its
            // chat as `user` sees it now; a chat's first entry so is its latest, later rows of
            // the same chat are skipped undecoded. (A GROUP BY, then an ORDER BY, sorted them in
            // two temporary B-trees: as much time as reading the chats.)
            var changes: [ChatChange] = []
            var seen: Set<String> = []
            var stale: [(slot: Int, chatID: String)] = []
            try db.cachedStatement(Self.changesSQL).forEachRow(sequence, user) { row in
                let chatID: String = row[0]
                guard seen.insert(chatID).inserted else { return }
                let removed: Bool = row[1]
                if removed {
                    changes.append(ChatChange(chatID: chatID, chat: nil))
                } else if row.isNull(2) {
                    stale.append((changes.count, chatID))
                    changes.append(ChatChange(chatID: chatID, chat: nil))
                } else {
                    changes.append(ChatChange(chatID: chatID, chat: Self.decodeChat(row, from: 2)))
                }
            }
            // Chats whose hint was stale, by their id: a second read each (a VACUUM that renumbered
            // the chat rows leaves the hints stale; nothing rewrites them, as for the start-up's load).
            for (slot, chatID) in stale { changes[slot].chat = try fetchChat(id: chatID, user: user) }
            changes.reverse()
            return (changes, try latestChangeSequence())
        }
    }

    /// The memberships changed after `sequence`, in the order of their latest change: for
    /// each, the user and the chat, so that a reader knows whose lists to update (a change of a
    /// chat's shared fields names every current member). From one read transaction.
    ///
    /// - Throws: `ChatStoreError.changeLogGap` when changes after `sequence` were pruned.
    /// - Complexity: O(entries after `sequence` + members of the chats they name).
    public func changedMemberships(after sequence: Int64) throws -> (changes: [MembershipChange], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            let pruned = try prunedThrough()
            if pruned > sequence { throw ChatStoreError.changeLogGap(after: sequence, prunedThrough: pruned) }
            let changes = try db.cachedStatement("""
                SELECT user_id, chat_id FROM (\(Self.membershipEntriesSQL))
                GROUP BY user_id, chat_id ORDER BY MAX(sequence), user_id
                """).fetchAll(sequence) { row in MembershipChange(user: row[0], chat: row[1]) }
            return (changes, try latestChangeSequence())
        }
    }

    /// Each change-log entry after ?1 as (user, chat, sequence): an entry naming a user as
    /// itself, an entry of a chat's shared fields once per current member.
    static let membershipEntriesSQL = """
        SELECT log.user_id AS user_id, log.chat_id AS chat_id, log.sequence AS sequence
        FROM change_log AS log WHERE log.sequence > ?1 AND log.user_id IS NOT NULL
        UNION ALL
        SELECT members.user_id, log.chat_id, log.sequence
        FROM change_log AS log JOIN membership AS members ON members.chat_id = log.chat_id
        WHERE log.sequence > ?1 AND log.user_id IS NULL
        """

    /// `PRAGMA data_version`: changes whenever another connection commits to the file — and when
    /// the store reopened its file (a full disk's store that found room), since the connection it
    /// had before saw none of the other processes' commits.
    public func dataVersion() throws -> Int64 {
        let version = try db.cachedStatement("PRAGMA data_version").fetchValue(Int64.self) ?? 0
        return version &+ Int64(reopenings) << 48
    }

    /// Every chat of `user`, list by list (`archive`, then `main`), each in list order, as the
    /// user sees it, and the change sequence they reflect, from one read transaction.
    ///
    /// Without `withContent`, each chat comes without its content — `title` "", `createdAt` 0,
    /// `lastMessage` nil; `loadContent(of:)` reads it — from the user's memberships alone, which
    /// hold every other field: about 3 times as fast at 1,000,000 chats, and no string but the
    /// id is decoded.
    ///
    /// The memberships are read through the `membership_user` index, or by one scan of the
    /// table for a user who holds more than a third of them (`membershipAccess(count:)`), then
    /// sorted (`inListOrder`: the store keeps no index in list order), each with the rowid of
    /// its chat row. A random lookup of each chat row costs seconds at 1,000,000 chats: when the
    /// user has at least an eighth of the chats, one scan of the chat table in storage order fills each
    /// row's title and creation instead, matched to its slot by rowid through an array (matching by
    /// id through a dictionary of 1,000,000 strings took 4 times as long), and each last message
    /// is a seek into the message index (the chat row holds no copy since schema version 12). A
    /// membership whose rowid hint is missing or stale (after a VACUUM) is looked up by id.
    ///
    /// The scan reads every page once, through a page cache of `bulkLoadCacheKiB`: it would
    /// otherwise fill the connection's whole cache (64 MiB by default, about 68 bytes a chat at
    /// 1,000,000 chats, kept for good) with pages the writes may never need. The configured
    /// size is back when this returns.
    ///
    /// - Complexity: O(c log n) for the user's c chats, or O(n) with the scans.
    public func allChats(
        of user: String = User.defaultID, withContent: Bool = true
    ) throws -> (chats: [Chat], latestSequence: Int64) {
        let configured = try db.cachedStatement("PRAGMA cache_size").fetchValue(Int64.self) ?? -2000
        try db.execute("PRAGMA cache_size = -\(Self.bulkLoadCacheKiB)")
        let loaded: (chats: [Chat], latestSequence: Int64)
        do {
            loaded = try scanAllChats(of: user, withContent: withContent)
        } catch {
            try? db.execute("PRAGMA cache_size = \(configured)")  // the scan's error is the one to report
            throw error
        }
        try db.execute("PRAGMA cache_size = \(configured)")
        return loaded
    }

    /// The page cache of `allChats(of:)`' scan.
    static let bulkLoadCacheKiB = 2048

    private func scanAllChats(of user: String, withContent: Bool) throws -> (chats: [Chat], latestSequence: Int64) {
        try db.inTransaction(.deferred) {
            var memberships: [LoadedMembership] = []
            let count = try listSize(of: .main, user: user) + listSize(of: .archive, user: user)
            memberships.reserveCapacityInHugePages(count)
            let access = try membershipAccess(count: count)
            try db.cachedStatement(Self.membershipsSQL(access)).forEachRow(user) { row in
                memberships.append(LoadedMembership(
                    id: row[0], unread: row[1], revision: row[2], pinOrder: row[4], lastMessageDate: row[7],
                    rowID: row[6], list: row[3], muted: row[5]))
            }
            var (chats, rowIDs) = Self.inListOrder(memberships, withRowIDs: withContent)
            memberships = []
            if !withContent { return (chats, try latestChangeSequence()) }
            let chatCount = try chatCount()
            let scan = chats.count * 8 >= chatCount
            func fill(_ slot: Int, with shared: SharedChat) {
                chats[slot].title = shared.title
                chats[slot].createdAt = shared.createdAt
                chats[slot].lastMessage = shared.lastMessage
                chats[slot].lastMessageDate = shared.lastMessageDate
            }
            var filled = [Bool](repeating: false, count: chats.count)
            if scan {
                var slots = RowIDSlots(
                    maxRowID: try db.cachedStatement("SELECT MAX(rowid) FROM chat").fetchValue(Int64.self) ?? 0, chatCount: chatCount)
                for (slot, rowID) in rowIDs.enumerated() { if let rowID { slots.set(rowID: rowID, slot: slot) } }
                rowIDs = []
                // Each chat row goes to the slot its rowid names when that slot holds its id; the
                // slots left (a membership without its chat's rowid) are looked up one by one.
                try db.cachedStatement("SELECT id, title, created_at, rowid FROM chat").forEachRow { row in
                    guard let slot = slots.slot(ofRowID: row[3]), !filled[slot] else { return }
                    let id: String = row[0]
                    guard id == chats[slot].id else { return }
                    chats[slot].title = row[1]
                    chats[slot].createdAt = row[2]
                    filled[slot] = true
                }
                // Each last message: a seek in the chat's message index (schema version 12).
                for slot in chats.indices where filled[slot] {
                    chats[slot].lastMessage = try fetchLatestMessage(chatID: chats[slot].id)
                }
            }
            for slot in chats.indices where !filled[slot] {
                guard let shared = try fetchShared(id: chats[slot].id) else {
                    throw SQLiteError(extendedResultCode: .corrupt, message: "the chat and membership tables disagree")
                }
                fill(slot, with: shared)
            }
            return (chats, try latestChangeSequence())
        }
    }

    /// Sets the content (`title`, `createdAt`, `lastMessage`) of each of `chats` from the store:
    /// the rest of what `allChats(of:withContent: false)` left out. Returns false when some chat
    /// is no longer in the store (another process removed it); that chat is left as it was.
    ///
    /// The lookups share one read transaction (each in its own costs twice as much), or the
    /// caller's.
    ///
    /// - Complexity: O(c log n) for c chats: one lookup each.
    public func loadContent(of chats: inout [Chat]) throws -> Bool {
        func fill(_ chats: inout [Chat]) throws -> Bool {
            var complete = true
            for slot in chats.indices {
                guard let shared = try fetchShared(id: chats[slot].id) else {
                    complete = false
                    continue
                }
                chats[slot].title = shared.title
                chats[slot].createdAt = shared.createdAt
                chats[slot].lastMessage = shared.lastMessage
            }
            return complete
        }
        guard chats.count > 1, db.isAutocommit else { return try fill(&chats) }
        return try db.inTransaction(.deferred) { try fill(&chats) }
    }

    /// Begins a read transaction and its snapshot: every read until `endReadSnapshot()` sees the
    /// file as it is now, whatever other connections commit meanwhile (write-ahead log mode).
    /// For a second connection that reads beside the writer (the engine's feed work beside a
    /// group's statements reads the content the groups before it left).
    public func beginReadSnapshot() throws {
        try db.cachedStatement("BEGIN DEFERRED TRANSACTION").execute()
        do {
            // (The snapshot begins at the transaction's first read.)
            _ = try chatCount()
        } catch {
            endReadSnapshot()
            throw error
        }
    }

    /// Ends the read transaction of `beginReadSnapshot()`.
    public func endReadSnapshot() {
        guard !db.isAutocommit else { return }
        try? db.cachedStatement("COMMIT TRANSACTION").execute()
    }

    /// The number of chats. O(1): a counter kept by the writes.
    public func chatCount() throws -> Int {
        try db.cachedStatement("SELECT chats FROM store_count WHERE id = 0").fetchValue(Int.self) ?? 0
    }

    /// The number of chats in `user`'s `list` (0 for an unknown user), as every event keeps it. O(1).
    public func listSize(of list: ChatList, user: String = User.defaultID) throws -> Int {
        try db.cachedStatement("SELECT total FROM list_counter WHERE user_id = ?1 AND list = ?2")
            .fetchValue(Int.self, user, list.rawValue) ?? 0
    }

    /// The size and unread counters of `user`'s `list` (zeros for an unknown user): the size as
    /// every event keeps it, the unread counters summed from the list's memberships.
    ///
    /// - Complexity: O(chats in the list): the list's memberships, found through
    ///   `membership_user` or by a scan (`membershipAccess(count:)`); a live user's lists keep
    ///   their counters in memory instead.
    public func counters(of list: ChatList, user: String = User.defaultID) throws -> ListCounters {
        // One statement, so one snapshot: the size and the sums agree.
        let access = try membershipAccess(count: listSize(of: list, user: user))
        return try db.cachedStatement("""
            SELECT COALESCE((SELECT total FROM list_counter WHERE user_id = ?1 AND list = ?2), 0),
                COALESCE(SUM(unread > 0), 0), COALESCE(SUM(unread), 0),
                COALESCE(SUM(unread > 0 AND muted = 0), 0), COALESCE(SUM(CASE WHEN muted = 0 THEN unread ELSE 0 END), 0)
            FROM membership WHERE \(access.user("?1")) AND list = ?2
            """).fetchOne(user, list.rawValue) { row in
            ListCounters(
                total: row[0],
                unread: UnreadCounters(chats: row[1], messages: row[2], unmutedChats: row[3], unmutedMessages: row[4]))
        } ?? ListCounters()
    }

    /// The chats at `offset..<offset+limit` of `user`'s list (of its chats with unread messages
    /// when `view.unreadOnly`), as the user sees them.
    ///
    /// - Complexity: O(c log(offset + limit)) for the c chats of the list, which SQLite sorts
    ///   keeping the first offset + limit (0.14–0.16 s for a list of 1,000,000 in a
    ///   single-account store, by a scan: `membershipAccess(count:)`).
    public func chats(in view: ChatListView = .main, user: String = User.defaultID, offset: Int, limit: Int) throws -> [Chat] {
        if offset < 0 { throw ChatError.invalidParams(field: "offset", reason: "must be 0 or more, not \(offset)") }
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        let access = try membershipAccess(count: listSize(of: view.list, user: user))
        return try db.cachedStatement(Self.pageSQL(access)).fetchAll(limit, offset, view.list.rawValue, view.unreadOnly, user) {
            Self.decodeChat($0)
        }
    }

    /// A page of `user`'s list with the list's counters, from one read transaction.
    public func page(
        of view: ChatListView, user: String = User.defaultID, offset: Int, limit: Int
    ) throws -> (counters: ListCounters, items: [Chat]) {
        try db.inTransaction(.deferred) {
            (try counters(of: view.list, user: user), try chats(in: view, user: user, offset: offset, limit: limit))
        }
    }

    /// The chat as `user` sees it; nil when there is no such chat or `user` is not a member.
    public func chat(id: String, user: String = User.defaultID) throws -> Chat? {
        try fetchChat(id: id, user: user)
    }

    /// The user with that id, if any.
    public func user(id: String) throws -> User? {
        try db.cachedStatement("SELECT id, name, created_at FROM user WHERE id = ?1").fetchOne(id) { row in
            User(id: row[0], name: row[1], createdAt: row[2])
        }
    }

    /// Users by id (bytewise), those after `after` when given, at most `limit`.
    ///
    /// - Complexity: O(log u + limit).
    public func users(after: String? = nil, limit: Int = .max) throws -> [User] {
        if limit < 0 { throw ChatError.invalidParams(field: "limit", reason: "must be 0 or more, not \(limit)") }
        return try db.cachedStatement("SELECT id, name, created_at FROM user WHERE ?1 IS NULL OR id > ?1 ORDER BY id LIMIT ?2")
            .fetchAll(after, min(limit, Int(Int64.max))) { row in User(id: row[0], name: row[1], createdAt: row[2]) }
    }

    /// The members of a chat, by user id (bytewise).
    ///
    /// - Throws: `ChatError.notFound` for an unknown chat.
    /// - Complexity: O(log n + members).
    public func members(ofChat chatID: String) throws -> [User] {
        try Identifier.validate(chatID, field: "chat")
        return try db.inTransaction(.deferred) {
            guard try chatExists(chatID) else { throw ChatError.notFound(kind: "chat", id: chatID) }
            return try db.cachedStatement("""
                SELECT user.id, user.name, user.created_at FROM membership AS m JOIN user ON user.id = m.user_id
                WHERE m.chat_id = ?1 ORDER BY m.user_id
                """).fetchAll(chatID) { row in User(id: row[0], name: row[1], createdAt: row[2]) }
        }
    }

    /// The index of each chat in `user`'s `list`, nil for an unknown id or a chat of the other
    /// list (an invalid id is `invalidParams`). Counts the memberships before the chat's key, in
    /// one read transaction: O(chats in the list) each.
    public func positions(of ids: [String], in list: ChatList = .main, user: String = User.defaultID) throws -> [String: Int?] {
        for (index, id) in ids.enumerated() { try Identifier.validate(id, field: "ids[\(index)]") }
        return try db.inTransaction(.deferred) {
            var positions: [String: Int?] = [:]
            let keyOf = try db.cachedStatement(
                "SELECT pin_order, last_message_date FROM membership WHERE chat_id = ?1 AND user_id = ?3 AND list = ?2")
            let access = try membershipAccess(count: listSize(of: list, user: user))
            let countBefore = try db.cachedStatement("""
                SELECT COUNT(*) FROM membership WHERE \(access.user("?5")) AND list = ?4 AND (pin_order > ?1
                    OR (pin_order = ?1 AND (last_message_date > ?2 OR (last_message_date = ?2 AND chat_id < ?3))))
                """)
            for id in ids where positions[id] == nil {
                if let key = try keyOf.fetchOne(id, list.rawValue, user, decode: { row -> (Int64, Int64) in (row[0], row[1]) }) {
                    positions[id] = .some(try countBefore.fetchValue(Int.self, key.0, key.1, id, list.rawValue, user))
                } else {
                    positions[id] = .some(nil)
                }
            }
            return positions
        }
    }

    /// A page of a chat's non-deleted messages, newest first by (sentAt, id): those sent before
    /// `before` (exclusive) when given, and after the position `after` when given (both bounds
    /// apply together), at most `limit` of them, with the position to continue after when more
    /// follow.
    ///
    /// The page is read from the chat's chain of messages (`ChatDatabase+History.swift`).
    ///
    /// - Throws: `ChatError.notFound` for an unknown chat, `invalidParams` for a limit below 1.
    /// - Complexity: O((limit + deleted messages passed) log m) for m messages in the store,
    ///   from the newest message or after a page's position; a `before`, or a position that is
    ///   not a message of the chat, walks from the newest message to it first.
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
            guard let ends = try statements.historyEnds.fetchOne(chatID, decode: { row in HistoryEnds(head: row[0], last: row[1]) }) else {
                throw ChatError.notFound(kind: "chat", id: chatID)
            }
            // One more than the page, to know whether another page follows.
            let fetched = try historyPage(chat: chatID, ends: ends, after: bound, limit: limit + 1)
            let items = Array(fetched.prefix(limit))
            return MessagePage(items: items, next: fetched.count > limit ? items.last.map(MessagePosition.init(of:)) : nil)
        }
    }

    /// The number of users and of memberships (a user's row of a chat), from one read
    /// transaction.
    ///
    /// - Complexity: O(users): the memberships are the sum of the per-user list counters.
    public func userCounts() throws -> (users: Int, memberships: Int) {
        try db.inTransaction(.deferred) {
            (try db.cachedStatement("SELECT COUNT(*) FROM user").fetchValue(Int.self) ?? 0,
             try db.cachedStatement("SELECT COALESCE(SUM(total), 0) FROM list_counter").fetchValue(Int.self) ?? 0)
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

/// Slots by chat rowid: an array indexed by rowid when the rowids are dense (as SQLite assigns
/// them), a dictionary otherwise.
private struct RowIDSlots {
    private var dense: [Int32]
    private var sparse: [Int64: Int] = [:]

    init(maxRowID: Int64, chatCount: Int) {
        dense = maxRowID < Int64(2 * chatCount + 1024) ? [Int32](repeating: -1, count: Int(maxRowID) + 1) : []
    }

    mutating func set(rowID: Int64, slot: Int) {
        if rowID >= 0, rowID < Int64(dense.count) { dense[Int(rowID)] = Int32(slot) } else { sparse[rowID] = slot }
    }

    func slot(ofRowID rowID: Int64) -> Int? {
        if rowID >= 0, rowID < Int64(dense.count) { return dense[Int(rowID)] >= 0 ? Int(dense[Int(rowID)]) : nil }
        return sparse[rowID]
    }
}
