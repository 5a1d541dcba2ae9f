import ChatModel
import JSONCodec
import Foundation
import ListDiff
import Testing
import WireProtocol

/// `feed.subscribe` with `known` through the daemon (docs/PROTOCOL.md, The live feed, "Resume with what the client has").
@Suite struct ResumeProtocolTests {
    static func known(_ rows: [Chat]) -> JSONValue {
        .array(rows.map { ["id": .string($0.id), "revision": .integer($0.revision)] })
    }

    static func list(_ daemon: Daemon) throws -> [Chat] {
        try (daemon.call("chats.list")["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
    }

    @Test func aClientThatComesBackGetsTheBatchesThenNotifications() throws {
        let daemon = try Daemon()
        for index in 0..<12 {
            try daemon.call("chat.create", ["chat": .string("c\(index)"), "title": .string("C\(index)"), "createdAt": .integer(Int64(1_000 + index))])
        }
        let first = try FeedSubscribeResult(jsonValue: daemon.call("feed.subscribe", ["limit": 10, "maxInFlight": 0]))
        guard case .items(let shown) = first.content else { Issue.record("\(first)"); return }
        #expect(shown.map(\.id) == (2..<12).reversed().map { "c\($0)" })
        try daemon.call("feed.unsubscribe", ["subscription": .string(first.subscription)])

        // While the client is away: c3 gets a message (to the top), c10 is removed (so c1 enters
        // the window), c7 is renamed, and a chat created in the past stays below the window.
        try daemon.call("message.post", ["chat": "c3", "id": "m1", "sender": "ann", "text": "hi", "sentAt": 5_000])
        try daemon.call("chat.remove", ["chat": "c10"])
        try daemon.call("chat.rename", ["chat": "c7", "title": "C7!"])
        try daemon.call("chat.create", ["chat": "old", "title": "Old", "createdAt": 10])

        let cursor = daemon.notificationCount
        let result = try daemon.call("feed.subscribe", ["limit": 10, "maxInFlight": 1, "known": Self.known(shown)])
        #expect(result["items"] == nil && result["seq"] == 0)
        let resumed = try FeedSubscribeResult(jsonValue: result)
        guard case .batches(let batches) = resumed.content else { Issue.record("\(result)"); return }
        #expect(batches.count == 2)
        var rows = shown
        for batch in batches { rows = try UIKitBatchModel.apply(batch, to: rows) }
        #expect(rows == Array(try Self.list(daemon).prefix(10)))
        #expect(rows.map(\.id) == ["c3", "c11", "c9", "c8", "c7", "c6", "c5", "c4", "c2", "c1"])
        #expect(batches[0].moves == [Move(from: 8, to: 0)] && batches[0].deletes == [1])
        #expect(batches[0].inserts.map(\.index) == [9])
        #expect(batches[1].updates.map(\.index) == [0, 4])

        // Later notifications continue from seq 0.
        try daemon.call("message.post", ["chat": "c1", "id": "m2", "sender": "bob", "text": "yo", "sentAt": 6_000])
        try daemon.waitForNotifications(beyond: cursor)
        let next = try #require(daemon.notifications(from: cursor).first { $0["params"]?["subscription"]?.stringValue == resumed.subscription })
        #expect(next["method"] == "feed.batch" && next["params"]?["seq"] == 1)
        rows = try UIKitBatchModel.apply(try FeedBatchParams(jsonValue: next["params"]!).batch, to: rows)
        #expect(rows.map(\.id).prefix(2) == ["c1", "c3"])
    }

    @Test func nothingChangedGivesNoBatches() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 1])
        let shown = try Self.list(daemon)
        let result = try daemon.call("feed.subscribe", ["known": Self.known(shown)])
        #expect(result["batches"] == .array([]))
    }

    @Test func badKnownIsInvalidParamsAndSubscribesNothing() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 1])
        let duplicate = try daemon.request("feed.subscribe", ["known": [["id": "a", "revision": 1], ["id": "z", "revision": 1], ["id": "a", "revision": 2]]])
        let failure = try #require(duplicate.failure)
        #expect(failure.code == -32602 && failure.data?["field"] == "known")
        #expect(failure.message.contains("\"a\""))
        let tooMany = JSONValue.array((0...10_000).map { ["id": .string("c\($0)"), "revision": 1] })
        #expect(try daemon.request("feed.subscribe", ["known": tooMany]).failure?.data?["field"] == "known")
        #expect(try daemon.request("feed.subscribe", ["known": [["id": "a"]]]).failure?.data?["field"] == "known[0].revision")
        #expect(try daemon.call("server.stats")["subscriptions"] == .array([]))
    }
}
