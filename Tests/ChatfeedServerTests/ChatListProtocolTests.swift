import ChatModel
import Foundation
import JSONCodec
import TestSupport
import Testing
import WireProtocol

/// The list methods and params of docs/PROTOCOL.md through the daemon: errors name the field and change
/// nothing; a muted chat's message reaches a window it is outside of as an empty batch with the
/// new counters.
@Suite struct ChatListProtocolTests {
    static func error(_ daemon: Daemon, _ method: String, _ params: JSONValue) throws -> RPCFailure? {
        if case .error(let failure) = try daemon.request(method, params) { return failure }
        return nil
    }

    @Test func listMethodsAndTheirErrors() throws {
        let daemon = try Daemon()
        for (id, at) in [("a", 30), ("b", 20), ("c", 10)] {
            try daemon.call("chat.create", ["chat": .string(id), "title": .string(id), "createdAt": .integer(Int64(at))])
        }
        let pinned = try Chat(jsonValue: try daemon.call("chat.pin", ["chat": "c"]))
        #expect(pinned.pinned && pinned.list == .main)
        let archived = try Chat(jsonValue: try daemon.call("chat.archive", ["chat": "b"]))
        #expect(archived.list == .archive && !archived.pinned)
        #expect(try daemon.call("chat.setPinned", ["list": "main", "chats": ["a", "c"]]) == [:])
        let list = try daemon.call("chats.list", [:])
        #expect(list["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a", "c"])
        #expect(list["total"] == 2)
        #expect(try daemon.call("chats.list", ["list": "archive"])["total"] == 1)
        #expect(try daemon.call("chats.locate", ["ids": ["b", "a"], "list": "archive"])["indices"] == ["b": 0, "a": nil])

        #expect(try Self.error(daemon, "chats.list", ["list": "trash"])?.code == -32602)
        #expect(try Self.error(daemon, "chats.list", ["list": "trash"])?.message.contains("'list'") == true)
        #expect(try Self.error(daemon, "feed.subscribe", ["unreadOnly": "yes"])?.code == -32602)
        #expect(try Self.error(daemon, "chat.setPinned", ["list": "main", "chats": ["a", "b"]])?.message.contains("chats[1]") == true)
        #expect(try Self.error(daemon, "chat.setPinned", ["list": "main", "chats": ["a", "a"]])?.code == -32602)
        #expect(try Self.error(daemon, "chat.setPinned", ["chats": ["a"]])?.message.contains("'list'") == true)
        #expect(try Self.error(daemon, "chat.mute", ["chat": "nope"])?.code == -32001)
        for id in ["x1", "x2", "x3"] {  // with a and c: five pins in main
            try daemon.call("chat.create", ["chat": .string(id), "title": "x", "createdAt": 1])
            try daemon.call("chat.pin", ["chat": .string(id)])
        }
        let limit = try Self.error(daemon, "chat.pin", ["chat": "b"])
        #expect(limit == nil, "the archive has its own pins")
        try daemon.call("chat.create", ["chat": "x5", "title": "x", "createdAt": 1])
        let conflict = try Self.error(daemon, "chat.pin", ["chat": "x5"])
        #expect(conflict?.code == -32002 && conflict?.message.contains("5") == true, "\(String(describing: conflict))")
        #expect(try daemon.shutDown() == .exited(0))
    }

    @Test func countsOnlyChangesReachAWindowAsEmptyBatches() throws {
        let daemon = try Daemon()
        for (id, at) in [("a", 30), ("b", 20)] {
            try daemon.call("chat.create", ["chat": .string(id), "title": .string(id), "createdAt": .integer(Int64(at))])
        }
        try daemon.call("chat.mute", ["chat": "b"])
        let window = try FeedMirror(daemon: daemon, limit: 1, maxInFlight: 0)
        let unread = try FeedMirror(daemon: daemon, view: ChatListView(list: .main, unreadOnly: true), maxInFlight: 0)
        // A late message in the muted chat below the window: the window's rows stay, its counts do not.
        try daemon.call("message.post", ["chat": "b", "id": "m1", "sender": "bo", "text": "hi", "sentAt": 5])
        _ = try FeedMirror.settle([window, unread], daemon: daemon)
        #expect(window.countOnlyBatches == 1 && window.rows.map(\.id) == ["a"])
        #expect(window.unread == UnreadCounters(chats: 1, messages: 1, unmutedChats: 0, unmutedMessages: 0))
        #expect(unread.rows.map(\.id) == ["b"])
        // Deleting the unread message: the chat leaves the unread-only list, the badge is gone.
        try daemon.call("message.delete", ["id": "m1"])
        _ = try FeedMirror.settle([window, unread], daemon: daemon)
        #expect(unread.rows.isEmpty && window.unread == UnreadCounters())
        #expect(try daemon.shutDown() == .exited(0))
    }
}
