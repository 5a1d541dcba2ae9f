import ChatModel
import Foundation
import Testing
import TestSupport

@testable import ChatStore

/// Random multi-user streams applied to the store and to `ReferenceModel`: users come and go,
/// members join and leave, members and non-members post (some late), messages unread for some
/// members are edited and deleted, members read, pin, archive and mute for themselves, chats are
/// removed. After every step, every user's chats as they see them, every counter (against the
/// model and a recount of the store's own rows), the members of every chat and the per-user
/// change log agree.
@Suite struct MultiUserModelTests {
    static let userIDs = ["me", "ann", "bob", "zoë", "Ünal"]
    static let chatIDs = ["a", "B", "é", "z1", "Zz"]
    static let texts = ["hi", "hello", "ok"]

    struct EventSource {
        var random: SeededGenerator
        var nextMessage = 0
        var postedMessageIDs: [String] = []

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

        mutating func someUsers() -> [String] {
            var users = (0..<Int.random(in: 0...3, using: &random)).map { _ in pick(MultiUserModelTests.userIDs) }
            if Int.random(in: 0..<8, using: &random) != 0 { var seen = Set<String>(); users = users.filter { seen.insert($0).inserted } }
            return users
        }

        mutating func next() -> ChatEvent {
            let roll = Int.random(in: 0..<130, using: &random)
            let chat = pick(MultiUserModelTests.chatIDs)
            let user = pick(MultiUserModelTests.userIDs)
            switch roll {
            case 0..<6: return .createUser(id: user, name: user.uppercased(), createdAt: Int64(roll))
            case 6..<8: return .removeUser(id: user)
            case 8..<16:
                return .createChat(id: chat, title: pick(["A", "B"]), createdAt: Int64.random(in: 0...60, using: &random), members: someUsers())
            case 16..<26: return .addMembers(chat: chat, users: someUsers())
            case 26..<31: return .removeMembers(chat: chat, users: someUsers())
            case 31..<35: return .renameChat(id: chat, title: pick(["A", "B", "C"]), user: user)
            case 35..<37: return .removeChat(id: chat)
            case 37..<47: return .markRead(id: chat, user: user)
            case 47..<80:
                nextMessage += 1
                // Users (members or not) and a sender who is no user at all.
                let message = Message(
                    id: "n\(nextMessage)", chat: chat, sender: pick(MultiUserModelTests.userIDs + ["stranger"]),
                    text: pick(MultiUserModelTests.texts), sentAt: Int64.random(in: 0...60, using: &random))
                postedMessageIDs.append(message.id)
                return .postMessage(message)
            case 80..<86 where !postedMessageIDs.isEmpty:
                return .editMessage(id: pick(postedMessageIDs), text: pick(MultiUserModelTests.texts), editedAt: 99)
            case 86..<98 where !postedMessageIDs.isEmpty:
                return .deleteMessage(id: pick(postedMessageIDs))
            case 98..<106: return .pinChat(id: chat, user: user)
            case 106..<110: return .unpinChat(id: chat, user: user)
            case 110..<114:
                let ids = (0..<Int.random(in: 0...3, using: &random)).map { _ in pick(MultiUserModelTests.chatIDs) }
                var seen = Set<String>()
                return .setPinned(list: pick(ChatList.allCases), chats: ids.filter { seen.insert($0).inserted }, user: user)
            case 114..<122: return .moveChat(id: chat, to: pick(ChatList.allCases), user: user)
            default: return .setMuted(id: chat, muted: Bool.random(using: &random), user: user)
            }
        }
    }

