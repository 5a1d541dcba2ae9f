import ChatModel
import Foundation
import Testing
import JSONCodec
import TestSupport
import WireProtocol

/// Every error of docs/PROTOCOL.md through the real daemon: one error response per bad line (id null when
/// unreadable), none for a well-formed notification, nothing changed, and the daemon keeps
/// running with what it accepted before intact.
@Suite struct ProtocolErrorTests {
    /// A daemon with one chat and one message accepted before the bad lines.
    static func daemonWithData() throws -> Daemon {
        let daemon = try Daemon()
        try daemon.call("chat.create", ["chat": "keep", "title": "Keep", "createdAt": 1_000])
        try daemon.call("message.post", ["chat": "keep", "id": "k1", "sender": "ann", "text": "first", "sentAt": 2_000])
        return daemon
    }

    /// The accepted data is intact and the daemon answers.
    static func expectIntact(_ daemon: Daemon, chats: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(daemon.isRunning, sourceLocation: sourceLocation)
        let list = try daemon.call("chats.list")
        #expect(list["total"] == .integer(chats), sourceLocation: sourceLocation)
        let keep = try (list["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }.first { $0.id == "keep" }
        #expect(keep?.lastMessage?.id == "k1" && keep?.unread == 1 && keep?.title == "Keep", sourceLocation: sourceLocation)
        #expect(daemon.malformed.isEmpty, sourceLocation: sourceLocation)
    }

    /// Sends one line and returns the one response it gets (waiting for the response count to grow).
    static func answer(to bytes: [UInt8], from daemon: Daemon) throws -> JSONValue {
        let before = daemon.responseCount
        daemon.send(raw: bytes + [0x0A])
        try daemon.waitForResponses(atLeast: before + 1)
        return daemon.responses[before]
    }

    @discardableResult
    static func expectError(
        _ line: String, code: Int, id: JSONValue = .null, _ daemon: Daemon, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RPCFailure? {
        try expectError(bytes: Array(line.utf8), code: code, id: id, daemon, sourceLocation: sourceLocation)
    }

    @discardableResult
    static func expectError(
        bytes: [UInt8], code: Int, id: JSONValue = .null, _ daemon: Daemon, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RPCFailure? {
        let response = try answer(to: bytes, from: daemon)
        let shown = String(decoding: bytes.prefix(200), as: UTF8.self)
        #expect(response["id"] == id, "id of the answer to \(shown)", sourceLocation: sourceLocation)
        let reply = try Daemon.reply(from: response)
        #expect(reply.failure?.code == code, "\(shown) → \(reply)", sourceLocation: sourceLocation)
        #expect(daemon.isRunning, "the daemon died after \(shown)", sourceLocation: sourceLocation)
        return reply.failure
    }

    @Test func parseErrorsForBadJSONAndBadUTF8() throws {
        let daemon = try Self.daemonWithData()
        // The id is echoed when it can be read before the damage, else it is null.
        for (line, id) in [
            (#"{"jsonrpc":"2.0","id":1,"method":"#, 1 as JSONValue), ("{bad}", .null),
            (#"{"jsonrpc":"2.0","id":2,"method":"chats.list",}"#, 2), ("nul", .null),
            (#"{"jsonrpc":"2.0","id":3,"method":"chats.list"} trailing"#, 3),
            (#"{"jsonrpc":"2.0","id":'4',"method":"chats.list"}"#, .null),
        ] {
            _ = try Self.expectError(line, code: -32700, id: id, daemon)
        }
        // Invalid UTF-8 inside an otherwise valid write: a parse error, and nothing is written.
        let prefix = Array(#"{"jsonrpc":"2.0","id":5,"method":"chat.create","params":{"chat":"u","title":"x"#.utf8)
        let suffix = Array(#""}}"#.utf8)
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0x00]] {
            try Self.expectError(bytes: prefix + bad + suffix, code: -32700, id: 5, daemon)
        }
        try Self.expectError(bytes: [0xFE, 0xFF, 0x7B, 0x7D], code: -32700, daemon)
        // Nesting far deeper than the parser allows is an error, not a stack overflow.
        try Self.expectError(String(repeating: "[", count: 200_000), code: -32700, daemon)
        try Self.expectError(
            #"{"jsonrpc":"2.0","id":6,"method":"chats.list","params":{"x":"# + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000) + "}}",
            code: -32700, id: 6, daemon)
        // A number too large for a double is JSON: an invalid param, not a parse error.
        try Self.expectError(#"{"jsonrpc":"2.0","id":7,"method":"chats.list","params":{"limit":1e999}}"#, code: -32602, id: 7, daemon)
        try Self.expectIntact(daemon)
        #expect(try daemon.call("chats.locate", ["ids": ["u"]])["indices"]?["u"] == .null)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func invalidRequests() throws {
        let daemon = try Self.daemonWithData()
        for line in ["[]", #"[{"jsonrpc":"2.0","id":1,"method":"server.stats"}]"#, "42", #""text""#, "null", "true", "{}"] {
            _ = try Self.expectError(line, code: -32600, daemon)
        }
        _ = try Self.expectError(#"{"id":5,"method":"server.stats"}"#, code: -32600, id: 5, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"1.0","id":6,"method":"server.stats"}"#, code: -32600, id: 6, daemon)
        _ = try Self.expectError(#"{"jsonrpc":2.0,"id":"six","method":"server.stats"}"#, code: -32600, id: "six", daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":7,"method":42}"#, code: -32600, id: 7, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":8,"method":null}"#, code: -32600, id: 8, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":9}"#, code: -32600, id: 9, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":10,"method":"server.stats","params":"x"}"#, code: -32600, id: 10, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":[1],"method":"server.stats"}"#, code: -32600, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":{"a":1},"method":"server.stats"}"#, code: -32600, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":true,"method":"server.stats"}"#, code: -32600, daemon)
        // Not a well-formed notification (the method is not a string): it is answered, with id null.
        _ = try Self.expectError(#"{"jsonrpc":"2.0","method":42}"#, code: -32600, daemon)
        // A write that is not a valid request changes nothing.
        _ = try Self.expectError(#"{"jsonrpc":"2.1","id":11,"method":"chat.create","params":{"chat":"v","title":"V"}}"#, code: -32600, id: 11, daemon)
        try Self.expectIntact(daemon)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func unknownMethods() throws {
        let daemon = try Self.daemonWithData()
        let failure = try Self.expectError(#"{"jsonrpc":"2.0","id":1,"method":"chat.explode","params":{"chat":"keep"}}"#, code: -32601, id: 1, daemon)
        #expect(failure?.message.contains("chat.explode") == true)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":2,"method":""}"#, code: -32601, id: 2, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":3,"method":"Chats.List"}"#, code: -32601, id: 3, daemon)
        _ = try Self.expectError(#"{"jsonrpc":"2.0","id":4,"method":"feed.batch","params":{}}"#, code: -32601, id: 4, daemon)
        try Self.expectIntact(daemon)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func invalidParamsNameTheField() throws {
        let daemon = try Self.daemonWithData()
        let subscription = try FeedMirror(daemon: daemon, maxInFlight: 1)
        let cases: [(method: String, params: JSONValue, field: String)] = [
            ("chat.create", [:], "chat"),
            ("chat.create", ["chat": "x"], "title"),
            ("chat.create", ["chat": "x", "title": 5], "title"),
            ("chat.create", ["chat": "x", "title": "X", "createdAt": "soon"], "createdAt"),
            ("chat.create", ["chat": "", "title": "X"], "chat"),
            ("chat.create", ["chat": .string(String(repeating: "x", count: 129)), "title": "X"], "chat"),
            ("chat.create", ["chat": "x", "title": "X", "bogus": 1], "bogus"),
            ("chat.rename", ["chat": "keep"], "title"),
            ("chat.remove", ["chat": 7], "chat"),
            ("chat.markRead", [:], "chat"),
            ("message.post", ["chat": "keep", "id": "n1", "sender": "ann", "text": "hi"], "sentAt"),
            ("message.post", ["chat": "keep", "id": "n1", "sender": "ann", "text": "hi", "sentAt": .number(JSONNumber(1.5)!)], "sentAt"),
            ("message.post", ["chat": "keep", "id": "n1", "sender": "ann", "sentAt": 3_000], "text"),
            ("message.post", ["chat": "keep", "id": 9, "sender": "ann", "text": "hi", "sentAt": 3_000], "id"),
            ("message.edit", ["id": "k1"], "text"),
            ("message.delete", [:], "id"),
            ("chats.list", ["limit": -1], "limit"),
            ("chats.list", ["offset": "a"], "offset"),
            ("chats.locate", [:], "ids"),
            ("chats.locate", ["ids": "keep"], "ids"),
            ("messages.list", ["chat": "keep", "limit": "all"], "limit"),
            ("feed.subscribe", ["limit": 0], "limit"),
            ("feed.subscribe", ["maxInFlight": -1], "maxInFlight"),
            ("feed.ack", ["subscription": .string(subscription.subscription)], "seq"),
            ("feed.ack", ["subscription": .string(subscription.subscription), "seq": 1], "seq"),  // not sent yet
            ("feed.ack", ["subscription": .string(subscription.subscription), "seq": -1], "seq"),
            ("feed.unsubscribe", [:], "subscription"),
            ("server.stats", ["verbose": true], "verbose"),
            ("chats.list", [1, 2], "params"),
            ("chat.create", ["chat": "x", "title": "X", "createdAt": .number(JSONNumber(9.3e18)!)], "createdAt"),
            ("chats.list", ["limit": 10_001], "limit"),
            ("message.post", ["chat": "keep", "id": "n1", "sender": "ann", "text": "hi", "sentAt": 3_000, "chat ": "x"], "chat "),
        ]
        for (method, params, field) in cases {
            let reply = try daemon.request(method, params)
            let failure = reply.failure
            #expect(failure?.code == -32602, "\(method) \(params) → \(reply)")
            #expect(failure?.message.contains(field) == true, "\(method) \(params): the message '\(failure?.message ?? "")' does not name \(field)")
            #expect(failure?.data?["field"]?.stringValue?.contains(field) ?? true, "\(method) \(params): data \(failure?.data.map { "\($0)" } ?? "none")")
        }
        try Self.expectIntact(daemon)
        // No notification was caused by any of it.
        _ = try daemon.call("server.stats")
        #expect(try subscription.catchUp(daemon) == 0)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func notFoundAndConflicts() throws {
        let daemon = try Self.daemonWithData()
        let notFound: [(String, JSONValue)] = [
            ("chat.rename", ["chat": "nope", "title": "X"]),
            ("chat.remove", ["chat": "nope"]),
            ("chat.markRead", ["chat": "nope"]),
            ("message.post", ["chat": "nope", "id": "n1", "sender": "ann", "text": "hi", "sentAt": 3_000]),
            ("message.edit", ["id": "nope", "text": "x"]),
            ("message.delete", ["id": "nope"]),
            ("feed.ack", ["subscription": "nope", "seq": 0]),
            ("feed.unsubscribe", ["subscription": "nope"]),
            ("messages.list", ["chat": "nope"]),
        ]
        for (method, params) in notFound {
            let reply = try daemon.request(method, params)
            #expect(reply.failure?.code == -32001, "\(method) \(params) → \(reply)")
        }
        // The exact repost is a duplicate, even after an edit; anything else with that id conflicts.
        try daemon.call("message.edit", ["id": "k1", "text": "edited"])
        #expect(try daemon.call("message.post", ["chat": "keep", "id": "k1", "sender": "ann", "text": "first", "sentAt": 2_000]) == ["duplicate": true])
        let conflicts: [(String, JSONValue)] = [
            ("message.post", ["chat": "keep", "id": "k1", "sender": "ann", "text": "edited", "sentAt": 2_000]),
            ("message.post", ["chat": "keep", "id": "k1", "sender": "bob", "text": "first", "sentAt": 2_000]),
            ("message.post", ["chat": "keep", "id": "k1", "sender": "ann", "text": "first", "sentAt": 2_001]),
            ("chat.create", ["chat": "keep", "title": "Again"]),
        ]
        for (method, params) in conflicts {
            let reply = try daemon.request(method, params)
            #expect(reply.failure?.code == -32002, "\(method) \(params) → \(reply)")
        }
        // The failures inside a burst (one group commit) do not undo the writes around them.
        let ids = [
            daemon.post("chat.create", ["chat": "b1", "title": "B1", "createdAt": 5_000]),
            daemon.post("message.post", ["chat": "keep", "id": "k1", "sender": "ann", "text": "other", "sentAt": 2_000]),
            daemon.post("chat.create", ["chat": "b2", "title": "B2", "createdAt": 5_001]),
            daemon.post("message.edit", ["id": "nope", "text": "x"]),
            daemon.post("chat.create", ["chat": "b3", "title": "B3", "createdAt": 5_002]),
        ]
        let codes = try ids.map { try daemon.reply(to: $0).failure?.code }
        #expect(codes == [nil, -32002, nil, -32001, nil])
        // An unsubscribed subscription is gone.
        let gone = try FeedMirror(daemon: daemon, maxInFlight: 1)
        try gone.unsubscribe(daemon)
        #expect(try daemon.request("feed.ack", ["subscription": .string(gone.subscription), "seq": 0]).failure?.code == -32001)
        #expect(try daemon.request("feed.unsubscribe", ["subscription": .string(gone.subscription)]).failure?.code == -32001)
        let list = try daemon.call("chats.list")
        #expect(list["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["b3", "b2", "b1", "keep"])
        let keep = try Chat(jsonValue: try #require(list["items"]?.arrayValue?.last))
        #expect(keep.lastMessage?.text == "edited" && keep.unread == 1, "nothing is counted twice")
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func linesOverTheLimit() throws {
        let daemon = try Self.daemonWithData()
        let limit = 1 << 20
        // A request of exactly 1 MiB (padded with spaces) is accepted…
        func padded(_ id: Int, to length: Int) -> [UInt8] {
            let head = Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"chat.create","params":{"chat":"big\#(id)","title":"T","createdAt":\#(5_000 + id)}"#.utf8)
            return head + [UInt8](repeating: 0x20, count: length - head.count - 1) + [0x7D]
        }
        let exact = try Self.answer(to: padded(1, to: limit), from: daemon)
        #expect(exact["id"] == 1 && exact["result"]?["id"] == "big1", "a line of exactly \(limit) bytes: \(exact)")
        // … and with a \r\n ending too (the \r is not part of the line).
        let crlf = try Self.answer(to: padded(2, to: limit) + [0x0D], from: daemon)
        #expect(crlf["id"] == 2 && crlf["result"] != nil)
        // One byte more is −32003 with the id read from the line's start, and nothing is written.
        let failure = try Self.expectError(bytes: padded(3, to: limit + 1), code: -32003, id: 3, daemon)
        #expect(failure?.message.contains("\(limit)") == true)
        // A much longer line, written in pieces, gets one error; the next line is read normally.
        let before = daemon.responseCount
        let huge = padded(4, to: 3 * limit)
        for start in stride(from: 0, to: huge.count, by: 100_000) {
            daemon.send(raw: Array(huge[start..<min(start + 100_000, huge.count)]))
        }
        daemon.send(raw: [0x0A])
        let after = try daemon.call("chats.locate", ["ids": ["big1", "big2", "big3", "big4"]])
        #expect(after["indices"] == ["big1": 1, "big2": 0, "big3": nil, "big4": nil])
        let answers = daemon.responses[before...]
        #expect(answers.count == 2 && answers.first?["error"]?["code"] == -32003 && answers.first?["id"] == 4)
        try Self.expectIntact(daemon, chats: 3)
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func idsAreEchoedBack() throws {
        let daemon = try Daemon()
        let ids = [
            #""abc""#, #""""#, #""é \"quoted\" \\ \n 🎉""#, #""\u0000""#, "0", "-1", "9223372036854775807",
            "-9223372036854775808", "1.5", "-0.25", "null",
        ]
        for text in ids {
            let line = #"{"jsonrpc":"2.0","id":\#(text),"method":"chats.list","params":{"limit":0}}"#
            let expected = try JSONValue(parsing: text)
            let response = try Self.answer(to: Array(line.utf8), from: daemon)
            #expect(response["id"] == expected, "id \(text) came back as \(response["id"].map { "\($0)" } ?? "nothing")")
            #expect(response["result"] != nil, "id \(text): \(response)")
            // In an error response too.
            let error = try Self.answer(to: Array(#"{"jsonrpc":"2.0","id":\#(text),"method":"nope"}"#.utf8), from: daemon)
            #expect(error["id"] == expected && error["error"] != nil, "id \(text): \(error)")
        }
        // A number written with an exponent or a fraction comes back as the same number.
        for (text, value) in [("1e3", 1000.0), ("2.50", 2.5), ("-0", 0.0)] {
            let response = try Self.answer(to: Array(#"{"jsonrpc":"2.0","id":\#(text),"method":"chats.list","params":{"limit":0}}"#.utf8), from: daemon)
            #expect(response["id"]?.numberValue?.doubleValue == value, "id \(text) came back as \(response["id"].map { "\($0)" } ?? "nothing")")
        }
        #expect(try daemon.shutDown() == .exited(0))
    }

    /// Numbers that are not 64-bit integers come back as they were written, so that a client that
    /// keeps them exactly (JavaScript BigInt, Python int, decimal ids) can match the response.
    @Test func numericIdsAreEchoedBackExactly() throws {
        let daemon = try Daemon()
        for text in ["12345678901234567890", "123456789012345678901234567890", "1.50", "2e3", "-0.0", "-0", "1e400", "-1E400"] {
            let before = daemon.rawLineCount
            let response = try Self.answer(to: Array(#"{"jsonrpc":"2.0","id":\#(text),"method":"nope"}"#.utf8), from: daemon)
            #expect(response["error"] != nil)
            let raw = daemon.rawLines(from: before).first { $0.contains("\"error\"") } ?? ""
            #expect(raw.hasPrefix(#"{"jsonrpc":"2.0","id":\#(text),"#), "id \(text) came back in \(raw)")
        }
        #expect(try daemon.shutDown() == .exited(0))
    }

    /// Params by position are valid JSON-RPC 2.0 that no method takes: −32602 with the id, as
    /// docs/PROTOCOL.md says; a number beyond a double's range in params is −32602 too.
    @Test func byPositionParamsAndHugeNumbersAreInvalidParams() throws {
        let daemon = try Daemon()
        for params in ["[]", "[1]", #"["c","T"]"#] {
            let failure = try Self.expectError(
                #"{"jsonrpc":"2.0","id":7,"method":"chat.create","params":\#(params)}"#, code: -32602, id: 7, daemon)
            #expect(failure?.message.contains("named parameters") == true, "\(String(describing: failure))")
        }
        let huge = try Self.expectError(
            #"{"jsonrpc":"2.0","id":8,"method":"chats.list","params":{"limit":1e400}}"#, code: -32602, id: 8, daemon)
        #expect(huge?.message.contains("limit") == true, "\(String(describing: huge))")
        #expect(try daemon.shutDown() == .exited(0))
    }

    /// A cursor is a checked position, not a permission (docs/PROTOCOL.md): one built by a client
    /// with a valid checksum pages from the position it names, in its own chat only.
    @Test func aCursorBuiltByTheClientIsAPositionInItsChatOnly() throws {
        let daemon = try Daemon()
        for chat in ["a", "b"] {
            try daemon.call("chat.create", ["chat": .string(chat), "title": "T", "createdAt": 0])
            for index in 1...5 {
                try daemon.call("message.post", [
                    "chat": .string(chat), "id": .string("\(chat)\(index)"), "sender": "ann", "text": "hi",
                    "sentAt": .integer(Int64(index * 10)),
                ])
            }
        }
        let built = MessageCursor.encode(chat: "a", after: MessagePosition(sentAt: 30, id: "a3"))
        let page = try daemon.call("messages.list", ["chat": "a", "cursor": .string(built)])
        #expect(page["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a2", "a1"])
        let elsewhere = try daemon.request("messages.list", ["chat": "b", "cursor": .string(built)]).failure
        #expect(elsewhere?.code == -32602 && elsewhere?.data?["field"] == "cursor", "\(String(describing: elsewhere))")
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func notificationsAndBlankLinesGetNoResponse() throws {
        // At the most verbose log level: logs go to stderr, never to stdout.
        let daemon = try Daemon(extraArguments: ["--log-level", "trace"])
        try daemon.call("chat.create", ["chat": "keep", "title": "Keep", "createdAt": 1_000])
        try daemon.call("message.post", ["chat": "keep", "id": "k1", "sender": "ann", "text": "first", "sentAt": 2_000])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
        let before = daemon.responseCount
        let lines = [
            #"{"jsonrpc":"2.0","method":"no.such.method"}"#,
            #"{"jsonrpc":"2.0","method":"chat.rename","params":{"chat":"nope","title":"X"}}"#,  // not found
            #"{"jsonrpc":"2.0","method":"chat.create","params":{}}"#,  // invalid params
            #"{"jsonrpc":"2.0","method":"message.post","params":{"chat":"keep","id":"k1","sender":"ann","text":"other","sentAt":2000}}"#,  // conflict
            #"{"jsonrpc":"2.0","method":"feed.ack","params":{"subscription":"nope","seq":1}}"#,
            #"{"jsonrpc":"2.0","method":"chats.list","params":[1]}"#,
            #"{"jsonrpc":"2.0","method":"server.stats"}"#,  // a read as a notification: no answer either
            #"{"jsonrpc":"2.0","method":"chat.create","params":{"chat":"quiet","title":"Quiet","createdAt":500}}"#,  // succeeds silently
            "", "   ", "\t", "\r", " \t \r",
        ]
        daemon.send(raw: Array(lines.joined(separator: "\n").utf8) + [0x0A, 0x0A, 0x0D, 0x0A])
        let marker = daemon.post("chats.locate", ["ids": ["quiet"]])
        let located = try daemon.reply(to: marker)
        #expect(located.result?["indices"]?["quiet"] == 1, "the notification's write was applied: \(located)")
        let answers = daemon.responses[before...]
        #expect(answers.count == 1 && answers.first?["id"] == marker, "only the marker is answered: \(Array(answers))")
        _ = try daemon.call("server.stats")
        try mirror.catchUp(daemon)
        #expect(mirror.rows.map(\.id) == ["keep", "quiet"])
        try Self.expectIntact(daemon, chats: 2)
        #expect(try daemon.shutDown() == .exited(0))
        #expect(daemon.stderr.contains("notification failed"), "a failed notification is logged")
    }

    /// −32603: a group commit that cannot take the write lock (another process holds it beyond the
    /// busy timeout) fails as a whole with an internal error; the daemon goes on, and the same
    /// write succeeds once the lock is released.
    @Test func internalErrorWhenTheDatabaseStaysLocked() throws {
        let sqlite = "/usr/bin/sqlite3"
        guard FileManager.default.isExecutableFile(atPath: sqlite) else { return }
        let directory = try TemporaryDirectory()
        let config = directory.path("fast-busy.json")
        try Data(#"{"busyTimeoutMilliseconds": 50}"#.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try Daemon(directory: directory, extraArguments: ["--config", config])
        try daemon.call("chat.create", ["chat": "keep", "title": "Keep", "createdAt": 1_000])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)

        let locked = LockedBox(false)
        let locker = try ChildProcess(
            executable: sqlite, arguments: [daemon.databasePath], stderrPath: directory.path("sqlite.stderr"), lifetime: 60,
            onLine: { line in if line == Array("locked".utf8) { locked.withLock { $0 = true } } }, onEnd: {})
        locker.send(Array("BEGIN IMMEDIATE;\n.print locked\n".utf8))
        let deadline = Date(timeIntervalSinceNow: 20)
        while !locked.withLock({ $0 }) && Date() < deadline { usleep(1_000) }
        let didLock = locked.withLock { $0 }
        try #require(didLock, Comment(rawValue: "sqlite3 did not take the lock: " + locker.stderrTail()))

        let failed = [
            daemon.post("chat.create", ["chat": "w1", "title": "W1", "createdAt": 2_000]),
            daemon.post("chat.rename", ["chat": "keep", "title": "Renamed"]),
        ]
        for id in failed {
            let reply = try daemon.reply(to: id)
            #expect(reply.failure?.code == -32603, "a write while the database is locked: \(reply)")
        }
        // Reads still work meanwhile.
        #expect(try daemon.call("chats.list")["total"] == 1)

        locker.send(Array("ROLLBACK;\n.quit\n".utf8))
        locker.closeStdin()
        #expect(try locker.waitForExitOrKill(timeout: 20) == .exited(0))
        #expect(try daemon.call("chat.create", ["chat": "w1", "title": "W1", "createdAt": 2_000])["id"] == "w1")
        _ = try daemon.call("server.stats")
        try mirror.catchUp(daemon)
        #expect(mirror.rows.map(\.id) == ["w1", "keep"] && mirror.rows.last?.title == "Keep")
        #expect(try daemon.shutDown() == .exited(0))
        let check = try BuiltExecutable.run("chatfeed", ["chats", "--json", "--database", daemon.databasePath])
        #expect(check.stdout.contains("\"w1\"") && !check.stdout.contains("Renamed"), "\(check.stdout)")
    }
}

/// Values at the edges of their ranges: accepted or refused, never a crash.
@Suite struct ExtremeValueTests {
    @Test func extremeIntegersNeverCrashTheDaemon() throws {
        let daemon = try Daemon()
        let max = Int64.max
        let min = Int64.min
        try daemon.call("chat.create", ["chat": "late", "title": "L", "createdAt": .integer(max)])
        try daemon.call("chat.create", ["chat": "early", "title": "E", "createdAt": .integer(min)])
        let huge = try FeedMirror(daemon: daemon, limit: Int.max, maxInFlight: Int.max)
        let window = try FeedMirror(daemon: daemon, limit: Int.max - 1, maxInFlight: 0)
        try daemon.call("message.post", ["chat": "early", "id": "m", "sender": "s", "text": "t", "sentAt": .integer(min)])
        try daemon.call("message.edit", ["id": "m", "text": "t2", "editedAt": .integer(min)])
        try daemon.call("message.post", ["chat": "early", "id": "m2", "sender": "s", "text": "t", "sentAt": .integer(max)])
        try daemon.call("chat.create", ["chat": "mid", "title": "M", "createdAt": 0])
        // Chat ids are limited in bytes, not characters.
        #expect(try daemon.request("chat.create", ["chat": .string(String(repeating: "é", count: 64)), "title": "T", "createdAt": 0]).failure == nil)
        #expect(try daemon.request("chat.create", ["chat": .string(String(repeating: "é", count: 65)), "title": "T", "createdAt": 0]).failure?.code == -32602)
        #expect(try daemon.request("chat.create", ["chat": .string(String(repeating: "🎉", count: 33)), "title": "T", "createdAt": 0]).failure?.code == -32602)
        try daemon.call("chat.remove", ["chat": .string(String(repeating: "é", count: 64))])
        #expect(try daemon.call("chats.list", ["offset": .integer(max), "limit": 10_000])["items"] == [])
        #expect(try daemon.call("chats.list", ["offset": .integer(max - 5), "limit": 10_000])["items"] == [])
        #expect(try daemon.call("messages.list", ["chat": "early", "before": .integer(min), "limit": 10_000])["items"] == [])
        #expect(try daemon.call("messages.list", ["chat": "early", "before": .integer(max)])["items"]?.arrayValue?.count == 1)
        #expect(try daemon.request("feed.ack", ["subscription": .string(huge.subscription), "seq": .integer(max)]).failure?.code == -32602)
        _ = try FeedMirror.settle([huge, window], daemon: daemon)
        let items = try (daemon.call("chats.list")["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
        #expect(items.map(\.id) == ["early", "late", "mid"])
        #expect(huge.rows == items && window.rows == items)
        #expect(try daemon.shutDown() == .exited(0), "stderr: \(daemon.stderr.suffix(3000))")
    }
}
