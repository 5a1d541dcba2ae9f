import ChatModel
import ChatStore
import Foundation

/// The members of the fan-out guard's chat (issue 19's goal: a post to a 1,000-member chat ≤ 2 ms
/// in the store).
let fanOutMembers = 1_000

/// The store alone, with the engine's store options, on a database of `members` users who are
/// all members of one chat (the user `me` is not): each post comes from the next member in turn,
/// so it marks the chat read for its sender and adds one unread message to each of the other
/// M − 1 memberships, moving the chat in every member's list. Single-threaded, so every count
/// repeats exactly run to run.
final class FanOutFixture: @unchecked Sendable {
    let store: ChatDatabase
    let members: Int
    private var posted = 0

    init(members: Int) throws {
        self.members = members
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatfeed-guard-bench")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("fan-out-\(members).sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var options = guardEngineOptions(databasePath: path).store
        options.autoCheckpointPages = 16_384  // as the engine sets it
        store = try ChatDatabase(path: path, options: options)
        let users = (0..<members).map(Self.user)
        var events = users.map { ChatEvent.createUser(id: $0, name: $0, createdAt: 1_700_000_000_000) }
        events.append(.createChat(id: "group", title: "Group", createdAt: 1_700_000_000_000, members: users))
        for result in try store.apply(events) { _ = try result.get() }
        _ = try store.checkpoint(truncate: true)
    }

    static func user(_ i: Int) -> String {
        "user-" + String(i)
    }

    /// One post in its own transaction, as the engine commits one in lockstep.
    func post() throws {
        posted += 1
        let message = Message(
            id: "guard-\(posted)", chat: "group", sender: Self.user(posted % members), text: "hello from the guard",
            sentAt: 1_800_000_000_000 + Int64(posted))
        for result in try store.apply([.postMessage(message)]) { _ = try result.get() }
    }
}
