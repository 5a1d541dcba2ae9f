import ChatModel

/// A slow, independent model of SPEC §2: every answer is recomputed from scratch over plain
/// dictionaries, and ids compare as arrays of UTF-8 bytes.
struct ReferenceModel {
    struct StoredChat {
        var title: String
        var createdAt: Int64
        var unread: Int64
    }

    struct StoredMessage {
        var message: Message
        var originalText: String
        var isDeleted = false
    }

    /// How an event ended, without the wording of error messages.
    enum Outcome: Hashable {
        case chat(id: String)
        case posted(duplicate: Bool)
        case done
        case invalidParams, notFound, conflict, limitReached

        init(_ result: Result<EventResult, ChatError>) {
            switch result {
            case .success(.chat(let chat)): self = .chat(id: chat.id)
            case .success(.posted(let duplicate)): self = .posted(duplicate: duplicate)
            case .success(.done): self = .done
            case .failure(.invalidParams): self = .invalidParams
            case .failure(.notFound): self = .notFound
            case .failure(.conflict): self = .conflict
            case .failure(.limitReached): self = .limitReached
            }
        }
    }

    var chats: [String: StoredChat] = [:]
    var messages: [String: StoredMessage] = [:]

    static func byteLess(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    func lastMessage(of chatID: String) -> Message? {
        messages.values.filter { $0.message.chat == chatID && !$0.isDeleted }.map(\.message).max {
            $0.sentAt != $1.sentAt ? $0.sentAt < $1.sentAt : Self.byteLess($0.id, $1.id)
        }
    }

    /// The displayed row of a chat, with revision 0 (revisions are checked apart).
    func row(_ id: String) -> Chat? {
        guard let chat = chats[id] else { return nil }
        let last = lastMessage(of: id)
        return Chat(
            id: id, title: chat.title, createdAt: chat.createdAt,
            lastMessage: last.map { LastMessage(id: $0.id, sender: $0.sender, text: $0.text, sentAt: $0.sentAt) },
            lastMessageDate: last?.sentAt ?? chat.createdAt, unread: chat.unread, revision: 0)
    }

    var list: [Chat] {
        chats.keys.compactMap(row).sorted {
            $0.lastMessageDate != $1.lastMessageDate ? $0.lastMessageDate > $1.lastMessageDate : Self.byteLess($0.id, $1.id)
        }
    }

    static func isValid(_ id: String) -> Bool { !id.isEmpty && id.utf8.count <= 128 }

    mutating func apply(_ event: ChatEvent) -> Outcome {
        switch event {
        case .createChat(let id, let title, let createdAt):
            guard Self.isValid(id) else { return .invalidParams }
            guard chats[id] == nil else { return .conflict }
            chats[id] = StoredChat(title: title, createdAt: createdAt, unread: 0)
            return .chat(id: id)
        case .renameChat(let id, let title):
            guard Self.isValid(id) else { return .invalidParams }
            guard chats[id] != nil else { return .notFound }
            chats[id]!.title = title
            return .chat(id: id)
        case .removeChat(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard chats[id] != nil else { return .notFound }
            chats[id] = nil
            messages = messages.filter { $0.value.message.chat != id }
            return .done
        case .markRead(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard chats[id] != nil else { return .notFound }
            chats[id]!.unread = 0
            return .chat(id: id)
        case .postMessage(let message):
            guard Self.isValid(message.chat), Self.isValid(message.id) else { return .invalidParams }
            if let existing = messages[message.id] {
                let first = existing.message
                let same = first.chat == message.chat && first.sender == message.sender
                    && first.sentAt == message.sentAt && existing.originalText == message.text
                return same ? .posted(duplicate: true) : .conflict
            }
            guard chats[message.chat] != nil else { return .notFound }
            messages[message.id] = StoredMessage(message: message, originalText: message.text)
            chats[message.chat]!.unread += 1
            return .posted(duplicate: false)
        case .editMessage(let id, let text, let editedAt):
            guard Self.isValid(id) else { return .invalidParams }
            guard let existing = messages[id], !existing.isDeleted else { return .notFound }
            messages[id]!.message.text = text
            messages[id]!.message.editedAt = editedAt
            return .done
        case .deleteMessage(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard messages[id] != nil else { return .notFound }
            messages[id]!.isDeleted = true
            return .done
        }
    }
}
