import ChatModel
import Foundation
import SQLite

extension ChatDatabase {
    /// Applies one event in its own transaction. Throws `ChatError` when the event is refused
    /// (then nothing changed) and `SQLiteError` when the database fails.
    @discardableResult
    public func apply(_ event: ChatEvent) throws -> EventResult {
        try event.validate()
        try checkCanWrite()
        keepLogWithinSpace()
        return try mappingStorageErrors {
            try db.inTransaction(.immediate) {
                let result = try applyInTransaction(event)
                try countPostedMessages(in: CollectionOfOne(result))
                try maintainChangeLog()
                // Again just before the commit: a file deleted during the transaction rolls it back.
                try checkFileIdentity()
                return result
            }
        }
    }

    /// Applies `events` in order in one transaction (group commit). A refused event is undone
    /// alone and its neighbours still apply. Throws only when the transaction itself fails; then
    /// nothing is committed.
    ///
    /// With `lockLimit`, the transaction stops taking events once it has held the write lock that
    /// long (after one event at least) and commits: the results are then those of a prefix of
    /// `events`, and the caller applies the rest in another transaction, so that other processes'
    /// writers get the lock in between.
    ///
    /// Events run without a savepoint each: almost every refusal comes before its event writes
    /// anything, and a savepoint copies each page an event touches into its journal first (10% of
    /// the instructions of a post; Benchmarks/Results/store.md, 2026-11-29). When an event is
    /// refused after a write, the transaction rolls back and the group is applied again with a
    /// savepoint around each event, which undoes such an event alone.
    public func apply(
        _ events: [ChatEvent], lockLimit: Duration? = nil
    ) throws -> [Result<EventResult, ChatError>] {
        try checkCanWrite()
        keepLogWithinSpace()
        return try mappingStorageErrors {
            do {
                return try applyGroup(events, lockLimit: lockLimit, savepoints: false)
            } catch is RefusedAfterWriting {
                return try applyGroup(events, lockLimit: lockLimit, savepoints: true)
            }
        }
    }

    /// An event of a group applied without savepoints was refused after it changed rows.
    private struct RefusedAfterWriting: Error {}

    private func applyGroup(
        _ events: [ChatEvent], lockLimit: Duration?, savepoints: Bool
    ) throws -> [Result<EventResult, ChatError>] {
        ownPosts = nil
        var posts: OwnPosts?
        let results: [Result<EventResult, ChatError>]
        do {
            results = try applyGroupInTransaction(events, lockLimit: lockLimit, savepoints: savepoints, posts: &posts)
        } catch {
            postStarts.empty()  // (rolled back: the entries may show its posts)
            throw error
        }
        postStarts.endGroup(totalChanges: db.totalChangedRowCount)
        ownPosts = posts
        return results
    }

    private func applyGroupInTransaction(
        _ events: [ChatEvent], lockLimit: Duration?, savepoints: Bool, posts: inout OwnPosts?
    ) throws -> [Result<EventResult, ChatError>] {
        try db.inTransaction(.immediate) {
            try postStarts.beginGroup(dataVersion: dataVersion(), totalChanges: db.totalChangedRowCount)
            try beginRecordingOwnPosts(unless: savepoints)
            var results: [Result<EventResult, ChatError>] = []
            results.reserveCapacity(events.count)
            let clock = ContinuousClock()
            let deadline = lockLimit.map { clock.now.advanced(by: $0) }
            for event in events {
                if let deadline, !results.isEmpty, clock.now >= deadline { break }
                let changesBefore = db.totalChangedRowCount
                do {
                    try event.validate()
                    results.append(.success(try savepoints ? db.inSavepoint { try applyInGroup(event) } : applyInGroup(event)))
                } catch let error as ChatError {
                    postStarts.empty()  // (undone to its savepoint after a post may have written)
                    // (A failed statement's rows are undone by SQLite and not counted.)
                    if !savepoints, db.totalChangedRowCount != changesBefore { throw RefusedAfterWriting() }
                    results.append(.failure(error))
                }
            }
            try countPostedMessages(in: results.lazy.compactMap { try? $0.get() })
            try maintainChangeLog()
            try beforeCommit?()
            // Again just before the commit: a file deleted during the transaction rolls it back
            // (only a deletion during the commit itself still goes unnoticed until the next write).
            try checkFileIdentity()
            posts = try finishRecordingOwnPosts()
            return results
        }
    }

