import ChatModel
import Foundation

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
                try maintainChangeLog()
                // Again just before the commit: a file deleted during the transaction rolls it back.
                try checkFileIdentity()
                return result
            }
        }
    }

    /// Applies `events` in order in one transaction (group commit). Each event runs in a
    /// savepoint, so a refused event is undone alone and its neighbours still apply. Throws only
    /// when the transaction itself fails; then nothing is committed.
    ///
    /// With `lockLimit`, the transaction stops taking events once it has held the write lock that
    /// long (after one event at least) and commits: the results are then those of a prefix of
    /// `events`, and the caller applies the rest in another transaction, so that other processes'
    /// writers get the lock in between.
    public func apply(
        _ events: [ChatEvent], lockLimit: Duration? = nil
    ) throws -> [Result<EventResult, ChatError>] {
        try checkCanWrite()
        keepLogWithinSpace()
        return try mappingStorageErrors { try db.inTransaction(.immediate) {
            var results: [Result<EventResult, ChatError>] = []
            results.reserveCapacity(events.count)
            let clock = ContinuousClock()
            let deadline = lockLimit.map { clock.now.advanced(by: $0) }
            for event in events {
                if let deadline, !results.isEmpty, clock.now >= deadline { break }
                do {
                    try event.validate()
                    results.append(.success(try db.inSavepoint { try applyInTransaction(event) }))
                } catch let error as ChatError {
                    results.append(.failure(error))
                }
            }
            try maintainChangeLog()
            try beforeCommit?()
            // Again just before the commit: a file deleted during the transaction rolls it back
            // (only a deletion during the commit itself still goes unnoticed until the next write).
            try checkFileIdentity()
            return results
        } }
    }

    private func applyInTransaction(_ event: ChatEvent) throws -> EventResult {
        switch event {
        case .createChat(let id, let title, let createdAt):
            return .chat(try createChat(id: id, title: title, createdAt: createdAt))
        case .renameChat(let id, let title):
            var chat = try existingChat(id: id)
            let old = chat
            chat.title = title
            return .chat(try saveChat(chat, replacing: old))
        case .removeChat(let id):
            try deleteChat(try existingChat(id: id))
            _ = try logChange(chatID: id, kind: .remove)
            return .done
        case .markRead(let id):
            var chat = try existingChat(id: id)
            let old = chat
            guard chat.unread != 0 else { return .chat(chat) }
            chat.unread = 0
            try statements.markMessagesRead.execute(id)
            return .chat(try saveChat(chat, replacing: old))
        case .pinChat(let id):
            var chat = try existingChat(id: id)
            if chat.pinned { return .chat(chat) }
            let pinned = try pinnedChats(of: chat.list)
            if pinned.count >= options.maxPinnedChats {
                throw ChatError.conflict(
                    "the \(chat.list) list already has \(pinned.count) pinned chats, the limit (maxPinnedChats \(options.maxPinnedChats)); unpin one first")
            }
            let old = chat
            chat.pinOrder = (pinned.first?.pinOrder ?? 0) + 1
            return .chat(try saveChat(chat, replacing: old))
        case .unpinChat(let id):
            var chat = try existingChat(id: id)
            let old = chat
            chat.pinOrder = 0
            return .chat(try saveChat(chat, replacing: old))
        case .setPinned(let list, let ids):
            try setPinned(list: list, ids: ids)
            return .done
        case .moveChat(let id, let list):
            var chat = try existingChat(id: id)
            guard chat.list != list else { return .chat(chat) }
            let old = chat
            chat.list = list
            chat.pinOrder = 0
            return .chat(try saveChat(chat, replacing: old))
        case .setMuted(let id, let muted):
            var chat = try existingChat(id: id)
            let old = chat
            chat.muted = muted
            return .chat(try saveChat(chat, replacing: old))
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

    /// The pinned chats of `list`, top first. O(pinned chats).
    func pinnedChats(of list: ChatList) throws -> [Chat] {
        try statements.pinnedChats.fetchAll(list.rawValue) { Self.decodeChat($0) }
    }

    /// Pins exactly `ids` in `list`, in that order, and unpins the list's other chats. A chat whose
    /// pin order can stay keeps it (and its revision): the pin orders kept are the longest
    /// chain of the old ones that still fits the new order.
    private func setPinned(list: ChatList, ids: [String]) throws {
        if ids.count > options.maxPinnedChats {
            throw ChatError.invalidParams(
                field: "chats",
                reason: "has \(ids.count) chats; a list holds at most \(options.maxPinnedChats) pinned chats (maxPinnedChats)")
        }
        var chats: [Chat] = []
        for (position, id) in ids.enumerated() {
            let chat = try existingChat(id: id)
            if chat.list != list {
                throw ChatError.invalidParams(
                    field: "chats[\(position)]", reason: "'\(id)' is in the \(chat.list) list, not in \(list)")
            }
            chats.append(chat)
        }
        let current = try pinnedChats(of: list)
        if current.map(\.id) == ids { return }
        let orders = Self.pinOrders(keeping: chats.map(\.pinOrder))
        let chosen = Set(ids)
        for chat in current where !chosen.contains(chat.id) {
            var unpinned = chat
            unpinned.pinOrder = 0
            _ = try saveChat(unpinned, replacing: chat)
        }
        for (chat, order) in zip(chats, orders) {
            var pinned = chat
            pinned.pinOrder = order
            _ = try saveChat(pinned, replacing: chat)
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

    private func existingChat(id: String) throws -> Chat {
        guard let chat = try fetchChat(id: id) else { throw ChatError.notFound(kind: "chat", id: id) }
        return chat
    }

    private func createChat(id: String, title: String, createdAt: Int64) throws -> Chat {
        if try fetchChat(id: id) != nil { throw ChatError.conflict("chat '\(id)' already exists") }
        let revision = try logChange(chatID: id, kind: .create)
        let chat = Chat(
            id: id, title: title, createdAt: createdAt, lastMessage: nil, lastMessageDate: createdAt,
            unread: 0, revision: revision)
        try insertChat(chat)
        return chat
    }

    /// Returns true when `message` repeats the first post of its id.
    private func post(_ message: Message) throws -> Bool {
        guard var chat = try fetchChat(id: message.chat) else {
            if try fetchStoredMessage(id: message.id) != nil { return try isRepeatedPost(message) }
            throw ChatError.notFound(kind: "chat", id: message.chat)
        }
        // The insert itself finds a taken id, so a fresh post costs no extra lookup.
        try statements.insertMessage.execute(message.id, message.chat, message.sender, message.text, message.sentAt, message.editedAt)
        if db.changedRowCount == 0 { return try isRepeatedPost(message) }
        let old = chat
        chat.unread += 1
        if Self.isLater(message, than: chat.lastMessage) {
            chat.lastMessage = LastMessage(
                id: message.id, sender: message.sender, text: message.text, sentAt: message.sentAt)
            chat.lastMessageDate = message.sentAt
        }
        _ = try saveChat(chat, replacing: old)
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
        try statements.editMessage.execute(messageID, text, editedAt)
        var chat = try existingChat(id: message.chatID)
        if chat.lastMessage?.id == messageID {
            let old = chat
            chat.lastMessage?.text = text
            _ = try saveChat(chat, replacing: old)
        }
    }

    /// Deleting a deleted message again is a no-op, so that a retried delete succeeds. Deleting
    /// an unread message decrements the chat's `unread`.
    private func delete(messageID: String) throws {
        guard let message = try fetchStoredMessage(id: messageID) else {
            throw ChatError.notFound(kind: "message", id: messageID)
        }
        if message.isDeleted { return }
        try statements.deleteMessage.execute(messageID)
        var chat = try existingChat(id: message.chatID)
        let old = chat
        if message.isUnread { chat.unread -= 1 }
        if chat.lastMessage?.id == messageID {
            chat.lastMessage = try fetchLatestMessage(chatID: chat.id)
            chat.lastMessageDate = chat.lastMessage?.sentAt ?? chat.createdAt
        }
        _ = try saveChat(chat, replacing: old)
    }

    /// True when `message` comes after `last` by (sentAt, id bytewise), or there is no `last`.
    static func isLater(_ message: Message, than last: LastMessage?) -> Bool {
        guard let last else { return true }
        if message.sentAt != last.sentAt { return message.sentAt > last.sentAt }
        return bytewiseLess(last.id, message.id)
    }
}
