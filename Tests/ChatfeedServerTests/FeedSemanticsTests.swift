import ChatModel
import Foundation
import Testing
import JSONCodec
import WireProtocol

/// The feed's promises one write at a time (docs/PROTOCOL.md, Values; docs/PROTOCOL.md, The live feed): which writes yield a batch, of which
/// kind, and what the row shows afterwards.
@Suite struct FeedSemanticsTests {
    /// A daemon, a subscriber without acks, and a helper that makes one write and returns the
    /// notifications it caused (`server.stats` is the barrier: its response follows them).
    final class Fixture {
        let daemon: Daemon
        let mirror: FeedMirror
        let window: FeedMirror

        init() throws {
            daemon = try Daemon()
            try daemon.call("chat.create", ["chat": "a", "title": "A", "createdAt": 1_000])
            try daemon.call("chat.create", ["chat": "b", "title": "B", "createdAt": 2_700])
            try daemon.call("chat.create", ["chat": "c", "title": "C", "createdAt": 10_000])
            try daemon.call("message.post", ["chat": "a", "id": "m1", "sender": "ann", "text": "first", "sentAt": 3_000])
            try daemon.call("message.post", ["chat": "a", "id": "m2", "sender": "bob", "text": "late", "sentAt": 2_500])
            mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
            window = try FeedMirror(daemon: daemon, limit: 1, maxInFlight: 0)
        }

        /// The batches of the full subscription that `write` caused: (structural, pure-update) counts.
        func write(_ method: String, _ params: JSONValue) throws -> (structural: Int, updates: Int, moves: Int) {
            let before = (mirror.structuralBatches, mirror.updateBatches, mirror.moves, mirror.resets)
            try daemon.call(method, params)
            _ = try daemon.call("server.stats")
            try mirror.catchUp(daemon)
            try window.catchUp(daemon)
            #expect(mirror.resets == before.3, "\(method) \(params) caused a reset")
            return (mirror.structuralBatches - before.0, mirror.updateBatches - before.1, mirror.moves - before.2)
        }

        func row(_ id: String) -> Chat? { mirror.rows.first { $0.id == id } }
        var order: [String] { mirror.rows.map(\.id) }

