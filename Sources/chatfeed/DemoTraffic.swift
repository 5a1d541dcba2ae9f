import ChatfeedClient

/// One write of the demo, sent through the client's typed calls.
enum DemoWrite: Sendable {
    case create(chat: String, title: String, createdAt: Int64)
    case post(chat: String, id: String, sender: String, text: String, sentAt: Int64)
    case deleteMessage(String)
    case rename(chat: String, title: String)
    case markRead(String)
    case pin(String), unpin(String), mute(String), unmute(String), archive(String), unarchive(String)
    case remove(String)

    func send(to client: ChatClient) async throws {
        switch self {
        case .create(let chat, let title, let createdAt): try await client.createChat(chat, title: title, createdAt: createdAt)
        case .post(let chat, let id, let sender, let text, let sentAt):
            try await client.postMessage(chat: chat, id: id, sender: sender, text: text, sentAt: sentAt)
        case .deleteMessage(let id): try await client.deleteMessage(id)
        case .rename(let chat, let title): try await client.renameChat(chat, title: title)
        case .markRead(let chat): try await client.markChatRead(chat)
        case .pin(let chat): try await client.pinChat(chat)
        case .unpin(let chat): try await client.unpinChat(chat)
        case .mute(let chat): try await client.muteChat(chat)
        case .unmute(let chat): try await client.unmuteChat(chat)
        case .archive(let chat): try await client.archiveChat(chat)
        case .unarchive(let chat): try await client.unarchiveChat(chat)
        case .remove(let chat): try await client.removeChat(chat)
        }
    }
}

/// Realistic traffic for `chatfeed watch --demo`: mostly new messages that bump a chat to the
/// top, with bursts, late messages, deleted last messages (the chat moves down), renames, reads,
/// new and removed chats, pins and unpins, archiving and unarchiving, mute and unmute. A write
/// the engine refuses (a pin beyond the limit) is skipped.
struct DemoTraffic {
    private static let names = [
        "Alice", "Bob", "Chen", "Dara", "Emeka", "Fatima", "Gustav", "Hana", "Ivan", "Jonas",
        "Kiri", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tomás",
    ]
    private static let groups = ["Family", "Book club", "Climbing", "Team standup", "Flat 3B", "Weekend trip"]
    private static let texts = [
        "on my way", "did you see this?", "haha", "see you at 7", "can you call me", "👍", "sounds good",
        "running late, sorry", "what time tomorrow?", "sent the file", "lunch?", "happy birthday!",
    ]

    private var now: Int64
    private var chats: [String] = []
    private var titles: [String: String] = [:]
    private var sentMessages: [String: [String]] = [:]
    private var nextChat = 0
    private var pinned: Set<String> = []
    private var muted: Set<String> = []
    private var archived: Set<String> = []
    private var nextMessage = 0

    init(now: Int64) {
        self.now = now
    }

    /// The demo's starting chats, then a few messages over the last hours, then pins and a mute:
    /// the writes of one phase may be sent at once, the phases in order.
    mutating func seed() -> [[DemoWrite]] {
        var creates: [DemoWrite] = []
        for name in Self.names.prefix(14) + Self.groups.prefix(4) {
            creates.append(createChat(title: name, createdAt: now - Int64.random(in: 3_600_000...86_400_000)))
        }
        var posts: [DemoWrite] = []
        for chat in chats {
            posts.append(post(to: chat, at: now - Int64.random(in: 60_000...10_800_000)))
        }
        var flags: [DemoWrite] = []
        for chat in chats.prefix(2) {
            pinned.insert(chat)
            flags.append(.pin(chat))
        }
        if let chat = chats.last {
            muted.insert(chat)
            flags.append(.mute(chat))
        }
        return [creates, posts, flags]
    }

    /// The next few writes, in order.
    mutating func next(now: Int64) -> [DemoWrite] {
        self.now = max(self.now + 1, now)
        guard let chat = chats.randomElement() else { return [createChat(title: "Alice", createdAt: now)] }
        switch Int.random(in: 0..<100) {
        case ..<55:
            return [post(to: chat, at: self.now)]
        case ..<65:  // a burst across several chats
            return (0..<Int.random(in: 3...6)).compactMap { step in
                chats.randomElement().map { post(to: $0, at: self.now + Int64(step)) }
            }
        case ..<72:  // a late message: counted, no move
            return [post(to: chat, at: self.now - Int64.random(in: 3_600_000...7_200_000))]
        case ..<80:  // the last message deleted: the chat falls back to its previous one
            guard let last = sentMessages[chat]?.popLast() else { return [post(to: chat, at: self.now)] }
            return [.deleteMessage(last)]
        case ..<87:
            let title = (titles[chat] ?? chat) + (Bool.random() ? " 🎉" : " ✈︎")
            titles[chat] = title
            return [.rename(chat: chat, title: title)]
        case ..<90:
            return [.markRead(chat)]
        case ..<92:
            let pin = pinned.insert(chat).inserted
            if !pin { pinned.remove(chat) }
            return [pin ? .pin(chat) : .unpin(chat)]
        case ..<94:
            let mute = muted.insert(chat).inserted
            if !mute { muted.remove(chat) }
            return [mute ? .mute(chat) : .unmute(chat)]
        case ..<95:
            let archive = archived.insert(chat).inserted
            if !archive { archived.remove(chat) }
            pinned.remove(chat)
            return [archive ? .archive(chat) : .unarchive(chat)]
        case ..<97:
            let name = Self.names.randomElement()! + " & " + Self.names.randomElement()!
            return [createChat(title: name, createdAt: self.now)]
        default:
            guard chats.count > 8 else { return [post(to: chat, at: self.now)] }
            chats.removeAll { $0 == chat }
            sentMessages[chat] = nil
            pinned.remove(chat)
            muted.remove(chat)
            archived.remove(chat)
            return [.remove(chat)]
        }
    }

    private mutating func createChat(title: String, createdAt: Int64) -> DemoWrite {
        let id = "demo-\(nextChat)"
        nextChat += 1
        chats.append(id)
        titles[id] = title
        return .create(chat: id, title: title, createdAt: createdAt)
    }

    private mutating func post(to chat: String, at sentAt: Int64) -> DemoWrite {
        let id = "msg-\(nextMessage)"
        nextMessage += 1
        sentMessages[chat, default: []].append(id)
        return .post(chat: chat, id: id, sender: Self.names.randomElement()!, text: Self.texts.randomElement()!, sentAt: sentAt)
    }
}
