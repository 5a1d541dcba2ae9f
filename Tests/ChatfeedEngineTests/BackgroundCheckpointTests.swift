import ChatStore
import ChatfeedEngine
import Foundation
import JSONCodec
import Testing
import TestSupport

/// The engine's background checkpoint starts early as its log grows (`checkpointEarlyPages`),
/// observed by the database file's size: the log's pages land there only through a checkpoint,
/// and the writer's own one (at `autoCheckpointPages`, far off here) does not run.
@Suite struct BackgroundCheckpointTests {
    /// Posts of 3,000 characters, each answered before the next (a commit each), until the
    /// database file grows or `posts` were written; returns whether it grew.
    static func fileGrows(earlyPages: Int, posts: Int) async throws -> Bool {
        let directory = try TemporaryDirectory()
        let path = directory.path("early.sqlite")
        let engine = try ChatEngine(options: EngineOptions(
            databasePath: path, store: StoreOptions(durability: .normal, autoCheckpointPages: 100_000),
            checkpointIntervalMilliseconds: 60_000, checkpointEarlyPages: earlyPages))
        defer { engine.stop(); engine.waitUntilStopped() }
        let client = SessionClient(engine.openInProcessSession())
        _ = try await client.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1000])
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0 }
        let before = size()
        let text = String(repeating: "x", count: 3000)
        for post in 0..<posts {
            _ = try await client.result("message.post", [
                "chat": "a", "id": .string("m\(post)"), "sender": "me", "text": .string(text),
                "sentAt": .integer(Int64(2000 + post)),
            ])
        }
        // The checkpointer runs on a thread of its own: up to 5 s for a busy machine.
        for _ in 0..<500 where size() <= before { try await Task.sleep(for: .milliseconds(10)) }
        return size() > before
    }

    @Test func pastTheEarlyPointTheLogIsCopiedWithoutWaitingForTheInterval() async throws {
        // 60 posts of about a page of text each: well past 40 pages of log, far from the writer's
        // 100,000, and the interval is a minute.
        #expect(try await Self.fileGrows(earlyPages: 40, posts: 60))
        // Off, the same posts leave the file as it was: the early point is what copied them.
        #expect(try await !Self.fileGrows(earlyPages: 0, posts: 60))
    }
}
