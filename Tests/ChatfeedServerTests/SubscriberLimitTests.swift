import ChatModel
import Foundation
import JSONCodec
import Testing
import TestSupport
import WireProtocol

/// The daemon's subscriber limits through the wire: −32005 over `maxSubscriptions`, and a
/// waiting window that falls far behind keeps its rows instead of tracking every chat, and is
/// never reset for it.
@Suite struct SubscriberLimitTests {
    static func daemon(config: String) throws -> Daemon {
        let directory = try TemporaryDirectory()
        let path = directory.path("limits.json")
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        return try Daemon(directory: directory, extraArguments: ["--config", path])
    }

    @Test func oneSubscriptionOverTheCapIsLimitReached() throws {
        let daemon = try Self.daemon(config: #"{"maxSubscriptions": 2}"#)
        let first = try FeedMirror(daemon: daemon, limit: 5, maxInFlight: 1)
        _ = try FeedMirror(daemon: daemon, maxInFlight: 0)
        let refused = try daemon.request("feed.subscribe", ["limit": 5])
        #expect(refused.failure?.code == -32005, "\(refused)")
        #expect(refused.failure?.data?["setting"] == "maxSubscriptions" && refused.failure?.data?["limit"] == 2)
        #expect(refused.failure?.message.contains("too many subscriptions") == true)
        #expect(try daemon.call("server.stats")["subscriptions"]?.arrayValue?.count == 2)
        try first.unsubscribe(daemon)
        _ = try FeedMirror(daemon: daemon, limit: 5, maxInFlight: 1)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func aWindowFarBehindGetsABatchNotAReset() throws {
        let daemon = try Self.daemon(config: #"{"maxPendingChats": 20}"#)
        for index in 0..<60 {
            _ = daemon.post("chat.create", ["chat": .string("c\(index)"), "title": "T", "createdAt": .integer(Int64(index))])
        }
        let window = try FeedMirror(daemon: daemon, limit: 5, maxInFlight: 1)
        // The first change is sent; the window then waits for its ack while 50 more chats change.
        try daemon.call("message.post", ["chat": "c0", "id": "m0", "sender": "ann", "text": "x", "sentAt": 1_000])
        for index in 1..<50 {
            try daemon.call("message.post", [
                "chat": .string("c\(index)"), "id": .string("m\(index)"), "sender": "ann", "text": "x", "sentAt": .integer(1_000 + Int64(index)),
            ])
        }
        let stats = try daemon.call("server.stats")
        let entry = try #require(stats["subscriptions"]?.arrayValue?.first)
        #expect(entry["resetPending"] == false && entry["pendingChats"] == 0, "\(stats)")
        let before = daemon.notificationCount
        _ = try FeedMirror.settle([window], daemon: daemon)
        #expect(!daemon.notifications(from: before).contains { $0["method"] == "feed.reset" })
        #expect(daemon.notifications(from: before).contains { $0["method"] == "feed.batch" })
        #expect(window.rows.map(\.id) == ["c49", "c48", "c47", "c46", "c45"])
        #expect(stats["chats"] == 60 && stats["messages"] == 50, "\(stats)")
        #expect(try daemon.shutDown() == .exited(0))
    }
}