    @Test(arguments: [1, 7, 19, 2026] as [UInt64])
    func everyUsersListAgreesWithTheModel(seed: UInt64) throws {
        let files = try TestStore()
        let store = files.store
        var model = ReferenceModel()
        var source = EventSource(random: SeededGenerator(seed: seed))
        var previous: [String: [String: Chat]] = [:]
        var sequence: Int64 = 0

        for step in 0..<300 {
            let groupSize = Int.random(in: 0..<5, using: &source.random) == 0 ? Int.random(in: 2...6, using: &source.random) : 1
            let events = (0..<groupSize).map { _ in source.next() }
            let results = try store.applyAlone(orGrouped: events)
            for (event, result) in zip(events, results) {
                #expect(ReferenceModel.Outcome(result) == model.apply(event), "seed \(seed) step \(step): \(event)")
            }
            let context = "seed \(seed) step \(step) \(events)"
            #expect(try store.users().map(\.id) == model.users.sorted(by: ReferenceModel.byteLess), "\(context)")
            // The memberships' counter (schema version 11's triggers), against a count.
            #expect(try store.db.makeStatement("SELECT memberships FROM store_count").fetchValue(Int.self)
                == store.db.makeStatement("SELECT COUNT(*) FROM membership").fetchValue(Int.self), "\(context)")
            for chat in Self.chatIDs where model.chats[chat] != nil {
                #expect(try store.members(ofChat: chat).map(\.id) == model.members(chat), "\(context): members of \(chat)")
            }
            let latest = try store.latestChangeSequence()
            var left: [MembershipChange] = []
            let byUser = try store.changesByUser(after: sequence) { _ in true }
            #expect(byUser.latestSequence == latest)
            #expect(Set(byUser.changes.map(\.user)).count == byUser.changes.count, "\(context): a user twice")
            for user in Self.userIDs {
                let (chats, _) = try store.allChats(of: user)
                // Loaded without content (every field but the title, createdAt and last message),
                // then the content: the same rows.
                var narrow = try store.allChats(of: user, withContent: false).chats
                #expect(narrow.allSatisfy { $0.title.isEmpty && $0.lastMessage == nil })
                #expect(try store.loadContent(of: &narrow))
                #expect(narrow == chats, "\(context): \(user)'s lists loaded without content, then their content")
                let expected = model.all(user: user)
                #expect(chats.map(\.id) == expected.map(\.id), "\(context): \(user)'s lists")
                for (chat, want) in zip(chats, expected) {
                    var shown = chat
                    shown.revision = 0
                    shown.pinOrder = chat.pinned ? 1 : 0
                    #expect(shown == want, "\(context): \(user)'s row \(chat.id)")
                }
                for list in ChatList.allCases {
                    let counters = try store.counters(of: list, user: user)
                    #expect(counters == model.counters(list, user: user), "\(context): \(user)'s counters of \(list)")
                    #expect(counters == ListCounters.recount(chats, list: list), "\(context): recount of \(user)'s \(list)")
                    #expect(try store.chats(in: ChatListView(list: list), user: user, offset: 1, limit: 3).map(\.id)
                        == Array(expected.filter { $0.list == list }.dropFirst().prefix(3)).map(\.id))
                }
                // Revisions: a row that changed has a higher one, logged for this user; one that did
                // not keeps it (in a group a row may change and change back).
                let changes = try store.changes(after: sequence, user: user).changes
                let before = previous[user] ?? [:]
                for chat in chats {
                    if let old = before[chat.id] {
                        var a = old, b = chat
                        a.revision = 0
                        b.revision = 0
                        if a != b { #expect(chat.revision > old.revision, "\(context): \(user)'s \(chat.id) revision did not move") }
                        if a == b, groupSize == 1 { #expect(chat.revision == old.revision, "\(context): \(user)'s \(chat.id) revision moved") }
                    }
                    if before[chat.id]?.revision != chat.revision {
                        #expect(changes.contains { $0.chatID == chat.id && $0.chat == chat }, "\(context): \(user)'s \(chat.id) not logged")
                        #expect(chat.revision > sequence)
                    }
                }
                // The changes of every user at once are this user's: the same rows in the same
                // order, and the chats left (not the chats of others' lists this user never held).
                let combined = byUser.changes.first { $0.user == user }?.changes ?? []
                #expect(combined.filter { $0.chat != nil } == changes.filter { $0.chat != nil }, "\(context): \(user)'s changes at once")
                let leftAtOnce = Set(combined.filter { $0.chat == nil }.map(\.chatID))
                #expect(leftAtOnce.isSubset(of: Set(changes.filter { $0.chat == nil }.map(\.chatID))), "\(context): \(user)")
                for id in before.keys where !chats.contains(where: { $0.id == id }) {
                    #expect(leftAtOnce.contains(id), "\(context): \(user) left \(id), not in the changes at once")
                }
                for id in before.keys where !chats.contains(where: { $0.id == id }) {
                    #expect(changes.contains { $0.chatID == id && $0.chat == nil }, "\(context): \(user) left \(id) unlogged")
                    left.append(MembershipChange(user: user, chat: id))
                }
                previous[user] = Dictionary(uniqueKeysWithValues: chats.map { ($0.id, $0) })
            }
            // Every membership whose row changed is named by the membership log.
            let named = Set(try store.changedMemberships(after: sequence).changes)
            for (user, rows) in previous {
                for chat in rows.values where chat.revision > sequence {
                    #expect(named.contains(MembershipChange(user: user, chat: chat.id)), "\(context): \(user)/\(chat.id) not named")
                }
            }
            // And every membership that ended (a chat removed names its members too).
            for membership in left {
                #expect(named.contains(membership), "\(context): \(membership.user) left \(membership.chat) unnamed")
            }
            sequence = latest
        }
    }

