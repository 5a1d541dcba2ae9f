import ChatModel
import JSONCodec
import TestSupport
import Testing
import WireProtocol

@Suite("messages.list pages without loss")
struct MessagePagingTests {
    /// Every page of `params` (plus `cursor`), following `nextCursor` until it is null.
    static func pages(_ daemon: Daemon, _ params: JSONObject) throws -> [[Message]] {
        var pages: [[Message]] = []
        var cursor = JSONValue.null
        repeat {
            var request = params
            if cursor != .null { request.append("cursor", cursor) }
            let result = try daemon.call("messages.list", .object(request))
            pages.append(try (result["items"]?.arrayValue ?? []).map { try Message(jsonValue: $0) })
            cursor = try #require(result["nextCursor"])
            #expect(cursor == .null || cursor.stringValue != nil)
        } while cursor != .null && pages.count < 1_000
        return pages
    }

    /// 1,000 messages on 7 distinct `sentAt` values, paged 13 at a time: each is seen exactly once,
    /// in (sentAt, id) descending order, and only the last page has no next cursor.
    @Test func thousandMessagesOnSevenTimes() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 0])
        try daemon.call("chat.create", ["chat": "b", "title": "B", "createdAt": 0])
        var generator = SeededGenerator(seed: 7)
        var posted: [Message] = []
        var last = JSONValue.null
        for index in (0..<1_000).shuffled(using: &generator) {
            let message = Message(
                id: "m\(index)", chat: "a", sender: "ann", text: "t\(index)", sentAt: 1_000 * Int64(index % 7))
            posted.append(message)
            last = daemon.post("message.post", [
                "chat": "a", "id": .string(message.id), "sender": "ann", "text": .string(message.text),
                "sentAt": .integer(message.sentAt),
            ])
        }
        // Another chat's messages at the same times never show up.
        last = daemon.post("message.post", ["chat": "b", "id": "other", "sender": "bob", "text": "x", "sentAt": 3_000])
        _ = try daemon.reply(to: last)

        let pages = try Self.pages(daemon, ["chat": "a", "limit": 13])
        #expect(pages.count == 77 && pages.dropLast().allSatisfy { $0.count == 13 } && pages.last?.count == 12)
        let seen = pages.flatMap { $0 }
        #expect(seen.count == 1_000 && Set(seen.map(\.id)).count == 1_000)
        #expect(seen == Self.ordered(posted))

        // `before` starts at a date; with a cursor both bounds apply, so repeating it continues.
        let older = try Self.pages(daemon, ["chat": "a", "limit": 13, "before": 3_000])
        #expect(older.flatMap { $0 } == Self.ordered(posted.filter { $0.sentAt < 3_000 }))
        #expect(try daemon.shutDown() == .exited(0))
    }

    /// (sentAt, id) descending, ids bytewise.
    static func ordered(_ messages: [Message]) -> [Message] {
        messages.sorted { left, right in
            left.sentAt != right.sentAt ? left.sentAt > right.sentAt : right.id.utf8.lexicographicallyPrecedes(left.id.utf8)
        }
    }

    /// A cursor keeps its place when messages are posted or deleted between pages.
    @Test func cursorSurvivesChanges() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 0])
        for index in 0..<6 {
            try daemon.call("message.post", ["chat": "a", "id": .string("m\(index)"), "sender": "ann", "text": "x", "sentAt": 100])
        }
        let first = try daemon.call("messages.list", ["chat": "a", "limit": 3])
        #expect(first["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["m5", "m4", "m3"])
        let cursor = try #require(first["nextCursor"])
        try daemon.call("message.delete", ["id": "m3"])
        try daemon.call("message.post", ["chat": "a", "id": "new", "sender": "ann", "text": "x", "sentAt": 200])
        let second = try daemon.call("messages.list", ["chat": "a", "limit": 3, "cursor": cursor])
        #expect(second["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["m2", "m1", "m0"])
        #expect(second["nextCursor"] == .null)
        #expect(try daemon.shutDown() == .exited(0))
    }

    /// A cursor that messages.list did not return for that chat is −32602 naming `cursor`.
    @Test func badCursors() throws {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 0])
        try daemon.call("chat.create", ["chat": "b", "title": "B", "createdAt": 0])
        for index in 0..<3 {
            try daemon.call("message.post", ["chat": "a", "id": .string("m\(index)"), "sender": "ann", "text": "x", "sentAt": 100])
        }
        let cursor = try #require(try daemon.call("messages.list", ["chat": "a", "limit": 1])["nextCursor"]?.stringValue)
        for bad in ["", "nope", "!!!!", String(cursor.dropLast()), cursor + "A", "AQ", String(cursor.dropLast(2))] {
            guard case .error(let failure) = try daemon.request("messages.list", ["chat": "a", "cursor": .string(bad)]) else {
                Issue.record("cursor \(bad) was accepted")
                continue
            }
            #expect(failure.code == -32602 && failure.data?["field"] == "cursor" && failure.message.contains("cursor"), "\(bad)")
        }
        // Another chat's cursor.
        guard case .error(let failure) = try daemon.request("messages.list", ["chat": "b", "cursor": .string(cursor)]) else {
            Issue.record("a cursor of another chat was accepted")
            return
        }
        #expect(failure.code == -32602 && failure.data?["field"] == "cursor")
        #expect(try daemon.call("messages.list", ["chat": "a", "cursor": .string(cursor)])["items"]?.arrayValue?.count == 2)
        #expect(try daemon.shutDown() == .exited(0))
    }
}