        func expectMatchesTheList(sourceLocation: SourceLocation = #_sourceLocation) throws {
            let items = try (daemon.call("chats.list")["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
            #expect(mirror.rows == items, sourceLocation: sourceLocation)
            #expect(window.rows == Array(items.prefix(1)), sourceLocation: sourceLocation)
        }
    }

    @Test func writesThatChangeNothingShownSendNothing() throws {
        let f = try Fixture()
        #expect(f.order == ["c", "a", "b"])
        // Read, so that deleting one of a's messages changes no unread count.
        _ = try f.write("chat.markRead", ["chat": "a"])
        _ = try f.write("chat.pin", ["chat": "b"])
        let revisions = f.mirror.rows.map(\.revision)
        for (method, params) in [
            ("chat.rename", ["chat": "b", "title": "B"]),  // the same title
            ("chat.markRead", ["chat": "b"]),  // nothing unread
            ("message.edit", ["id": "m2", "text": "late, edited"]),  // not the last message
            ("message.delete", ["id": "m2"]),  // not the last message, read
            ("chat.pin", ["chat": "b"]),  // pinned already
            ("chat.unpin", ["chat": "a"]),  // not pinned
            ("chat.setPinned", ["list": "main", "chats": ["b"]]),  // the pins as they are
            ("chat.unarchive", ["chat": "a"]),  // in main already
            ("chat.unmute", ["chat": "a"]),  // not muted
            ("message.post", ["chat": "a", "id": "m2", "sender": "bob", "text": "late", "sentAt": 2_500]),  // duplicate of a deleted one
            ("message.post", ["chat": "a", "id": "m1", "sender": "ann", "text": "first", "sentAt": 3_000]),  // duplicate
            ("message.edit", ["id": "m1", "text": "first"]),  // the same text
        ] as [(String, JSONValue)] {
            let caused = try f.write(method, params)
            #expect(caused.structural == 0 && caused.updates == 0, "\(method) \(params) changed nothing shown, yet caused \(caused)")
        }
        #expect(f.mirror.rows.map(\.revision) == revisions)
        try f.expectMatchesTheList()
        #expect(try f.daemon.shutDown() == .exited(0))
    }

    @Test func eachDisplayedChangeIsOneBatchOfTheRightKind() throws {
        let f = try Fixture()
        var revision = try #require(f.row("a")).revision

        // Content changes in place: one pure-update batch, a higher revision.
        var caused = try f.write("chat.rename", ["chat": "a", "title": "A2"])
        #expect(caused.structural == 0 && caused.updates == 1 && f.row("a")?.title == "A2")
        #expect(f.row("a")!.revision > revision)
        revision = f.row("a")!.revision
        caused = try f.write("chat.markRead", ["chat": "a"])
        #expect(caused.structural == 0 && caused.updates == 1 && f.row("a")?.unread == 0 && f.row("a")!.revision > revision)
        caused = try f.write("message.edit", ["id": "m1", "text": "first, edited", "editedAt": 4_000])
        #expect(caused.structural == 0 && caused.updates == 1 && f.row("a")?.lastMessage?.text == "first, edited")

        // A late message is counted but does not move the chat.
        caused = try f.write("message.post", ["chat": "a", "id": "m3", "sender": "cy", "text": "very late", "sentAt": 100])
        #expect(caused.structural == 0 && caused.updates == 1)
        #expect(f.row("a")?.unread == 1 && f.row("a")?.lastMessage?.id == "m1" && f.order == ["c", "a", "b"])

        // Deleting the last message makes the previous one last: the chat moves down (one move,
        // then the deferred update with the new content).
        caused = try f.write("message.delete", ["id": "m1"])
        #expect(caused.structural == 1 && caused.updates == 1 && caused.moves == 1, "\(caused)")
        #expect(f.order == ["c", "b", "a"] && f.row("a")?.lastMessage?.id == "m2" && f.row("a")?.lastMessageDate == 2_500)
        #expect(f.row("a")?.unread == 1, "a delete leaves unread as it is")

        // The last message may be older than the chat: lastMessageDate is still its sentAt.
        caused = try f.write("message.post", ["chat": "c", "id": "m4", "sender": "ann", "text": "old news", "sentAt": 50])
        #expect(caused.moves == 1 && f.order == ["b", "a", "c"] && f.row("c")?.lastMessageDate == 50)
        // With no message left, lastMessageDate is createdAt again.
        caused = try f.write("message.delete", ["id": "m4"])
        #expect(caused.moves == 1 && f.order == ["c", "b", "a"] && f.row("c")?.lastMessage == nil && f.row("c")?.lastMessageDate == 10_000)

        // A new message takes the chat to the top: one move up, never many moves down.
        caused = try f.write("message.post", ["chat": "a", "id": "m5", "sender": "ann", "text": "new", "sentAt": 20_000])
        #expect(caused.moves == 1 && f.order == ["a", "c", "b"])

        // Equal dates: the id decides, bytewise.
        caused = try f.write("message.post", ["chat": "b", "id": "m6", "sender": "ann", "text": "tie", "sentAt": 20_000])
        #expect(f.order == ["a", "b", "c"])
        caused = try f.write("chat.create", ["chat": "B", "title": "Upper case", "createdAt": 20_000])
        #expect(caused.structural == 1 && f.order == ["B", "a", "b", "c"], "\(f.order)")

        // A removed chat's id, used again, is a new chat.
        _ = try f.write("chat.remove", ["chat": "c"])
        #expect(f.order == ["B", "a", "b"])
        _ = try f.write("chat.create", ["chat": "c", "title": "C again", "createdAt": 30_000])
        #expect(f.order == ["c", "B", "a", "b"] && f.row("c")?.title == "C again" && f.row("c")?.unread == 0)
        try f.expectMatchesTheList()
        #expect(try f.daemon.shutDown() == .exited(0))
    }

    /// The default `maxInFlight` (1) applies when a subscription names none; a window follows the
    /// chats entering and leaving it.
    @Test func defaultsAndWindows() throws {
        let daemon = try Daemon()
        for index in 0..<5 {
            try daemon.call("chat.create", ["chat": .string("c\(index)"), "title": "T", "createdAt": .integer(index)])
        }
        let result = try daemon.call("feed.subscribe", ["limit": 2])
        #expect(result["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["c4", "c3"] && result["total"] == 5)
        let stats = try daemon.call("server.stats")
        #expect(stats["subscriptions"]?.arrayValue?.first?["maxInFlight"] == 1, "\(stats)")
        #expect(try daemon.shutDown() == .exited(0))
    }
}
