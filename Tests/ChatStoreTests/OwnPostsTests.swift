import ChatModel
import Testing
import TestSupport

@testable import ChatStore

/// A group's own posts (`ChatDatabase.ownPosts`), applied to each user's chats as they were
/// before the group, give what the change log gives after it (`changes(after:user:)`).
@Suite struct OwnPostsTests {
    /// Each user's chats as they see them, by id.
    static func chats(of store: ChatDatabase) throws -> [String: [String: Chat]] {
        var chats: [String: [String: Chat]] = [:]
        for user in MultiUserModelTests.userIDs {
            chats[user] = Dictionary(uniqueKeysWithValues: try store.allChats(of: user).chats.map { ($0.id, $0) })
        }
        return chats
    }

    /// Random multi-user streams (`MultiUserModelTests.EventSource`), and between them groups of
    /// posts, nearly all in order (sentAt after every message before them), from members and
    /// non-members, some to one chat several times, some to chats that do not exist.
    @Test(arguments: [3, 11, 2026] as [UInt64])
    func ownPostsGiveWhatTheChangeLogGives(seed: UInt64) throws {
        let files = try TestStore()
        let store = files.store
        store.recordsOwnPosts = true
        var source = MultiUserModelTests.EventSource(random: SeededGenerator(seed: seed))
        var sentAt: Int64 = 1_000
        var recorded = 0, notRecorded = 0
        for step in 0..<400 {
            let events: [ChatEvent]
            if step % 2 == 0 {
                events = (0..<Int.random(in: 1...3, using: &source.random)).map { _ in source.next() }
            } else {
                events = (0..<Int.random(in: 1...8, using: &source.random)).map { _ in
                    sentAt += 1
                    source.nextMessage += 1
                    let late = Int.random(in: 0..<20, using: &source.random) == 0
                    return .postMessage(Message(
                        id: "p\(source.nextMessage)", chat: source.pick(MultiUserModelTests.chatIDs),
                        sender: source.pick(MultiUserModelTests.userIDs + ["stranger"]),
                        text: source.pick(MultiUserModelTests.texts), sentAt: late ? 5 : sentAt))
                }
            }
            let before = try Self.chats(of: store)
            _ = try store.apply(events)
            let context = "seed \(seed) step \(step) \(events)"
            guard let posts = store.ownPosts else {
                notRecorded += 1
                continue
            }
            recorded += 1
            #expect(posts.through == (try store.latestChangeSequence()), "\(context)")
            for user in MultiUserModelTests.userIDs {
                let own = posts.changes(seenBy: user) { before[user]?[$0] }
                // The log also names the chats of which `user` is no member (as nil).
                let logged = try store.changes(after: posts.after, user: user).changes.filter { $0.chat != nil }
                #expect(own == logged, "\(context): \(user)")
            }
        }
        // Both ways were taken, many times.
        #expect(recorded > 100 && notRecorded > 100, "recorded \(recorded), not \(notRecorded)")
    }

    @Test func aGroupWithAnyOtherEntryRecordsNothing() throws {
        let files = try TestStore()
        let store = files.store
        _ = try store.apply([.createChat(id: "c", title: "C", createdAt: 1, members: ["me"])])
        func post(_ id: String, at sentAt: Int64) -> ChatEvent {
            .postMessage(Message(id: id, chat: "c", sender: "ann", text: id, sentAt: sentAt))
        }
        // Not asked for.
        _ = try store.apply([post("m1", at: 10)])
        #expect(store.ownPosts == nil)
        store.recordsOwnPosts = true
        _ = try store.apply([post("m2", at: 20), post("m3", at: 30)])
        #expect(store.ownPosts?.posts.map(\.message.id) == ["m2", "m3"])
        // A late post, a rename: entries that are no post in order.
        _ = try store.apply([post("m4", at: 40), post("late", at: 15)])
        #expect(store.ownPosts == nil)
        _ = try store.apply([post("m5", at: 50), .renameChat(id: "c", title: "D", user: "me")])
        #expect(store.ownPosts == nil)
        // A repeated post writes no entry; a refused one neither.
        _ = try store.apply([post("m5", at: 50), post("m6", at: 60), .postMessage(Message(id: "x", chat: "none", sender: "ann", text: "", sentAt: 70))])
        #expect(store.ownPosts?.posts.map(\.message.id) == ["m6"])
        // A group with no entry at all: nothing to catch up on.
        _ = try store.apply([.createUser(id: "bob", name: "Bob", createdAt: 1)])
        #expect(store.ownPosts?.posts == [])
    }
}
