import ChatModel
import Foundation
import JSONCodec
import Testing
import WireProtocol

/// Ids in queries are checked as ids in writes are (−32602 naming the field, not −32001), and
/// no id anywhere may hold a control character.
@Suite struct QueryIdentifierTests {
    static let tooLong = String(repeating: "x", count: 129)
    static let notNFC = "cafe\u{301}"

    @Test func idsInQueriesAreInvalidParams() throws {
        let daemon = try ProtocolErrorTests.daemonWithData()
        let cases: [(method: String, params: JSONValue, field: String)] = [
            ("chats.locate", ["ids": [""]], "ids[0]"),
            ("chats.locate", ["ids": ["keep", .string(Self.tooLong)]], "ids[1]"),
            ("chats.locate", ["ids": ["keep", "keep", .string(Self.notNFC)]], "ids[2]"),
            ("chats.locate", ["ids": ["a\u{7F}"]], "ids[0]"),
            ("messages.list", ["chat": ""], "chat"),
            ("messages.list", ["chat": .string(Self.tooLong)], "chat"),
            ("messages.list", ["chat": .string(Self.notNFC)], "chat"),
            ("messages.list", ["chat": "\u{1B}[2J"], "chat"),
            ("feed.subscribe", ["known": [["id": "keep", "revision": 1], ["id": "", "revision": 1]]], "known[1].id"),
            ("feed.subscribe", ["known": [["id": "a\u{0}", "revision": 1]]], "known[0].id"),
            // Writes: control characters (C0, DEL, C1) in any id.
            ("chat.create", ["chat": "bad\u{0}id", "title": "T"], "chat"),
            ("chat.create", ["chat": "bell\u{7}", "title": "T"], "chat"),
            ("chat.create", ["chat": "c1\u{9B}31m", "title": "T"], "chat"),
            ("chat.rename", ["chat": "new\nline", "title": "T"], "chat"),
            ("message.post", ["chat": "keep", "id": "m\u{1B}", "sender": "ann", "text": "hi", "sentAt": 3_000], "id"),
            ("message.edit", ["id": "m\u{85}", "text": "x"], "id"),
            ("message.delete", ["id": "\u{1F}"], "id"),
        ]
        for (method, params, field) in cases {
            let reply = try daemon.request(method, params)
            #expect(reply.failure?.code == -32602, "\(method) \(params) → \(reply)")
            #expect(reply.failure?.data?["field"] == .string(field), "\(method) \(params) → \(reply)")
            #expect(reply.failure?.message.contains(field) == true, "\(method): \(reply)")
        }
        // A valid id that does not exist is still not found, and control characters in texts and
        // titles (not ids) are stored as they are.
        #expect(try daemon.request("messages.list", ["chat": "nope"]).failure?.code == -32001)
        #expect(try daemon.call("chats.locate", ["ids": ["nope"]])["indices"] == ["nope": .null])
        try daemon.call("chat.rename", ["chat": "keep", "title": "Keep"])
        try ProtocolErrorTests.expectIntact(daemon)
        #expect(try daemon.shutDown() == .exited(0))
    }

    /// The daemon's log lines (stderr) carry request content made inert, like every other
    /// human-readable output.
    @Test func logLinesAreSafeForATerminal() throws {
        let daemon = try Daemon()
        daemon.notify("\u{1B}]0;pwned\u{7}\u{1B}[2J", ["x": 1])
        #expect(try daemon.call("chats.list")["total"] == 0)
        #expect(try daemon.shutDown() == .exited(0))
        let log = daemon.stderr
        #expect(log.contains("notification failed") && log.contains("␛]0;pwned␇␛[2J"), "\(log)")
        #expect(!log.unicodeScalars.contains("\u{1B}") && !log.unicodeScalars.contains("\u{7}"), "\(log.debugDescription)")
    }
}
