import ChatModel

@testable import ChatStore

extension ChatDatabase {
    /// One event in its own transaction, several in one group commit; each event's outcome.
    func applyAlone(orGrouped events: [ChatEvent]) throws -> [Result<EventResult, ChatError>] {
        guard events.count == 1 else { return try apply(events) }
        do { return [.success(try apply(events[0]))] } catch let error as ChatError { return [.failure(error)] }
    }
}

/// A slow, independent model of docs/PROTOCOL.md, Values: every answer is recomputed from scratch over plain
/// dictionaries, and ids compare as arrays of UTF-8 bytes. Each member keeps the set of message
/// ids unread for them (where the store keeps counts and read positions).
struct ReferenceModel {
    struct StoredChat {
        var title: String
        var createdAt: Int64
        var members: [String: Member] = [:]
    }

    /// One user's state in a chat.
    struct Member {
        var list = ChatList.main
        var muted = false
        var unread: Set<String> = []
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
        case invalidParams, notFound, conflict, limitReached, forbidden

        init(_ result: Result<EventResult, ChatError>) {
            switch result {
            case .success(.chat(let chat)): self = .chat(id: chat.id)
            case .success(.posted(let duplicate)): self = .posted(duplicate: duplicate)
            case .success(.done): self = .done
            case .failure(.invalidParams): self = .invalidParams
            case .failure(.notFound): self = .notFound
            case .failure(.conflict): self = .conflict
            case .failure(.limitReached): self = .limitReached
            case .failure(.forbidden): self = .forbidden
            }
        }
    }

    var users: Set<String> = [User.defaultID]
    var chats: [String: StoredChat] = [:]
    var messages: [String: StoredMessage] = [:]
    /// Each user's pinned chats of each list, top first.
    var pins: [String: [ChatList: [String]]] = [:]
    static let maxPinnedChats = 5