    /// Adds the messages a transaction's posts inserted (each post that is no duplicate) to the
    /// store's count, in one statement: schema version 9 dropped the trigger that counted each.
    private func countPostedMessages(in results: some Sequence<EventResult>) throws {
        let posted = results.reduce(0) { count, result in result == .posted(duplicate: false) ? count + 1 : count }
        if posted > 0 { try statements.countMessages.execute(posted) }
    }

    private func applyInGroup(_ event: ChatEvent) throws -> EventResult {
        if case .postMessage = event {} else { postStarts.empty() }
        let result = try applyInTransaction(event)
        try afterEachEvent?(event)
        return result
    }

    private func applyInTransaction(_ event: ChatEvent) throws -> EventResult {
        switch event {
        case .createUser(let id, let name, let createdAt):
            if try userExists(id) { throw ChatError.conflict("user '\(id)' already exists") }
            try db.cachedStatement("INSERT INTO user (id, name, created_at) VALUES (?1, ?2, ?3)").execute(id, name, createdAt)
            try db.cachedStatement("""
                INSERT INTO list_counter (user_id, list, total) VALUES (?1, 'main', 0), (?1, 'archive', 0)
                """).execute(id)
            return .done
        case .removeUser(let id):
            try requireUser(id)
            try db.cachedStatement("""
                INSERT INTO change_log (chat_id, kind, user_id)
                SELECT chat_id, 'remove', user_id FROM membership WHERE user_id = ?1 ORDER BY list, chat_id
                """).execute(id)
            try db.cachedStatement("DELETE FROM membership WHERE user_id = ?1").execute(id)
            try db.cachedStatement("DELETE FROM list_counter WHERE user_id = ?1").execute(id)
            try db.cachedStatement("DELETE FROM user WHERE id = ?1").execute(id)
            return .done
        case .createChat(let id, let title, let createdAt, let members):
            return .chat(try createChat(id: id, title: title, createdAt: createdAt, members: members))
        case .addMembers(let chatID, let users):
            let shared = try existingShared(id: chatID)
            for user in users { try requireUser(user) }
            for user in users where try fetchChat(id: chatID, user: user) == nil {
                let sequence = try logChange(chatID: chatID, user: user, kind: .create)
                try insertMembership(chat: shared, user: user, sequence: sequence)
            }
            return .done
        case .removeMembers(let chatID, let users):
            _ = try existingShared(id: chatID)
            for user in users { try requireUser(user) }
            for user in users {
                guard let chat = try fetchChat(id: chatID, user: user) else { continue }
                try adjustListTotal(user: user, chat.list, by: -1)
                try db.cachedStatement("DELETE FROM membership WHERE chat_id = ?1 AND user_id = ?2").execute(chatID, user)
                _ = try logChange(chatID: chatID, user: user, kind: .remove)
            }
            return .done
        case .renameChat(let id, let title, let user):
            var shared = try existingShared(id: id)
            if shared.title != title {
                shared.title = title
                try statements.setTitle.execute(id, title)
                try touchMembers(of: shared)
            }
            return .chat(try chatResult(shared, user: user))
        case .removeChat(let id):
            let shared = try existingShared(id: id)
            try adjustMemberListTotals(chatID: id, by: -1)
            // Each member's removal is logged too: once the memberships are gone, the chat's own
            // entry names no one, and `changedMemberships(after:)` must still name every member
            // whose lists lose the chat.
            try db.cachedStatement("""
                INSERT INTO change_log (chat_id, kind, user_id)
                SELECT chat_id, 'remove', user_id FROM membership WHERE chat_id = ?1 ORDER BY user_id
                """).execute(id)
            try db.cachedStatement("DELETE FROM membership WHERE chat_id = ?1").execute(id)
            try deleteHistory(chat: id, head: shared.history.head)
            try statements.removeChat.execute(id)
            _ = try logChange(chatID: id, kind: .remove)
            return .done
        case .markRead(let id, let user):
            var chat = try memberChat(id: id, user: user)
            let old = chat
            guard chat.unread != 0 else { return .chat(chat) }
            chat.unread = 0
            return .chat(try saveMembership(chat, replacing: old, user: user, readThrough: try currentSequence()))
        case .pinChat(let id, let user):
            var chat = try memberChat(id: id, user: user)
            if chat.pinned { return .chat(chat) }
            let pinned = try pinnedChats(of: chat.list, user: user)
            if pinned.count >= options.maxPinnedChats {
                throw ChatError.conflict(
                    "the \(chat.list) list already has \(pinned.count) pinned chats, the limit (maxPinnedChats \(options.maxPinnedChats)); unpin one first")
            }
            let old = chat
            chat.pinOrder = (pinned.first?.pinOrder ?? 0) + 1
            return .chat(try saveMembership(chat, replacing: old, user: user))
        case .unpinChat(let id, let user):
            var chat = try memberChat(id: id, user: user)
            let old = chat
            chat.pinOrder = 0
            return .chat(try saveMembership(chat, replacing: old, user: user))
        case .setPinned(let list, let ids, let user):
            try setPinned(list: list, ids: ids, user: user)
            return .done
        case .moveChat(let id, let list, let user):
            var chat = try memberChat(id: id, user: user)
            guard chat.list != list else { return .chat(chat) }
            let old = chat
            chat.list = list
            chat.pinOrder = 0
            return .chat(try saveMembership(chat, replacing: old, user: user))
        case .setMuted(let id, let muted, let user):
            var chat = try memberChat(id: id, user: user)
            let old = chat
            chat.muted = muted
            return .chat(try saveMembership(chat, replacing: old, user: user))
        case .postMessage(let message):
            return .posted(duplicate: try post(message))
        case .editMessage(let id, let text, let editedAt):
            try edit(messageID: id, text: text, editedAt: editedAt ?? currentMilliseconds())
            return .done
        case .deleteMessage(let id):
            try delete(messageID: id)
            return .done
        }
    }

