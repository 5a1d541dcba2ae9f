// This file imports ChatfeedClient and nothing else of the package: what an app names must come
// with it (`Chat`, `ChatList`, `UnreadCounters`, `FeedUpdate`…).
import ChatfeedClient
import Foundation
import Testing
import TestSupport

/// The README's client example, as written there (`theReadmeShowsTheExampleAsTested` checks that
/// the README holds the lines between the markers). `show` is the app's code.
func readmeClientExample(path: String, show: @escaping @Sendable (FeedUpdate) async -> Void) async throws {
    // BEGIN README client example
    let client = try await ChatClient(transport: InProcessTransport(database: path))
    try await client.createChat("general", title: "General")
    try await client.postMessage(chat: "general", id: "m1", sender: "ann", text: "hi", sentAt: 1_763_884_800_000)

    let feed = try await client.subscribe(SubscriptionOptions(limit: 50))
    for try await update in feed {  // asking for the next update acknowledges this one
        await show(update)          // data source = update.chats; animate update.steps (or reload)
    }
    await client.close()            // the loop ends when its task is cancelled
    // END README client example
}

@Suite(.hangGuard) struct ReadmeExampleTests {
    /// Before the fix the default acknowledgement was manual: this loop got the list and one
    /// batch, then nothing more.
    @Test func theReadmesClientExampleKeepsGettingUpdates() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("chats.sqlite")
        let seen = LockedBox<[[String]]>([])
        let app = Task { try await readmeClientExample(path: path) { update in seen.withLock { $0.append(update.chats.map(\.id)) } } }
        func waitFor(_ rows: [String]) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while seen.withLock({ $0.last }) != rows {
                guard ContinuousClock.now < deadline else {
                    throw ScriptError("the example's loop shows \(seen.withLock { $0 }), not \(rows)")
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        try await waitFor(["general"])
        // Another writer on the same file: three more updates reach the loop.
        let writer = try await ChatClient(transport: InProcessTransport(database: path))
        try await writer.createChat("random", title: "Random", createdAt: 1_763_884_900_000)
        try await waitFor(["random", "general"])
        try await writer.postMessage(chat: "general", id: "m2", sender: "bob", text: "again", sentAt: 1_763_885_000_000)
        try await waitFor(["general", "random"])
        try await writer.postMessage(chat: "random", id: "m3", sender: "bob", text: "and", sentAt: 1_763_885_100_000)
        try await waitFor(["random", "general"])
        await writer.close()
        app.cancel()
        _ = try? await app.value
    }

    @Test func theReadmeShowsTheExampleAsTested() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let example = source.components(separatedBy: "// BEGIN README client example\n")[1]
            .components(separatedBy: "    // END README client example")[0]
            .split(separator: "\n", omittingEmptySubsequences: false).map { $0.dropFirst(4) }.joined(separator: "\n")
        let readme = try String(contentsOf: BuiltExecutable.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(example), "README.md does not show the example as tested:\n\(example)")
    }

    /// An app persists the rows it shows and resumes from them: `Chat` is `Codable`.
    @Test func chatsRoundTripThroughCodable() throws {
        let chats = [
            Chat(
                id: "general", title: "General", createdAt: 1, lastMessage: LastMessage(id: "m1", sender: "ann", text: "hi", sentAt: 2),
                lastMessageDate: 2, unread: 3, revision: 4, list: .archive, pinOrder: 2, muted: true),
            Chat(id: "empty", title: "", createdAt: -5, lastMessage: nil, lastMessageDate: -5, unread: 0, revision: 1),
        ]
        let data = try JSONEncoder().encode(chats)
        #expect(try JSONDecoder().decode([Chat].self, from: data) == chats)
        let counters = UnreadCounters()
        #expect(try JSONDecoder().decode(UnreadCounters.self, from: JSONEncoder().encode(counters)) == counters)
    }
}
