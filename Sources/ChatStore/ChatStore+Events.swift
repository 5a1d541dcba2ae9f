import ChatModel
import Foundation

extension ChatStore {
    /// Applies one event in its own transaction. Throws `ChatError` when the event is refused
    /// (then nothing changed) and `SQLiteError` when the database fails.
    @discardableResult
    public func apply(_ event: ChatEvent) throws -> EventResult {
        try event.validate()
        return try mappingStorageErrors {
            try db.inTransaction(.immediate) {
                let result = try applyInTransaction(event)
                try maintainChangeLog()
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
        try mappingStorageErrors { try db.inTransaction(.immediate) {
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
            _ = try existingChat(id: id)
            try statements.removeChat.execute(id)
            _ = try logChange(chatID: id, kind: .remove)
            return .done
        case .markRead(let id):
            var chat = try existingChat(id: id)
            let old = chat
            chat.unread = 0
            return .chat(try saveChat(chat, replacing: old))
        case .postMessage(let message):
            return .posted(duplicate: try post(message))
        case .editMessage(let id, let text, let editedAt):
            try edit(messageID: id, text: text, editedAt: editedAt ?? Self.now())
            return .done
        case .deleteMessage(let id):
            try delete(messageID: id)
            return .done
        }
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

    /// Deleting a deleted message again is a no-op, so that a retried delete succeeds.
    private func delete(messageID: String) throws {
        guard let message = try fetchStoredMessage(id: messageID) else {
            throw ChatError.notFound(kind: "message", id: messageID)
        }
        if message.isDeleted { return }
        try statements.deleteMessage.execute(messageID)
        var chat = try existingChat(id: message.chatID)
        if chat.lastMessage?.id == messageID {
            let old = chat
            chat.lastMessage = try fetchLatestMessage(chatID: chat.id)
            chat.lastMessageDate = chat.lastMessage?.sentAt ?? chat.createdAt
            _ = try saveChat(chat, replacing: old)
        }
    }

    /// True when `message` comes after `last` by (sentAt, id bytewise), or there is no `last`.
    static func isLater(_ message: Message, than last: LastMessage?) -> Bool {
        guard let last else { return true }
        if message.sentAt != last.sentAt { return message.sentAt > last.sentAt }
        return bytewiseLess(last.id, message.id)
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