    @Test func aPostToAGroupCountsForEveryOtherMemberAndReadsForTheSender() throws {
        let files = try TestStore()
        let store = files.store
        for user in ["ann", "bob", "cy"] { try store.apply(.createUser(id: user, name: user, createdAt: 0)) }
        try store.apply(.createChat(id: "g", title: "G", createdAt: 0, members: ["ann", "bob", "cy"]))
        try store.apply(.setMuted(id: "g", muted: true, user: "cy"))
        try store.apply(.postMessage(Message(id: "m1", chat: "g", sender: "ann", text: "hi", sentAt: 10)))
        try store.apply(.postMessage(Message(id: "m2", chat: "g", sender: "bob", text: "yo", sentAt: 20)))
        #expect(try store.chat(id: "g", user: "ann")?.unread == 1)
        #expect(try store.chat(id: "g", user: "bob")?.unread == 0)
        #expect(try store.chat(id: "g", user: "cy")?.unread == 2)
        #expect(try store.counters(of: .main, user: "cy") == ListCounters(total: 1, unread: UnreadCounters(chats: 1, messages: 2)))
        // A late post is counted but does not move the chat; deleting it takes it off where unread.
        try store.apply(.postMessage(Message(id: "m0", chat: "g", sender: "cy", text: "late", sentAt: 5)))
        #expect(try store.chat(id: "g", user: "ann")?.lastMessage?.id == "m2")
        #expect(try store.chat(id: "g", user: "ann")?.unread == 2)
        #expect(try store.chat(id: "g", user: "cy")?.unread == 0)
        try store.apply(.deleteMessage(id: "m0"))
        #expect(try store.chat(id: "g", user: "ann")?.unread == 1)
        #expect(try store.chat(id: "g", user: "bob")?.unread == 0)
        // No one, and no chat: not found; a second user 'ann': conflict.
        #expect(throws: ChatError.notFound(kind: "user", id: "dan")) { try store.apply(.addMembers(chat: "g", users: ["dan"])) }
        #expect(throws: ChatError.notFound(kind: "chat", id: "x")) { try store.apply(.addMembers(chat: "x", users: ["ann"])) }
        #expect(throws: ChatError.conflict("user 'ann' already exists")) { try store.apply(.createUser(id: "ann", name: "A", createdAt: 1)) }
        #expect(throws: ChatError.notFound(kind: "chat", id: "g")) { try store.apply(.markRead(id: "g", user: "me")) }
    }