    /// The sequence of the latest change-log row ever appended (pruning keeps it). O(1).
    func currentSequence() throws -> Int64 {
        try db.cachedStatement("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'change_log'), 0)")
            .fetchValue(Int64.self) ?? 0
    }

    private func requireUser(_ id: String) throws {
        if try !userExists(id) { throw ChatError.notFound(kind: "user", id: id) }
    }

    private func existingShared(id: String) throws -> SharedChat {
        guard let chat = try fetchShared(id: id) else { throw ChatError.notFound(kind: "chat", id: id) }
        return chat
    }

    /// The chat as `user` sees it. A chat `user` is not a member of is not found for them.
    private func memberChat(id: String, user: String) throws -> Chat {
        try requireUser(user)
        guard let chat = try fetchChat(id: id, user: user) else { throw ChatError.notFound(kind: "chat", id: id) }
        return chat
    }

    /// The chat as `user` sees it; for a user who is not a member, its shared fields (nothing
    /// unread, revision 0).
    private func chatResult(_ shared: SharedChat, user: String) throws -> Chat {
        try fetchChat(id: shared.id, user: user) ?? shared.seen(revision: 0)
    }

    /// Logs a change of the chat's shared fields: a new revision (and order date) for every member.
    private func touchMembers(of shared: SharedChat) throws {
        let sequence = try logChange(chatID: shared.id, kind: .update)
        try statements.touchMembers.execute(shared.id, sequence, shared.lastMessageDate, 0, true, shared.history.last)
    }

    /// `user`'s pinned chats of `list`, top first. O(pinned chats).
    func pinnedChats(of list: ChatList, user: String) throws -> [Chat] {
        try statements.pinnedChats.fetchAll(user, list.rawValue) { Self.decodeChat($0) }
    }

    /// Pins exactly `ids` in `list`, in that order, and unpins the list's other chats. A chat whose
    /// pin order can stay keeps it (and its revision): the pin orders kept are the longest
    /// chain of the old ones that still fits the new order.
    private func setPinned(list: ChatList, ids: [String], user: String) throws {
        if ids.count > options.maxPinnedChats {
            throw ChatError.invalidParams(
                field: "chats",
                reason: "has \(ids.count) chats; a list holds at most \(options.maxPinnedChats) pinned chats (maxPinnedChats)")
        }
        var chats: [Chat] = []
        for (position, id) in ids.enumerated() {
            let chat = try memberChat(id: id, user: user)
            if chat.list != list {
                throw ChatError.invalidParams(
                    field: "chats[\(position)]", reason: "'\(id)' is in the \(chat.list) list, not in \(list)")
            }
            chats.append(chat)
        }
        try requireUser(user)
        let current = try pinnedChats(of: list, user: user)
        if current.map(\.id) == ids { return }
        let orders = Self.pinOrders(keeping: chats.map(\.pinOrder))
        let chosen = Set(ids)
        for chat in current where !chosen.contains(chat.id) {
            var unpinned = chat
            unpinned.pinOrder = 0
            _ = try saveMembership(unpinned, replacing: chat, user: user)
        }
        for (chat, order) in zip(chats, orders) {
            var pinned = chat
            pinned.pinOrder = order
            _ = try saveMembership(pinned, replacing: chat, user: user)
        }
    }

