import JSONCodec
import WireProtocol

/// Realistic traffic for `chatfeed watch --demo`: mostly new messages that bump a chat to the
/// top, with bursts, late messages, deleted last messages (the chat moves down), renames, reads,
/// new and removed chats, pins and unpins, archiving and unarchiving, mute and unmute. Requests
/// are notifications (no id): their answers are not awaited (a pin beyond the limit fails
/// quietly).
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

    /// The demo's starting chats, with a few messages over the last hours.
    mutating func seed() -> [JSONValue] {
        var requests: [JSONValue] = []
        for name in Self.names.prefix(14) + Self.groups.prefix(4) {
            requests.append(createChat(title: name, createdAt: now - Int64.random(in: 3_600_000...86_400_000)))
        }
        for chat in chats {
            requests.append(post(to: chat, at: now - Int64.random(in: 60_000...10_800_000)))
        }
        for chat in chats.prefix(2) {
            pinned.insert(chat)
            requests.append(request("chat.pin", ["chat": .string(chat)]))
        }
        if let chat = chats.last {
            muted.insert(chat)
            requests.append(request("chat.mute", ["chat": .string(chat)]))
        }
        return requests
    }

    /// The next few requests.
    mutating func next(now: Int64) -> [JSONValue] {
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
            return [request("message.delete", ["id": .string(last)])]
        case ..<87:
            let title = (titles[chat] ?? chat) + (Bool.random() ? " 🎉" : " ✈︎")
            titles[chat] = title
            return [request("chat.rename", ["chat": .string(chat), "title": .string(title)])]
        case ..<90:
            return [request("chat.markRead", ["chat": .string(chat)])]
        case ..<92:
            let pin = pinned.insert(chat).inserted
            if !pin { pinned.remove(chat) }
            return [request(pin ? "chat.pin" : "chat.unpin", ["chat": .string(chat)])]
        case ..<94:
            let mute = muted.insert(chat).inserted
            if !mute { muted.remove(chat) }
            return [request(mute ? "chat.mute" : "chat.unmute", ["chat": .string(chat)])]
        case ..<95:
            let archive = archived.insert(chat).inserted
            if !archive { archived.remove(chat) }
            pinned.remove(chat)
            return [request(archive ? "chat.archive" : "chat.unarchive", ["chat": .string(chat)])]
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
            return [request("chat.remove", ["chat": .string(chat)])]
        }
    }

    private mutating func createChat(title: String, createdAt: Int64) -> JSONValue {
        let id = "demo-\(nextChat)"
        nextChat += 1
        chats.append(id)
        titles[id] = title
        return request("chat.create", ["chat": .string(id), "title": .string(title), "createdAt": .integer(createdAt)])
    }

    private mutating func post(to chat: String, at sentAt: Int64) -> JSONValue {
        let id = "msg-\(nextMessage)"
        nextMessage += 1
        sentMessages[chat, default: []].append(id)
        let sender = Self.names.randomElement()!
        return request("message.post", [
            "chat": .string(chat), "id": .string(id), "sender": .string(sender),
            "text": .string(Self.texts.randomElement()!), "sentAt": .integer(sentAt),
        ])
    }

    private func request(_ method: String, _ params: JSONObject) -> JSONValue {
        .object(["jsonrpc": "2.0", "method": .string(method), "params": .object(params)])
    }
}