    @Test func aMembershipRevisionNeverRepeatsAcrossLeavingAndJoining() throws {
        let files = try TestStore()
        let store = files.store
        try store.apply(.createUser(id: "ann", name: "Ann", createdAt: 0))
        try store.apply(.createChat(id: "g", title: "G", createdAt: 0, members: ["me", "ann"]))
        var seen = Set<Int64>()
        for round in 0..<5 {
            let revision = try #require(try store.chat(id: "g", user: "ann")).revision
            #expect(seen.insert(revision).inserted, "round \(round): revision \(revision) repeated")
            try store.apply(.removeMembers(chat: "g", users: ["ann"]))
            #expect(try store.chat(id: "g", user: "ann") == nil)
            try store.apply(.addMembers(chat: "g", users: ["ann"]))
        }
        // A user removed takes their memberships, not their messages.
        try store.apply(.postMessage(Message(id: "m", chat: "g", sender: "ann", text: "bye", sentAt: 1)))
        try store.apply(.removeUser(id: "ann"))
        #expect(try store.members(ofChat: "g").map(\.id) == ["me"])
        #expect(try store.messages(chat: "g", limit: 10).items.map(\.id) == ["m"])
        #expect(try store.changes(after: 0, user: "ann").changes.last == ChatChange(chatID: "g", chat: nil))
    }

    /// A chat's last message is read from its messages (schema version 12), whether or not it
    /// has members: a chat whose last member leaves, or is removed as a user, keeps it, a post to
    /// it without members moves it (a late one does not), an edit or a delete of it shows, and
    /// whoever joins later sees it, with its order date.
    @Test func aChatWithoutMembersKeepsItsLastMessage() throws {
        let files = try TestStore()
        let store = files.store
        for user in ["ann", "bob"] { try store.apply(.createUser(id: user, name: user, createdAt: 0)) }
        for chat in ["g", "h"] { try store.apply(.createChat(id: chat, title: chat, createdAt: 0, members: ["ann"])) }
        try store.apply(.postMessage(Message(id: "g1", chat: "g", sender: "ann", text: "first", sentAt: 10)))
        try store.apply(.postMessage(Message(id: "g2", chat: "g", sender: "ann", text: "second", sentAt: 20)))
        try store.apply(.postMessage(Message(id: "h1", chat: "h", sender: "ann", text: "only", sentAt: 30)))
        try store.apply(.removeMembers(chat: "g", users: ["ann"]))
        try store.apply(.removeUser(id: "ann"))
        try store.apply(.postMessage(Message(id: "g0", chat: "g", sender: "x", text: "late", sentAt: 5)))
        try store.apply(.addMembers(chat: "g", users: ["bob"]))
        #expect(try store.chat(id: "g", user: "bob")?.lastMessage == LastMessage(id: "g2", sender: "ann", text: "second", sentAt: 20))
        try store.apply(.removeMembers(chat: "g", users: ["bob"]))
        try store.apply(.addMembers(chat: "h", users: ["bob"]))
        #expect(try store.chat(id: "h", user: "bob")?.lastMessage == LastMessage(id: "h1", sender: "ann", text: "only", sentAt: 30))
        #expect(try store.chat(id: "h", user: "bob")?.lastMessageDate == 30)
        try store.apply(.postMessage(Message(id: "g3", chat: "g", sender: "x", text: "third", sentAt: 25)))
        try store.apply(.editMessage(id: "g3", text: "3rd", editedAt: 26))
        try store.apply(.addMembers(chat: "g", users: ["bob"]))
        #expect(try store.chat(id: "g", user: "bob")?.lastMessage == LastMessage(id: "g3", sender: "x", text: "3rd", sentAt: 25))
        #expect(try store.chat(id: "g", user: "bob")?.lastMessageDate == 25)
        // Deleting it falls back to the latest before it, for the members and in the chat row.
        try store.apply(.deleteMessage(id: "g3"))
        #expect(try store.chat(id: "g", user: "bob")?.lastMessage?.id == "g2")
        try store.apply(.removeMembers(chat: "g", users: ["bob"]))
        try store.apply(.addMembers(chat: "g", users: ["bob"]))
        #expect(try store.chat(id: "g", user: "bob")?.lastMessage?.id == "g2")
        #expect(try store.chat(id: "g", user: "bob")?.lastMessageDate == 20)
    }