    /// Strictly decreasing positive pin orders for a new pin sequence whose chats had `old` pin
    /// orders (0: not pinned), keeping as many of the old ones as possible. O(k²) for k pins.
    static func pinOrders(keeping old: [Int64]) -> [Int64] {
        let count = old.count
        // chain[j]: the most old orders that can be kept among 0...j with j kept.
        var chain = [Int](repeating: 0, count: count)
        var previous = [Int](repeating: -1, count: count)
        for j in 0..<count where old[j] > 0 {
            chain[j] = 1
            for i in 0..<j where chain[i] > 0 && old[i] - old[j] >= Int64(j - i) && chain[i] + 1 > chain[j] {
                chain[j] = chain[i] + 1
                previous[j] = i
            }
        }
        // The last kept order must leave room for the pins below it, down to 1.
        var last = -1
        for j in 0..<count where chain[j] > 0 && old[j] >= Int64(count - j) && (last < 0 || chain[j] > chain[last]) {
            last = j
        }
        var orders = (0..<count).map { Int64(count - $0) }
        guard last >= 0 else { return orders }
        var kept: [Int] = []
        var j = last
        while j >= 0 { kept.append(j); j = previous[j] }
        kept.reverse()
        // Each kept order fixes the ones after it (down by one each) up to the next kept one;
        // those above the first kept one count up from it.
        for (position, k) in kept.enumerated() {
            let end = position + 1 < kept.count ? kept[position + 1] : count
            for m in k..<end { orders[m] = old[k] - Int64(m - k) }
        }
        for m in 0..<kept[0] { orders[m] = old[kept[0]] + Int64(kept[0] - m) }
        return orders
    }

    private func createChat(id: String, title: String, createdAt: Int64, members: [String]) throws -> Chat {
        if try chatExists(id) { throw ChatError.conflict("chat '\(id)' already exists") }
        for user in members { try requireUser(user) }
        let sequence = try logChange(chatID: id, kind: .create)
        try statements.insertChat.execute(id, title, createdAt)
        let shared = SharedChat(id: id, title: title, createdAt: createdAt, lastMessage: nil, lastMessageDate: createdAt)
        for user in members { try insertMembership(chat: shared, user: user, sequence: sequence) }
        return shared.seen(revision: sequence)
    }

    /// Returns true when `message` repeats the first post of its id.
    ///
    /// Writes no page of its chat's but its memberships' (schema version 13): the message is
    /// appended, holding the chat's newest message as the one before it (read from a membership
    /// with the chat's existence check); the memberships, the sender's among them, are written
    /// by one statement, which also moves the order date when the post is the chat's last
    /// message (its latest by (sentAt, id)) and makes the post the chain's `head`. A post after
    /// the order date of a chat whose newest message is its last one needs nothing else; any
    /// other (a late post, a tie of sentAt, a newest message deleted) walks the chain to its
    /// place from the mark after it, and a late one writes the message after it too. Four
    /// statements, as raw SQLite calls making the same rows run (and a mark once in
    /// `markInterval` posts); three after a post in order to the same chat in a group, whose
    /// ends the store kept (`postStarts`).
    ///
    /// - Complexity: O(M) rows written for M members (their memberships), in one set-based
    ///   statement; O(log m + k) for a late post k messages before the mark after it.
    private func post(_ message: Message) throws -> Bool {
        guard let start = try postStarts[message.chat] ?? statements.historyEnds.fetchOne(message.chat, decode: PostStart.init) else {
            // A taken id is a repeated post, or a conflict, whether or not its chat still exists.
            if try fetchStoredMessage(id: message.id) != nil { return try isRepeatedPost(message) }
            throw ChatError.notFound(kind: "chat", id: message.chat)
        }
        let inOrder = start.newestDate.map { message.sentAt > $0 } ?? false
        let place = if inOrder {
            ChainPlacement(previous: start.head, successor: nil)
        } else {
            try placement(of: MessagePosition(sentAt: message.sentAt, id: message.id), chat: message.chat, head: start.head, last: start.last)
        }
        // A taken id inserts nothing.
        try statements.insertMessage.execute(
            message.id, message.chat, message.sender, message.text, message.sentAt, message.editedAt, place.previous)
        guard db.changedRowCount != 0 else { return try isRepeatedPost(message) }
        let seq = db.lastInsertedRowID
        if let successor = place.successor { try statements.relinkMessage.execute(successor, seq) }
        try markIfDue(message, seq: seq)
        let sequence = try logChange(chatID: message.chat, kind: .update)
        let isHead = place.successor == nil
        try statements.postToMembers.execute(message.chat, message.sender, sequence, message.sentAt, place.isLast, seq, isHead)
        if db.changedRowCount == 0 {
            try statements.postToChat.execute(message.chat, place.isLast, seq, isHead)
            postStarts.forget(message.chat)
        } else if inOrder {
            postStarts.remember(PostStart(postInOrder: seq, sentAt: message.sentAt), of: message.chat)
        } else {
            postStarts.forget(message.chat)
        }
        // (Any other post's entry leaves the group's recording incomplete: `OwnPostRecorder`.)
        if inOrder { recordPostInOrder(message, sequence: sequence) }
        return false
    }