    static func byteLess(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    func lastMessage(of chatID: String) -> Message? {
        messages.values.filter { $0.message.chat == chatID && !$0.isDeleted }.map(\.message).max {
            $0.sentAt != $1.sentAt ? $0.sentAt < $1.sentAt : Self.byteLess($0.id, $1.id)
        }
    }

    func pinned(_ user: String, _ list: ChatList) -> [String] { pins[user]?[list] ?? [] }

    /// The row of a chat as `user` sees it, with revision 0 (revisions are checked apart) and
    /// `pinOrder` 1 for a pinned chat (the order of pins is checked by the list order).
    func row(_ id: String, user: String = User.defaultID) -> Chat? {
        guard let chat = chats[id], let member = chat.members[user] else { return nil }
        let last = lastMessage(of: id)
        return Chat(
            id: id, title: chat.title, createdAt: chat.createdAt,
            lastMessage: last.map { LastMessage(id: $0.id, sender: $0.sender, text: $0.text, sentAt: $0.sentAt) },
            lastMessageDate: last?.sentAt ?? chat.createdAt, unread: Int64(member.unread.count), revision: 0,
            list: member.list, pinOrder: pinned(user, member.list).contains(id) ? 1 : 0, muted: member.muted)
    }

    /// `user`'s list in list order (docs/PROTOCOL.md, Values): its pins in pin order, then the others by date, then id.
    func list(_ list: ChatList, user: String = User.defaultID) -> [Chat] {
        let pins = pinned(user, list)
        let others = chats.keys.filter { chats[$0]!.members[user]?.list == list && !pins.contains($0) }
            .compactMap { row($0, user: user) }
            .sorted {
                $0.lastMessageDate != $1.lastMessageDate ? $0.lastMessageDate > $1.lastMessageDate : Self.byteLess($0.id, $1.id)
            }
        return pins.compactMap { row($0, user: user) } + others
    }

    /// Every chat of `user`, `archive` then `main` (the store's load order).
    func all(user: String = User.defaultID) -> [Chat] { list(.archive, user: user) + list(.main, user: user) }
    var list: [Chat] { all() }

    /// The members of a chat, sorted bytewise.
    func members(_ chatID: String) -> [String] { (chats[chatID]?.members.keys).map { $0.sorted(by: Self.byteLess) } ?? [] }

    /// A list's counters, recounted from the rows.
    func counters(_ list: ChatList, user: String = User.defaultID) -> ListCounters {
        var counters = ListCounters()
        for chat in self.list(list, user: user) {
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

    /// Valid, each once.
    static func areValid(_ ids: [String]) -> Bool { ids.allSatisfy(isValid) && Set(ids).count == ids.count }

    private mutating func leave(_ chatID: String, user: String) {
        guard let member = chats[chatID]?.members[user] else { return }
        pins[user, default: [:]][member.list, default: []].removeAll { $0 == chatID }
        chats[chatID]!.members[user] = nil
    }

    /// Checks a per-member event's ids, user and membership; nil when the event may go on.
    private func refusal(chat id: String, user: String) -> Outcome? {
        guard Self.isValid(id), Self.isValid(user) else { return .invalidParams }
        guard users.contains(user), chats[id]?.members[user] != nil else { return .notFound }
        return nil
    }

    mutating func apply(_ event: ChatEvent) -> Outcome {
        switch event {
        case .createUser(let id, _, _):
            guard Self.isValid(id) else { return .invalidParams }
            guard !users.contains(id) else { return .conflict }
            users.insert(id)
            return .done
        case .removeUser(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard users.contains(id) else { return .notFound }
            for chatID in chats.keys { leave(chatID, user: id) }
            users.remove(id)
            pins[id] = nil
            return .done
        case .createChat(let id, let title, let createdAt, let members):
            guard Self.isValid(id), Self.areValid(members) else { return .invalidParams }
            guard chats[id] == nil else { return .conflict }
            guard members.allSatisfy(users.contains) else { return .notFound }
            chats[id] = StoredChat(title: title, createdAt: createdAt)
            for user in members { chats[id]!.members[user] = Member() }
            return .chat(id: id)
        case .addMembers(let id, let added):
            guard Self.isValid(id), Self.areValid(added) else { return .invalidParams }
            guard chats[id] != nil, added.allSatisfy(users.contains) else { return .notFound }
            for user in added where chats[id]!.members[user] == nil { chats[id]!.members[user] = Member() }
            return .done
        case .removeMembers(let id, let removed):
            guard Self.isValid(id), Self.areValid(removed) else { return .invalidParams }
            guard chats[id] != nil, removed.allSatisfy(users.contains) else { return .notFound }
            for user in removed { leave(id, user: user) }
            return .done
        case .renameChat(let id, let title, let user):
            guard Self.isValid(id), Self.isValid(user) else { return .invalidParams }
            guard chats[id] != nil else { return .notFound }
            chats[id]!.title = title
            return .chat(id: id)
        case .removeChat(let id):
            guard Self.isValid(id) else { return .invalidParams }
            guard let chat = chats[id] else { return .notFound }
            for user in chat.members.keys { leave(id, user: user) }
            chats[id] = nil
            messages = messages.filter { $0.value.message.chat != id }
            return .done
        case .markRead(let id, let user):
            if let refusal = refusal(chat: id, user: user) { return refusal }
            chats[id]!.members[user]!.unread = []
            return .chat(id: id)
        case .pinChat(let id, let user):
            if let refusal = refusal(chat: id, user: user) { return refusal }
            let list = chats[id]!.members[user]!.list
            if pinned(user, list).contains(id) { return .chat(id: id) }
            guard pinned(user, list).count < Self.maxPinnedChats else { return .conflict }
            pins[user, default: [:]][list, default: []].insert(id, at: 0)
            return .chat(id: id)
        case .unpinChat(let id, let user):
            if let refusal = refusal(chat: id, user: user) { return refusal }
            pins[user, default: [:]][chats[id]!.members[user]!.list, default: []].removeAll { $0 == id }
            return .chat(id: id)
        case .setPinned(let list, let ids, let user):
            guard Self.areValid(ids), Self.isValid(user), ids.count <= Self.maxPinnedChats else {
                return .invalidParams
            }
            guard users.contains(user) else { return .notFound }
            for id in ids {
                guard let member = chats[id]?.members[user] else { return .notFound }
                guard member.list == list else { return .invalidParams }
            }
            pins[user, default: [:]][list] = ids
            return .done
        case .moveChat(let id, let list, let user):
            if let refusal = refusal(chat: id, user: user) { return refusal }
            let member = chats[id]!.members[user]!
            if member.list != list {
                pins[user, default: [:]][member.list, default: []].removeAll { $0 == id }
                chats[id]!.members[user]!.list = list
            }
            return .chat(id: id)
        case .setMuted(let id, let muted, let user):
            if let refusal = refusal(chat: id, user: user) { return refusal }
            chats[id]!.members[user]!.muted = muted
            return .chat(id: id)
        case .postMessage(let message):
            guard Self.isValid(message.chat), Self.isValid(message.id) else { return .invalidParams }
            if let existing = messages[message.id] {
                let first = existing.message
                let same = first.chat == message.chat && first.sender == message.sender
                    && first.sentAt == message.sentAt && existing.originalText == message.text
                return same ? .posted(duplicate: true) : .conflict
            }
            guard let chat = chats[message.chat] else { return .notFound }
            messages[message.id] = StoredMessage(message: message, originalText: message.text)
            for user in chat.members.keys {
                if user == message.sender {
                    chats[message.chat]!.members[user]!.unread = []
                } else {
                    chats[message.chat]!.members[user]!.unread.insert(message.id)
                }
            }
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
            let chatID = existing.message.chat
            for user in chats[chatID]!.members.keys { chats[chatID]!.members[user]!.unread.remove(id) }
            messages[id]!.isDeleted = true
            return .done
        }
    }
}