    /// A user with few of the store's chats loads them one lookup each; one with many, by a scan
    /// of the chat table: both give the list in order, as the user sees it.
    @Test func aUsersListLoadsAlikeByLookupOrByScan() throws {
        let files = try TestStore()
        let store = files.store
        try store.apply(.createUser(id: "ann", name: "Ann", createdAt: 0))
        for i in 0..<40 {
            try store.apply(.createChat(id: "c\(i)", title: "C\(i)", createdAt: Int64(i % 7), members: i % 10 == 0 ? ["me", "ann"] : ["me"]))
            try store.apply(.postMessage(Message(id: "m\(i)", chat: "c\(i)", sender: "bob", text: "t\(i)", sentAt: Int64(i * 3 % 11))))
        }
        try store.apply(.moveChat(id: "c10", to: .archive, user: "ann"))
        try store.apply(.pinChat(id: "c30", user: "ann"))
        for user in ["me", "ann"] {
            let loaded = try store.allChats(of: user).chats
            let paged = try store.chats(in: ChatListView(list: .archive), user: user, offset: 0, limit: 100)
                + store.chats(in: .main, user: user, offset: 0, limit: 100)
            #expect(loaded == paged)
            #expect(loaded.count == (user == "me" ? 40 : 4))
            #expect(loaded.allSatisfy { $0.lastMessage?.id == "m" + $0.id.dropFirst() && $0.title == "C" + $0.id.dropFirst() })
        }
        #expect(try store.allChats(of: "ann").chats.map(\.id) == ["c10", "c30", "c20", "c0"])
    }
}

extension MultiUserModelTests {
    /// A post's set-based counter update agrees with the model for chats of 2 to 13 members,
    /// muted members, members with unread and a sender who is or is not a member.
    @Test(arguments: [1, 7, 8, 9, 12])
    func postCountersAgreeWithTheModelForAnyNumberOfMembers(others: Int) throws {
        let files = try TestStore()
        let store = files.store
        var model = ReferenceModel()
        let users = ["me"] + (0..<others).map { "u\($0)" }
        var events: [ChatEvent] = users.dropFirst().map { .createUser(id: $0, name: $0, createdAt: 0) }
        events.append(.createChat(id: "g", title: "G", createdAt: 0, members: users))
        events.append(.createChat(id: "h", title: "H", createdAt: 0, members: users))
        for (index, user) in users.enumerated() where index % 3 == 1 { events.append(.setMuted(id: "g", muted: true, user: user)) }
        for (index, sender) in ["u0", "stranger", "me", "u0", "stranger"].enumerated() {
            events.append(.postMessage(Message(id: "m\(index)", chat: index % 2 == 0 ? "g" : "h", sender: sender, text: "t", sentAt: Int64(10 + index))))
            if index == 2 { events.append(.markRead(id: "g", user: users.last!)) }
        }
        for event in events {
            let result = try store.applyAlone(orGrouped: [event])
            #expect(ReferenceModel.Outcome(result[0]) == model.apply(event), "\(event)")
        }
        for user in users {
            let chats = try store.allChats(of: user).chats
            for list in ChatList.allCases {
                let counters = try store.counters(of: list, user: user)
                #expect(counters == model.counters(list, user: user), "\(user)'s counters of \(list)")
                #expect(counters == ListCounters.recount(chats, list: list), "recount of \(user)'s \(list)")
            }
        }
    }
}