    /// True when `message` has the chat, sender, sentAt and first text of the stored message with
    /// its id; a conflict naming what differs otherwise.
    private func isRepeatedPost(_ message: Message) throws -> Bool {
        guard let existing = try fetchStoredMessage(id: message.id) else { return false }
        var differences: [String] = []
        if existing.chatID != message.chat { differences.append("chat '\(existing.chatID)'") }
        if existing.sender != message.sender { differences.append("sender '\(existing.sender)'") }
        if existing.sentAt != message.sentAt { differences.append("sentAt \(existing.sentAt)") }
        if existing.originalText != message.text { differences.append("another text") }
        if differences.isEmpty { return true }
        throw ChatError.conflict(
            "message '\(message.id)' already exists with \(differences.joined(separator: ", "))")
    }

    private func edit(messageID: String, text: String, editedAt: Int64) throws {
        guard let message = try fetchStoredMessage(id: messageID), !message.isDeleted else {
            throw ChatError.notFound(kind: "message", id: messageID)
        }
        // The last message's text is the message row's: an edit of it writes no chat row, but
        // every member gets a new revision (the shared fields are read before the edit).
        var shared = try existingShared(id: message.chatID)
        try statements.editMessage.execute(messageID, text, editedAt)
        if shared.lastMessage?.id == messageID, shared.lastMessage?.text != text {
            shared.lastMessage?.text = text
            try touchMembers(of: shared)
        }
    }

    /// Deleting a deleted message again is a no-op, so that a retried delete succeeds. Deleting
    /// a message takes one off the `unread` of every member it was unread for.
    ///
    /// - Complexity: O(M) rows for M members, in set-based statements.
    private func delete(messageID: String) throws {
        guard let message = try fetchStoredMessage(id: messageID) else {
            throw ChatError.notFound(kind: "message", id: messageID)
        }
        if message.isDeleted { return }
        // The chat's last message (and date) falls back to the latest before it when it goes.
        let old = try existingShared(id: message.chatID)
        try statements.deleteMessage.execute(messageID)
        var shared = old
        if old.history.last == message.seq {
            shared.history.last = try firstNotDeleted(from: message.previous)
            try statements.setChatLast.execute(shared.id, shared.history.last)
            shared.lastMessage = try shared.history.last.flatMap(lastMessage(seq:))
            shared.lastMessageDate = shared.lastMessage?.sentAt ?? shared.createdAt
        }
        let sharedChanged = shared.lastMessage != old.lastMessage || shared.lastMessageDate != old.lastMessageDate
        let unreadForSome = try db.cachedStatement("SELECT 1 FROM membership WHERE chat_id = ?1 AND read_through < ?2 LIMIT 1")
            .fetchValue(Int.self, shared.id, message.arrival) != nil
        guard sharedChanged || unreadForSome else { return }
        let sequence = try logChange(chatID: shared.id, kind: .update)
        try statements.touchMembers.execute(
            shared.id, sequence, shared.lastMessageDate, message.arrival, sharedChanged, shared.history.last)
    }
}
