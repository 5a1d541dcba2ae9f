import ChatModel
import Foundation
import Testing
import TestSupport

@testable import ChatStore

/// A post in order reads its chat's history ends from what the store's last post to that chat
/// left (`PostStartCache`), not from the file: nothing written since by another connection, by
/// another event, or by a group that failed may be missed.
@Suite struct PostStartCacheTests {
    /// A post by another connection between two groups: the next post follows it in the chain.
    @Test func aPostByAnotherConnectionIsFollowed() throws {
        let test = try TestStore()
        let store = test.store
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0))
        #expect(try store.apply(message("m1", in: "c", at: 10)) == .posted(duplicate: false))
        let other = try ChatDatabase(path: test.path, options: StoreOptions(durability: .normal))
        #expect(try other.apply(message("m2", in: "c", at: 20)) == .posted(duplicate: false))
        #expect(try store.apply(message("m3", in: "c", at: 30)) == .posted(duplicate: false))
        for reader in [store, other] {
            #expect(try reader.messages(chat: "c", limit: 10).items.map(\.id) == ["m3", "m2", "m1"])
            #expect(try reader.chat(id: "c")?.lastMessage?.id == "m3")
        }
    }

    /// A delete between two posts of one group: the next post links past nothing it removed.
    @Test func anotherEventInTheGroupIsSeen() throws {
        let test = try TestStore()
        let store = test.store
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0))
        let results = try store.apply([
            message("m1", in: "c", at: 10), message("m2", in: "c", at: 20), .deleteMessage(id: "m2"),
            message("m3", in: "c", at: 15), message("m4", in: "c", at: 25),
        ])
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        #expect(try store.messages(chat: "c", limit: 10).items.map(\.id) == ["m4", "m3", "m1"])
        #expect(try store.chat(id: "c")?.lastMessage?.id == "m4")
    }

    /// A chat removed and made again in one group: its first post follows nothing of the old one.
    @Test func aChatMadeAgainStartsAnew() throws {
        let test = try TestStore()
        let store = test.store
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0))
        let results = try store.apply([
            message("m1", in: "c", at: 10), .removeChat(id: "c"), .createChat(id: "c", title: "C", createdAt: 0),
            message("m2", in: "c", at: 20), message("m3", in: "c", at: 30),
        ])
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        #expect(try store.messages(chat: "c", limit: 10).items.map(\.id) == ["m3", "m2"])
        #expect(try store.messages(chat: "c", before: 25, limit: 10).items.map(\.id) == ["m2"])
        #expect(store.postStarts["c"] == nil)  // (read only inside a group)
    }

    /// A group that fails before its commit leaves no post of it behind for the next group.
    @Test func aFailedGroupLeavesNothing() throws {
        let test = try TestStore()
        let store = test.store
        try store.apply(.createChat(id: "c", title: "C", createdAt: 0))
        try store.apply(message("m1", in: "c", at: 10))
        store.beforeCommit = { throw SimulatedFailure() }
        #expect(throws: SimulatedFailure.self) { try store.apply([message("m2", in: "c", at: 20)]) }
        store.beforeCommit = nil
        try store.apply(message("m3", in: "c", at: 30))
        #expect(try store.messages(chat: "c", limit: 10).items.map(\.id) == ["m3", "m1"])
    }

    /// Two connections writing random groups to a few chats (with and without members) — posts
    /// mostly in order, some late, some deletes, some refused: each chat's history, read by
    /// either, is the sorted list of what was posted and not deleted.
    @Test(arguments: [7, 2026, 31337] as [UInt64])
    func twoWritersAgreeWithASortedList(seed: UInt64) throws {
        let test = try TestStore()
        let first = test.store
        let second = try ChatDatabase(path: test.path, options: StoreOptions(durability: .normal))
        var random = SeededGenerator(seed: seed)
        let chats = ["a", "b", "c"]
        for chat in chats {
            try first.apply(.createChat(id: chat, title: chat, createdAt: 0, members: chat == "c" ? [] : ["me"]))
        }
        var model: [String: [Message]] = [:]
        var clock: Int64 = 1
        var next = 0
        for _ in 0..<120 {
            let writer = Bool.random(using: &random) ? first : second
            var group: [ChatEvent] = []
            var posted: [Message] = []
            var deleted: [String] = []
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let chat = chats.randomElement(using: &random)!
                switch Int.random(in: 0..<10, using: &random) {
                case 0 where !(model[chat] ?? []).isEmpty:
                    let id = model[chat]!.randomElement(using: &random)!.id
                    if !deleted.contains(id) {
                        group.append(.deleteMessage(id: id))
                        deleted.append(id)
                    }
                case 1:
                    group.append(message("x\(next)", in: "nope", at: clock))  // refused: no such chat
                    next += 1
                default:
                    // In order mostly; one in five late, before the newest.
                    let late = Int.random(in: 0..<5, using: &random) == 0
                    let sentAt = late ? Int64.random(in: 1...clock, using: &random) : clock + 1
                    if !late { clock += 1 }
                    let posting = Message(id: "m\(next)", chat: chat, sender: "ann", text: "t\(next)", sentAt: sentAt)
                    next += 1
                    group.append(.postMessage(posting))
                    posted.append(posting)
                }
            }
            let results = try writer.apply(group)
            #expect(results.count == group.count)
            for message in posted { model[message.chat, default: []].append(message) }
            for id in deleted { for chat in chats { model[chat]?.removeAll { $0.id == id } } }
        }
        for chat in chats {
            let expected = ChatHistoryTests.sorted(model[chat] ?? []).map(\.id)
            for reader in [first, second] {
                #expect(try reader.messages(chat: chat, limit: 10_000).items.map(\.id) == expected, "chat \(chat), seed \(seed)")
                #expect(try reader.chat(id: chat, user: "me")?.lastMessage?.id == (chat == "c" ? nil : expected.first))
            }
        }
    }
}
