import ChatModel

/// Realistic traffic among several users for `chatfeed watch --demo`: direct chats and group
/// chats, messages from different members (mostly bumping a chat to the top, with bursts, late
/// messages and deleted last messages), the watched user writing and reading on another device,
/// others reading theirs, renames, people joining and leaving groups, new and removed chats, and
/// each user's own pins, archive and mute. A write the engine refuses (a pin beyond the limit) is
/// skipped. The writes are store events: the watch applies them as another process's writes,
/// which the daemon picks up from the change log like any `chatfeed send`.
struct DemoTraffic {
    private static let names = [
        "Alice", "Bob", "Chen", "Dara", "Emeka", "Fatima", "Gustav", "Hana", "Ivan", "Jonas",
        "Kiri", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tomás",
    ]
    private static let groups = ["Family", "Book club", "Climbing", "Team standup", "Flat 3B", "Weekend trip", "Choir", "Five-a-side"]
    private static let texts = [
        "on my way", "did you see this?", "haha", "see you at 7", "can you call me", "👍", "sounds good",
        "running late, sorry", "what time tomorrow?", "sent the file", "lunch?", "happy birthday!",
    ]

    /// The user the watch shows: most of the traffic is in their chats.
    let viewer: String
    private var now: Int64
    /// Every user but the viewer, by id.
    private var people: [String] = []
    private var names: [String: String] = [:]
    private var chats: [String] = []
    private var members: [String: [String]] = [:]
    private var titles: [String: String] = [:]
    private var sentMessages: [String: [String]] = [:]
    /// "user chat" pairs: each member's own pins, mutes and archived chats.
    private var pinned: Set<String> = []
    private var muted: Set<String> = []
    private var archived: Set<String> = []
    private var nextChat = 0
    private var nextMessage = 0

    init(viewer: String, now: Int64) {
        self.viewer = viewer
        self.now = now
    }

    /// The demo's users, its starting chats (direct chats with the viewer, groups with and
    /// without them, a few direct chats among others), a few messages over the last hours, then
    /// the viewer's pins and a mute: the writes of one phase may be sent at once, the phases in
    /// order.
    mutating func seed() -> [[ChatEvent]] {
        // The viewer may exist already (a new database has `me`): that conflict is skipped.
        var users: [ChatEvent] = [.createUser(id: viewer, name: viewer, createdAt: now)]
        names[viewer] = viewer.prefix(1).uppercased() + viewer.dropFirst()
        for name in Self.names.prefix(14) where name.lowercased() != viewer {
            let id = name.lowercased()
            people.append(id)
            names[id] = name
            users.append(.createUser(id: id, name: name, createdAt: now - 86_400_000))
        }
        var creates: [ChatEvent] = []
        for person in people.prefix(10) {
            creates.append(createDirect(viewer, person, createdAt: now - Int64.random(in: 3_600_000...86_400_000)))
        }
        for (index, group) in Self.groups.prefix(6).enumerated() {
            // Every third group is among others only: its traffic reaches their lists, not the viewer's.
            let others = Array(people.shuffled().prefix(Int.random(in: 3...7)))
            creates.append(createChat(
                title: group, members: index % 3 == 2 ? others : [viewer] + others,
                createdAt: now - Int64.random(in: 3_600_000...86_400_000)))
        }
        for _ in 0..<3 {
            let pair = people.shuffled().prefix(2)
            creates.append(createDirect(pair.first!, pair.last!, createdAt: now - Int64.random(in: 3_600_000...86_400_000)))
        }
        var posts: [ChatEvent] = []
        for chat in chats {
            posts.append(post(to: chat, at: now - Int64.random(in: 60_000...10_800_000)))
        }
        var flags: [ChatEvent] = []
        for chat in viewerChats.prefix(2) { flags.append(toggle(&pinned, chat, user: viewer, on: { .pinChat(id: $0, user: $1) }, off: { .unpinChat(id: $0, user: $1) })) }
        if let chat = viewerChats.last { flags.append(toggle(&muted, chat, user: viewer, on: { .setMuted(id: $0, muted: true, user: $1) }, off: { .setMuted(id: $0, muted: false, user: $1) })) }
        return [users, creates, posts, flags]
    }

