import ChatModel

/// A slow, independent model of docs/PROTOCOL.md, Values: every answer is recomputed from scratch over plain
/// dictionaries, and ids compare as arrays of UTF-8 bytes.
struct ReferenceModel {
    struct StoredChat {
        var title: String
        var createdAt: Int64
        var unread: Int64
        var list = ChatList.main
        var muted = false
    }

    struct StoredMessage {
        var message: Message
        var originalText: String
        var isDeleted = false
        var isUnread = true
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
    /// Each list's pinned chats, top first.
    var pins: [ChatList: [String]] = [.main: [], .archive: []]
    static let maxPinnedChats = 5

    static func byteLess(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    func lastMessage(of chatID: String) -> Message? {
        messages.values.filter { $0.message.chat == chatID && !$0.isDeleted }.map(\.message).max {
            $0.sentAt != $1.sentAt ? $0.sentAt < $1.sentAt : Self.byteLess($0.id, $1.id)
        }
    }

    /// The displayed row of a chat, with revision 0 (revisions are checked apart) and `pinOrder`
    /// 1 for a pinned chat (the order of pins is checked by the list order).
    func row(_ id: String) -> Chat? {
        guard let chat = chats[id] else { return nil }
        let last = lastMessage(of: id)
        return Chat(
            id: id, title: chat.title, createdAt: chat.createdAt,
            lastMessage: last.map { LastMessage(id: $0.id, sender: $0.sender, text: $0.text, sentAt: $0.sentAt) },
            lastMessageDate: last?.sentAt ?? chat.createdAt, unread: chat.unread, revision: 0,
            list: chat.list, pinOrder: pins[chat.list]!.contains(id) ? 1 : 0, muted: chat.muted)
    }

    /// A list in list order (docs/PROTOCOL.md, Values): its pins in pin order, then the others by date, then id.
    func list(_ list: ChatList) -> [Chat] {
        let pinned = pins[list]!.compactMap(row)
        let others = chats.keys.filter { chats[$0]!.list == list && !pins[list]!.contains($0) }.compactMap(row).sorted {
            $0.lastMessageDate != $1.lastMessageDate ? $0.lastMessageDate > $1.lastMessageDate : Self.byteLess($0.id, $1.id)
        }
        return pinned + others
    }

    /// Every chat, `archive` then `main` (the store's load order).
    var list: [Chat] { list(.archive) + list(.main) }

    /// A list's counters, recounted from the rows.
    func counters(_ list: ChatList) -> ListCounters {
        var counters = ListCounters()
        for chat in self.list(list) {
            counters.total += 1
            if chat.unread > 0 {
                counters.unread.chats += 1
                counters.unread.messages += chat.unread
                if !chat.muted {
                    counters.unread.unmutedChats += 1
                    counters.unread.unmutedMessages += chat.unread
                }
            }
        }
        return counters
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
            pins[chats[id]!.list]!.removeAll { $0 == id }
            chats[id] = nil
            messages = messages.filter { $0.value.message.chat != id }
            return .done
        case .markRead(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard chats[id] != nil else { return .notFound }
            chats[id]!.unread = 0
            for (messageID, stored) in messages where stored.message.chat == id { messages[messageID]!.isUnread = false }
            return .chat(id: id)
        case .pinChat(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard let chat = chats[id] else { return .notFound }
            if pins[chat.list]!.contains(id) { return .chat(id: id) }
            guard pins[chat.list]!.count < Self.maxPinnedChats else { return .conflict }
            pins[chat.list]!.insert(id, at: 0)
            return .chat(id: id)
        case .unpinChat(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard let chat = chats[id] else { return .notFound }
            pins[chat.list]!.removeAll { $0 == id }
            return .chat(id: id)
        case .setPinned(let list, let ids):
            guard ids.allSatisfy(Self.isValid), Set(ids).count == ids.count, ids.count <= Self.maxPinnedChats else {
                return .invalidParams
            }
            for id in ids {
                guard let chat = chats[id] else { return .notFound }
                guard chat.list == list else { return .invalidParams }
            }
            pins[list] = ids
            return .done
        case .moveChat(let id, let list):
            guard Self.isValid(id) else { return .invalidParams }
            guard let chat = chats[id] else { return .notFound }
            if chat.list != list {
                pins[chat.list]!.removeAll { $0 == id }
                chats[id]!.list = list
            }
            return .chat(id: id)
        case .setMuted(let id, let muted):
            guard Self.isValid(id) else { return .invalidParams }
            guard chats[id] != nil else { return .notFound }
            chats[id]!.muted = muted
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
            guard let existing = messages[id] else { return .notFound }
            if !existing.isDeleted, existing.isUnread { chats[existing.message.chat]!.unread -= 1 }
            messages[id]!.isDeleted = true
            messages[id]!.isUnread = false
            return .done
        }
    }
}