    /// The next few writes, in order.
    mutating func next(now: Int64) -> [ChatEvent] {
        self.now = max(self.now + 1, now)
        // Three events in four are in a chat of the viewer's, so that the watched list is busy.
        let mine = viewerChats
        guard let chat = (Int.random(in: 0..<4) < 3 ? mine.randomElement() : nil) ?? chats.randomElement() else {
            return [createDirect(viewer, people.randomElement() ?? viewer, createdAt: self.now)]
        }
        let chatMembers = members[chat] ?? []
        let someone = chatMembers.randomElement() ?? viewer
        switch Int.random(in: 0..<100) {
        case ..<48:
            return [post(to: chat, at: self.now)]
        case ..<52:  // the viewer writes from another device: read for them, unread for the others
            guard chatMembers.contains(viewer) else { return [post(to: chat, at: self.now)] }
            return [post(to: chat, from: viewer, at: self.now)]
        case ..<60:  // a burst across several chats
            return (0..<Int.random(in: 3...6)).compactMap { step in
                chats.randomElement().map { post(to: $0, at: self.now + Int64(step)) }
            }
        case ..<65:  // a late message: counted, no move
            return [post(to: chat, at: self.now - Int64.random(in: 3_600_000...7_200_000))]
        case ..<71:  // the last message deleted: the chat falls back to its previous one
            guard let last = sentMessages[chat]?.popLast() else { return [post(to: chat, at: self.now)] }
            return [.deleteMessage(id: last)]
        case ..<75:
            let title = (titles[chat] ?? chat) + (Bool.random() ? " 🎉" : " ✈︎")
            titles[chat] = title
            return [.renameChat(id: chat, title: title, user: someone)]
        case ..<81:  // a member reads the chat (the viewer: on another device)
            return [.markRead(id: chat, user: Bool.random() && chatMembers.contains(viewer) ? viewer : someone)]
        case ..<84:
            return [toggle(&pinned, chat, user: someone, on: { .pinChat(id: $0, user: $1) }, off: { .unpinChat(id: $0, user: $1) })]
        case ..<87:
            return [toggle(&muted, chat, user: someone, on: { .setMuted(id: $0, muted: true, user: $1) }, off: { .setMuted(id: $0, muted: false, user: $1) })]
        case ..<89:
            let write = toggle(&archived, chat, user: someone, on: { .moveChat(id: $0, to: .archive, user: $1) }, off: { .moveChat(id: $0, to: .main, user: $1) })
            pinned.remove(Self.key(someone, chat))
            return [write]
        case ..<92:  // someone joins a group (the viewer too: it appears in their list)
            let candidates = ([viewer] + people).filter { !chatMembers.contains($0) }
            guard chatMembers.count > 2, let joining = candidates.randomElement() else { return [post(to: chat, at: self.now)] }
            members[chat, default: []].append(joining)
            return [.addMembers(chat: chat, users: [joining])]
        case ..<94:  // someone leaves a group (the viewer too: it leaves their list)
            guard chatMembers.count > 3 else { return [post(to: chat, at: self.now)] }
            forget(someone, in: chat)
            return [.removeMembers(chat: chat, users: [someone])]
        case ..<97:
            if Bool.random(), let person = people.randomElement() {
                return [createDirect(viewer, person, createdAt: self.now)]
            }
            let others = Array(people.shuffled().prefix(Int.random(in: 2...5)))
            return [createChat(title: Self.groups.randomElement()! + " " + String(nextChat), members: [viewer] + others, createdAt: self.now)]
        default:
            guard chats.count > 12 else { return [post(to: chat, at: self.now)] }
            for member in chatMembers { forget(member, in: chat) }
            chats.removeAll { $0 == chat }
            members[chat] = nil
            sentMessages[chat] = nil
            return [.removeChat(id: chat)]
        }
    }

    /// The chats the viewer is a member of.
    private var viewerChats: [String] {
        chats.filter { members[$0]?.contains(viewer) == true }
    }

    private static func key(_ user: String, _ chat: String) -> String {
        user + " " + chat
    }

    /// Sets or clears `user`'s flag of `chat` in `set`, returning the write that does it.
    private func toggle(
        _ set: inout Set<String>, _ chat: String, user: String,
        on: (String, String) -> ChatEvent, off: (String, String) -> ChatEvent
    ) -> ChatEvent {
        let key = Self.key(user, chat)
        if set.insert(key).inserted { return on(chat, user) }
        set.remove(key)
        return off(chat, user)
    }

    private mutating func forget(_ user: String, in chat: String) {
        members[chat]?.removeAll { $0 == user }
        for key in [Self.key(user, chat)] {
            pinned.remove(key)
            muted.remove(key)
            archived.remove(key)
        }
    }

    private mutating func createDirect(_ a: String, _ b: String, createdAt: Int64) -> ChatEvent {
        let title = [a, b].map { names[$0] ?? $0 }.joined(separator: " & ")
        return createChat(title: title, members: a == b ? [a] : [a, b], createdAt: createdAt)
    }

    private mutating func createChat(title: String, members: [String], createdAt: Int64) -> ChatEvent {
        let id = "demo-\(nextChat)"
        nextChat += 1
        chats.append(id)
        titles[id] = title
        self.members[id] = members
        return .createChat(id: id, title: title, createdAt: createdAt, members: members)
    }

    /// A message from `sender`, else from a random member of the chat other than the viewer.
    private mutating func post(to chat: String, from sender: String? = nil, at sentAt: Int64) -> ChatEvent {
        let id = "msg-\(nextMessage)"
        nextMessage += 1
        sentMessages[chat, default: []].append(id)
        let others = (members[chat] ?? []).filter { $0 != viewer }
        let from = sender ?? others.randomElement() ?? viewer
        return .postMessage(Message(id: id, chat: chat, sender: from, text: Self.texts.randomElement()!, sentAt: sentAt))
    }
}
